// localStorage behind a prefix, and quiet when storage is unavailable (private modes, blocked cookies).

const PREFIX = 'pomodoro.';

export function load(key, fallback = null) {
  try {
    const value = localStorage.getItem(PREFIX + key);
    return value === null ? fallback : value;
  } catch {
    return fallback;
  }
}

export function save(key, value) {
  try {
    if (value === null || value === undefined) localStorage.removeItem(PREFIX + key);
    else localStorage.setItem(PREFIX + key, String(value));
  } catch {
    // Nothing to do: the page works without memory.
  }
}

/** The resume token for a room is kept per room, so two rooms in two tabs never mix them up. */
export const tokenKey = (room) => `token.${room}`;
