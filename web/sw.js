// The service worker: keeps the page's own files so the page opens at once (and offline, where it says it is
// reconnecting), and focuses the room's tab when a notification is clicked.
//
// Files are answered from the cache straight away and fetched again behind it, so a new version shows from the
// next load on; a new version of this file (CACHE below) drops the old cache. The WebSocket, /api/ and
// /healthz are never the worker's business. Registered at the root scope by web/install.js, so the invite
// links (/r/<room>) are in its scope too; every navigation is answered with index.html, as the server does.

const CACHE = 'pomodoro-page-v6';

/** Every file of the page (Tests/browser/page_files.mjs checks this list against web/). */
const PAGE_FILES = [
  '/index.html', '/style.css', '/manifest.json', '/favicon.svg',
  '/icons/icon.svg', '/icons/icon-192.png', '/icons/icon-512.png', '/icons/maskable.svg', '/icons/maskable-512.png',
  '/icons/apple-touch-icon.png',
  '/activity.js', '/address.js', '/alerts.js', '/apitokens.js', '/alertsettings.js', '/app.js', '/clock.js', '/connection.js',
  '/connectionbanner.js', '/dom.js', '/favicon.js', '/formchecks.js', '/handoff.js', '/hosting.js', '/i18n.js', '/install.js',
  '/joinform.js', '/keys.js', '/limits.js', '/notices.js', '/render.js', '/roomcontrols.js', '/roommodel.js',
  '/roomname.js', '/roomview.js', '/schedules.js', '/scheduleview.js', '/settingsform.js', '/shortcuts.js', '/sound.js', '/spoken.js',
  '/stats.js', '/statspanel.js', '/statsview.js', '/storage.js', '/toolbar.js', '/walldisplay.js', '/wording.js',
  '/webhooks.js', '/webhookview.js',
];

/** Whether a request is for one of the page's files (or a page address), not the API or the health check. */
function isPageRequest(url, origin) {
  if (url.origin !== origin) return false;
  return !url.pathname.startsWith('/api/') && url.pathname !== '/healthz' && url.pathname !== '/metrics'
    && url.pathname !== '/ws';
}

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(PAGE_FILES.map((f) => new Request(f, { cache: 'no-cache' }))))
    .then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (!isPageRequest(url, self.location.origin)) return;
  // Every page address (/, /r/<room>, /?x) is the one page.
  const key = request.mode === 'navigate' ? '/index.html' : url.pathname;
  event.respondWith(caches.open(CACHE).then(async (cache) => {
    const cached = await cache.match(key);
    const fresh = fetch(key, { cache: 'no-cache' }).then((response) => {
      if (response.ok) cache.put(key, response.clone());
      return response;
    });
    if (cached) {
      event.waitUntil(fresh.catch(() => {}));
      return cached;
    }
    return fresh;
  }));
});

// A click on a notification brings back the tab of its room, else the first tab of the page, else opens one.
self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const wanted = event.notification.data?.url || '/';
  event.waitUntil(self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((tabs) => {
    const path = new URL(wanted, self.location.origin).pathname;
    const tab = tabs.find((c) => new URL(c.url).pathname === path) || tabs[0];
    if (tab) return tab.focus();
    return self.clients.openWindow(wanted);
  }));
});
