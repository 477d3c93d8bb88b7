// The service worker (web/sw.js) under Node, in a sandbox that stands in for the worker's globals: a click
// on a notification focuses the room's tab (else the page's first tab, else opens the room); every page
// address is answered with the cached index.html and a fresh copy is fetched behind it; the API, the health
// check and other origins are left to the network; an install keeps every file, an activation drops older
// caches. test_room.py runs this when node is installed; Chromium checks the real worker.
//   node Tests/browser/service_worker.mjs

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import vm from 'node:vm';

const here = path.dirname(fileURLToPath(import.meta.url));
const source = readFileSync(path.join(here, '../../web/sw.js'), 'utf8');
const ORIGIN = 'https://focus.example';

/** A fresh worker: its listeners, and what it did to the stand-ins. */
function worker({ tabs = [], cached = {}, cacheNames = ['pomodoro-page-v0'] } = {}) {
  const listeners = {};
  const log = { focused: [], opened: [], fetched: [], put: [], deleted: [], added: [], claimed: false, skipped: false };
  const stores = new Map();
  const store = (name) => {
    if (!stores.has(name)) {
      stores.set(name, {
        match: async (key) => (key in cached ? { body: cached[key], clone() { return this; } } : undefined),
        put: async (key) => { log.put.push(key); },
        addAll: async (requests) => { log.added.push(...requests.map((r) => r.url)); },
      });
    }
    return stores.get(name);
  };
  const self = {
    location: { origin: ORIGIN },
    addEventListener: (type, fn) => { listeners[type] = fn; },
    skipWaiting: async () => { log.skipped = true; },
    clients: {
      matchAll: async (options) => {
        // An object of the sandbox's realm: compared field by field.
        assert.ok(options.type === 'window' && options.includeUncontrolled === true, JSON.stringify(options));
        return tabs.map((url) => ({ url: ORIGIN + url, focus: async () => { log.focused.push(url); } }));
      },
      openWindow: async (url) => { log.opened.push(url); },
      claim: async () => { log.claimed = true; },
    },
  };
  const context = {
    self,
    URL,
    Request: class { constructor(url, init) { this.url = url; this.init = init; } },
    caches: {
      open: async (name) => store(name),
      keys: async () => [...cacheNames, ...stores.keys()],
      delete: async (name) => { log.deleted.push(name); return true; },
    },
    fetch: async (key) => { log.fetched.push(key); return { ok: true, clone() { return this; }, body: `fresh ${key}` }; },
  };
  vm.runInNewContext(source, context);
  return { listeners, log };
}

/** Dispatches an event with waitUntil/respondWith, and waits for what the worker handed them. */
async function dispatch(listener, fields) {
  const waits = [];
  let response;
  const event = { ...fields, waitUntil: (p) => waits.push(p), respondWith: (p) => { response = p; } };
  listener(event);
  const answer = response === undefined ? undefined : await response;
  await Promise.all(waits);
  return { answer, responded: response !== undefined };
}

const checks = [];
const check = (name, fn) => checks.push([name, fn]);
const notification = (url) => ({ data: { url }, close() { this.closed = true; } });

check('a click on a notification focuses the tab of its room', async () => {
  const { listeners, log } = worker({ tabs: ['/', '/r/team-alpha', '/r/other'] });
  const n = notification(`${ORIGIN}/r/team-alpha`);
  await dispatch(listeners.notificationclick, { notification: n });
  assert.deepEqual(log.focused, ['/r/team-alpha']);
  assert.deepEqual(log.opened, []);
  assert.ok(n.closed, 'the notification stays open');
});

check('without the room\'s tab, the page\'s first tab; without any, a new one at the room', async () => {
  const one = worker({ tabs: ['/r/other'] });
  await dispatch(one.listeners.notificationclick, { notification: notification(`${ORIGIN}/r/team-alpha`) });
  assert.deepEqual(one.log.focused, ['/r/other']);
  const none = worker({ tabs: [] });
  await dispatch(none.listeners.notificationclick, { notification: notification(`${ORIGIN}/r/team-alpha`) });
  assert.deepEqual(none.log.opened, [`${ORIGIN}/r/team-alpha`]);
});

check('every page address is the cached index.html, fetched afresh behind it', async () => {
  const { listeners, log } = worker({ cached: { '/index.html': 'the page', '/app.js': 'the app' } });
  for (const url of ['/', '/r/team-alpha', '/?x=1']) {
    const { answer } = await dispatch(listeners.fetch, { request: { method: 'GET', url: ORIGIN + url, mode: 'navigate' } });
    assert.equal(answer.body, 'the page', url);
  }
  const { answer } = await dispatch(listeners.fetch, { request: { method: 'GET', url: `${ORIGIN}/app.js`, mode: 'cors' } });
  assert.equal(answer.body, 'the app');
  assert.deepEqual(log.fetched, ['/index.html', '/index.html', '/index.html', '/app.js']);
  assert.deepEqual(log.put, ['/index.html', '/index.html', '/index.html', '/app.js']);
});

check('a file not cached yet comes from the network and is kept', async () => {
  const { listeners, log } = worker({ cached: {} });
  const { answer } = await dispatch(listeners.fetch, { request: { method: 'GET', url: `${ORIGIN}/style.css`, mode: 'no-cors' } });
  assert.equal(answer.body, 'fresh /style.css');
  assert.deepEqual(log.put, ['/style.css']);
});

check('the API, the health check, the socket, other origins and POSTs are the network\'s', async () => {
  const { listeners, log } = worker({ cached: { '/index.html': 'the page' } });
  for (const request of [
    { method: 'GET', url: `${ORIGIN}/api/rooms/team-alpha/stats`, mode: 'cors' },
    { method: 'GET', url: `${ORIGIN}/healthz`, mode: 'cors' },
    { method: 'GET', url: `${ORIGIN}/metrics`, mode: 'cors' },
    { method: 'GET', url: `${ORIGIN}/ws`, mode: 'cors' },
    { method: 'GET', url: 'https://elsewhere.example/app.js', mode: 'cors' },
    { method: 'POST', url: `${ORIGIN}/r/team-alpha`, mode: 'navigate' },
  ]) {
    const { responded } = await dispatch(listeners.fetch, { request });
    assert.equal(responded, false, request.url);
  }
  assert.deepEqual(log.fetched, []);
});

check('an install keeps every page file and takes over; an activation drops older caches', async () => {
  const { listeners, log } = worker({ cacheNames: ['pomodoro-page-v0', 'something-else'] });
  await dispatch(listeners.install, {});
  assert.ok(log.added.includes('/index.html') && log.added.includes('/app.js') && log.added.includes('/manifest.json'));
  assert.ok(log.skipped);
  await dispatch(listeners.activate, {});
  assert.deepEqual(log.deleted, ['pomodoro-page-v0', 'something-else']);
  assert.ok(log.claimed);
});

let failed = 0;
for (const [name, fn] of checks) {
  try {
    await fn();
    console.log(`ok ${name}`);
  } catch (error) {
    failed += 1;
    console.log(`not ok ${name}: ${error.message}`);
  }
}
console.log(`${checks.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
