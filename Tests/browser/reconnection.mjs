// The page's connection (web/connection.js) on a close with 1012 ("service restart": the server restarts, or
// its cluster node drains, docs/PROTOCOL.md §11): it comes back at once, within a short random window rather
// than on its back-off, and joins again with the stored token; while the server is away it tries every 1–2 s
// (for two minutes at most). Sockets, timers and storage are fakes.
//   node Tests/browser/reconnection.mjs

import assert from 'node:assert/strict';

// What the module needs of a browser.
const stored = new Map();
globalThis.localStorage = {
  getItem: (k) => (stored.has(k) ? stored.get(k) : null),
  setItem: (k, v) => stored.set(k, String(v)),
  removeItem: (k) => stored.delete(k),
};
globalThis.window = { addEventListener() {} };
globalThis.document = { addEventListener() {}, visibilityState: 'visible' };
let timers = [];
globalThis.setTimeout = (fn, ms) => { const t = { fn, ms, cleared: false }; timers.push(t); return t; };
globalThis.clearTimeout = (t) => { if (t) t.cleared = true; };
globalThis.setInterval = () => 0;
const sockets = [];
class FakeSocket {
  static CONNECTING = 0; static OPEN = 1; static CLOSING = 2; static CLOSED = 3;
  constructor(url) { this.url = url; this.readyState = FakeSocket.CONNECTING; this.sent = []; sockets.push(this); }
  send(text) { this.sent.push(JSON.parse(text)); }
  close(code) { this.readyState = FakeSocket.CLOSED; this.closedWith = code; }
  open() { this.readyState = FakeSocket.OPEN; this.onopen?.(); }
  receive(message) { this.onmessage?.({ data: JSON.stringify(message) }); }
  closedBy(code) { this.readyState = FakeSocket.CLOSED; this.onclose?.({ code }); }
}
globalThis.WebSocket = FakeSocket;

const {
  RoomConnection, RESTART_CLOSE_CODE, RESTART_WINDOW_MS, RESTART_RETRY_MIN_MS, RESTART_RETRY_MAX_MS, RESTART_PATIENCE_MS,
  GAVE_UP_CLOSE_CODE,
} = await import('../../web/connection.js');
assert.equal(RESTART_CLOSE_CODE, 1012);

let passed = 0;
function test(name, body) { body(); passed += 1; console.log(`ok ${name}`); }

/** The retry the connection armed last (not cleared). */
const retry = () => timers.filter((t) => !t.cleared && t.ms !== 10000).at(-1);

function joinedConnection(statuses) {
  timers = [];
  const conn = new RoomConnection({ url: 'ws://h/ws', onStatus: (s, info) => statuses.push([s, info]) });
  conn.join('team', 'Ada');
  const ws = sockets.at(-1);
  ws.open();
  assert.equal(ws.sent[0].type, 'join');
  ws.receive({ type: 'welcome', you: { id: 'm1', token: 'tok-1', resumed: false }, room: {} });
  assert.equal(conn.status, 'joined');
  return conn;
}

test('a 1012 comes back within the restart window, with the stored token, as the same member', () => {
  const statuses = [];
  const conn = joinedConnection(statuses);
  const realRandom = Math.random;
  Math.random = () => 0.6;
  try { sockets.at(-1).closedBy(1012); } finally { Math.random = realRandom; }
  const [status, info] = statuses.at(-1);
  assert.equal(status, 'reconnecting');
  assert.equal(info.restart, true);
  assert.equal(retry().ms, Math.floor(0.6 * RESTART_WINDOW_MS));
  assert.ok(RESTART_WINDOW_MS <= 2000, 'a short window');
  retry().fn();
  const again = sockets.at(-1);
  again.open();
  assert.deepEqual({ type: again.sent[0].type, room: again.sent[0].room, token: again.sent[0].token },
                   { type: 'join', room: 'team', token: 'tok-1' });
  again.receive({ type: 'welcome', you: { id: 'm1', token: 'tok-1', resumed: true }, room: {} });
  assert.deepEqual(statuses.at(-1), ['joined', { resumed: true }]);
  assert.equal(conn.attempt, 0);
});

