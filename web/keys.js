// The room's keys, the same as pomo's (Sources/PomodoroClient/Presentation/Dashboard.swift): a pure table
// and the command a key press stands for, tested under node (Tests/browser/alerts_model.mjs). shortcuts.js
// carries the commands out; the help dialog (?) lists the table.

/** What each key does, in the order the help lists them: the keys as shown, and the words' key in i18n.js. */
export const KEY_HELP = Object.freeze([
  { keys: ['Space'], words: 'key_toggle' },
  { keys: ['S'], words: 'key_skip' },
  { keys: ['R'], words: 'key_reset' },
  { keys: ['+', '−'], words: 'key_extend' },
  { keys: ['1', '3', '5'], words: 'key_add' },
  { keys: ['T'], words: 'key_task' },
  { keys: ['A'], words: 'key_away' },
  { keys: ['M'], words: 'key_sound' },
  { keys: ['L'], words: 'key_timeLeft' },
  { keys: ['?'], words: 'key_help' },
  { keys: ['Esc'], words: 'key_close' },
]);

/**
 * The command for a key press ({ key, code, ctrlKey, metaKey, altKey }), or null. Commands: toggle, skip,
 * reset, extend (with minutes, negative shortens), task, away, sound, timeLeft (said to screen readers), help. Shift is allowed: on many layouts
 * `+` and `?` need it. With Ctrl, Alt or Meta a key is the browser's.
 */
export function commandForKey(event) {
  if (!event || event.ctrlKey || event.metaKey || event.altKey) return null;
  if (event.code === 'Space' || event.key === ' ') return { command: 'toggle' };
  switch (event.key) {
    case 's': case 'S': return { command: 'skip' };
    case 'r': case 'R': return { command: 'reset' };
    case '+': case '=': return { command: 'extend', minutes: 1 };
    case '-': case '_': return { command: 'extend', minutes: -1 };
    case '1': return { command: 'extend', minutes: 1 };
    case '3': return { command: 'extend', minutes: 3 };
    case '5': return { command: 'extend', minutes: 5 };
    case 't': case 'T': return { command: 'task' };
    case 'a': case 'A': return { command: 'away' };
    case 'm': case 'M': return { command: 'sound' };
    case 'l': case 'L': return { command: 'timeLeft' };
    case '?': return { command: 'help' };
    default: return null;
  }
}
