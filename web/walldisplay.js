// The wall display (`/r/<room>?view=tv`): the room observed, not joined, drawn as large as the screen allows
// with no controls, and a screen that stays awake where the browser lets a page ask (Screen Wake Lock).
// Nobody in the room sees it (docs/PROTOCOL.md, Observers).

/** Whether the address asks for the wall display. */
export function wantsWallDisplay(search = window.location.search) {
  return new URLSearchParams(search).get('view') === 'tv';
}

/** The wall display's address for a room. */
export function wallDisplayPath(room) {
  return `/r/${encodeURIComponent(room)}?view=tv`;
}

/**
 * Keeps the screen awake while the page is shown. A lock ends when the tab is hidden: it is asked for again
 * each time the page comes back. Browsers without the API (or that refuse it) let the screen sleep.
 */
export function keepScreenAwake() {
  let lock = null;
  const ask = async () => {
    if (!('wakeLock' in navigator) || document.visibilityState !== 'visible' || (lock && !lock.released)) return;
    try {
      lock = await navigator.wakeLock.request('screen');
    } catch {
      lock = null; // refused (power saving, no permission): the screen may sleep
    }
  };
  document.addEventListener('visibilitychange', ask);
  ask();
}