test('a 1012 is not the back-off: after failed tries it still comes back within the window', () => {
  const statuses = [];
  const conn = joinedConnection(statuses);
  // Three drops in a row (1006): the back-off has grown past the window.
  for (let i = 0; i < 3; i++) { sockets.at(-1).closedBy(1006); retry().fn(); }
  sockets.at(-1).closedBy(1006);
  assert.ok(retry().ms >= 0.75 * 500 * 2 ** 3, `the back-off: ${retry().ms}`);
  retry().fn();
  sockets.at(-1).open();
  sockets.at(-1).closedBy(1012);
  assert.ok(retry().ms < RESTART_WINDOW_MS, `within the window: ${retry().ms}`);
  assert.equal(conn.attempt, 1);
});

test('while the server is away after a 1012, every try comes 1–2 s after the last, not on the growing back-off', () => {
  const statuses = [];
  const conn = joinedConnection(statuses);
  sockets.at(-1).closedBy(1012);
  retry().fn();
  // The server is not back yet: ten tries in a row fail to connect (1006), each within 1–2 s of the last.
  const delays = [];
  for (let i = 0; i < 10; i++) {
    assert.deepEqual([statuses.at(-1)[0], statuses.at(-1)[1].restart], ['reconnecting', true], 'the try says restart');
    sockets.at(-1).closedBy(1006);
    const [status, info] = statuses.at(-1);
    assert.equal(status, 'reconnecting');
    assert.equal(info.restart, true, 'the banner says the server is restarting');
    delays.push(retry().ms);
    retry().fn();
  }
  assert.ok(delays.every((d) => d >= RESTART_RETRY_MIN_MS && d < RESTART_RETRY_MAX_MS), `${delays}`);
  assert.ok(RESTART_RETRY_MAX_MS <= 2000, 'a short pace');
  assert.ok(new Set(delays).size > 3, `jittered: ${delays}`);
  // Back: the next drop is an ordinary one again, on the back-off from its start.
  sockets.at(-1).open();
  sockets.at(-1).receive({ type: 'welcome', you: { id: 'm1', token: 'tok-1', resumed: true }, room: {} });
  assert.equal(conn.restartingSince, null);
  sockets.at(-1).closedBy(1006);
  assert.ok(retry().ms <= 625, `the back-off from its start: ${retry().ms}`);
  assert.equal(statuses.at(-1)[1].restart, undefined);
});

test('a server away past the patience goes back to the back-off', () => {
  const statuses = [];
  joinedConnection(statuses);
  const realNow = Date.now;
  let now = realNow();
  Date.now = () => now;
  try {
    sockets.at(-1).closedBy(1012);
    retry().fn();
    now += RESTART_PATIENCE_MS + 1;
    for (let i = 0; i < 6; i++) { sockets.at(-1).closedBy(1006); retry().fn(); }
    sockets.at(-1).closedBy(1006);
    assert.ok(retry().ms > RESTART_RETRY_MAX_MS, `the back-off again: ${retry().ms}`);
    assert.equal(statuses.at(-1)[1].restart, undefined);
  } finally {
    Date.now = realNow;
  }
});

test('clients closed together spread over the window', () => {
  const delays = [];
  for (let i = 0; i < 40; i++) {
    joinedConnection([]);
    sockets.at(-1).closedBy(1012);
    delays.push(retry().ms);
  }
  assert.ok(delays.every((d) => d >= 0 && d < RESTART_WINDOW_MS), `${delays}`);
  assert.ok(new Set(delays).size > 20, `spread: ${delays}`);
});

test('without the change a close is the back-off: 1001 waits at least 375 ms, then doubles', () => {
  joinedConnection([]);
  sockets.at(-1).closedBy(1001);
  assert.ok(retry().ms >= 375 && retry().ms <= 625, `${retry().ms}`);
});

test('a connection given up for lost closes with 4000, one let go on purpose with 1000', () => {
  assert.equal(GAVE_UP_CLOSE_CODE, 4000);
  const conn = joinedConnection([]);
  const quiet = sockets.at(-1);
  conn.lost();  // what the watch does when pings go unanswered
  assert.equal(quiet.closedWith, 4000, 'the server says "lost the connection", not "stepped out"');
  retry().fn();
  const next = sockets.at(-1);
  next.open();
  conn.leave();
  assert.equal(next.closedWith, 1000);
});

console.log(`${passed} passed, 0 failed`);
