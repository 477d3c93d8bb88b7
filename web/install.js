// Installing the page: the service worker (web/sw.js) at the root scope, so that the page at / and every
// invite link (/r/<room>) is kept for offline use and notifications can be shown from the background.

/** Registers the worker; quietly nothing where there are no service workers (plain http on another host). */
export function registerServiceWorker() {
  if (!('serviceWorker' in navigator) || !window.isSecureContext) return;
  navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch(() => {
    // The page works without it: notifications fall back to the page's own, and nothing is kept offline.
  });
}
