// The WebSocket to the server: join, resume with the stored token, heartbeat, and reconnection with backoff.
//
// States reported through onStatus:
//   connecting    first connection of this join
//   joined        welcome received
//   reconnecting  lost; { attempt, retryAt } says when the next try is (after a close with 1012, "service
//                 restart", within RESTART_WINDOW_MS, then every 1–2 s while the server is away, rather than on
//                 the back-off; { restart: true })
//   replaced      another tab took this member over (close 4001): never reconnects by itself
//   refused       the server refused the join itself ({ error }): a bad name, a locked room, …; or the
//                 host removed this member (error removed, close 4002), who is not let back for a while; or
//                 (watching) the room's new lock ended the watch (error bad_passcode, close 4003): showing the
//                 same passcode again would only count as a wrong one
//   left          we left on purpose
// Every socket callback checks that it belongs to the current socket, so a socket we gave up on can never
// change the state (it would otherwise report its own 4001 when the new connection takes it over).
//
// A room's passcode is kept in memory only, for this page's own reconnections: it never goes to storage.
// After a reload the stored resume token takes the member back without it.

import { load, save, tokenKey } from './storage.js';
import { browserTimeZone } from './clock.js';

const PING_EVERY_MS = 15000;
const PONG_DEADLINE_MS = 8000;
const QUICK_CHECK_DEADLINE_MS = 4000;
const OPEN_DEADLINE_MS = 10000;
const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 15000;
const SLEEP_GAP_MS = 15000;
// The server restarts, or its cluster node drains and its rooms already run on other nodes (close 1012,
// docs/PROTOCOL.md §11): come back at once through the same address, at a random moment within this window
// so that a node's clients do not all knock at the same instant, and resume with the stored token.
export const RESTART_CLOSE_CODE = 1012;
// The close this page sends when it gives up a connection it takes for lost (no answer to its pings) to connect
// again: not 1000, so that a server that still hears it tells the others the connection was lost, not that this
// member stepped out (docs/PROTOCOL.md §5 and §11).
export const GAVE_UP_CLOSE_CODE = 4000;
export const RESTART_WINDOW_MS = 250;
// A server that is restarting is back in seconds: until it is, try again every 1–2 s (at a random moment in that
// window) rather than on the back-off, which would have grown to 15 s while it was away. For at most
// RESTART_PATIENCE_MS: a server that is not back by then is down, and the back-off takes over.
export const RESTART_RETRY_MIN_MS = 1000;
export const RESTART_RETRY_MAX_MS = 2000;
export const RESTART_PATIENCE_MS = 120000;
const TRANSIENT_JOIN_ERRORS = new Set(['rate_limited', 'internal', 'shutting_down', 'store_unavailable']);

export function socketURL(loc = window.location) {
  return `${loc.protocol === 'https:' ? 'wss' : 'ws'}://${loc.host}/ws`;
}

// The address for one room: the room in the query, so that a proxy in front of several cluster nodes can
// send every member of a room to the same node (docs/CLUSTER.md). The server takes the room from `join`,
// never from here: this is a hint for the proxy only.
export function roomSocketURL(base, room) {
  if (!room) return base;
  return `${base}${base.includes('?') ? '&' : '?'}room=${encodeURIComponent(room)}`;
}

export class RoomConnection {
  constructor({ url = socketURL(), onMessage = () => {}, onStatus = () => {} } = {}) {
    this.url = url;
    this.onMessage = onMessage;
    this.onStatus = onStatus;
    this.ws = null;
    this.room = null;
    this.name = null;
    this.passcode = null;
    this.control = null;
    this.tz = browserTimeZone();
    this.status = 'idle';
    this.attempt = 0;
    this.retryTimer = null;
    this.openTimer = null;
    this.pingDeadline = 0;
    this.lastPingAt = 0;
    this.nextRef = 1;
    this.joinRef = null;
    this.replacedSeen = false;
    this.removed = null;
    this.accessEnded = null;
    /** Since when the server has been restarting (a close with 1012), until the next welcome; else null. */
    this.restartingSince = null;
    this.lastWatch = Date.now();

    this.watchdog = setInterval(() => this.watch(), 1000);
    window.addEventListener('online', () => this.wake());
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible') this.wake();
    });
    window.addEventListener('pageshow', (event) => { if (event.persisted) this.wake(); });
  }

  get token() { return this.room ? load(tokenKey(this.room)) : null; }

  /**
   * Joins a room. `passcode` opens a locked room (or locks a new one) and `control` ("host") is asked for a
   * new room; both go with every join of this page to this room, reconnections included, since a room that
   * is gone by then is created again.
   */
  join(room, name, { passcode = null, control = null } = {}) {
    this.room = room;
    this.name = name;
    this.passcode = passcode || null;
    this.control = control || null;
    this.attempt = 0;
    this.restartingSince = null;
    this.connect('connecting');
  }

  /**
   * Watches a room without joining it (the wall display): `observe`, with this browser's token for the room
   * when it has one (a locked room lets a member's token in) and `passcode` when given. Nobody in the room
   * sees it.
   */
  observe(room, { passcode = null } = {}) {
    this.room = room;
    this.observing = true;
    this.passcode = passcode || null;
    this.control = null;
    this.attempt = 0;
    this.connect('connecting');
  }

  /** Joins the same room again (after `replaced`: the token then takes the member back here). */
  rejoin(name = this.name) {
    if (!this.room) return;
    this.name = name;
    this.attempt = 0;
    this.connect('connecting');
  }

  /** Leaves for good: the server forgets the member, and so does this browser. The close waits for the
   *  leave frame already queued (WebSocket close sends buffered data first). */
  leave() {
    if (this.isOpen()) this.send({ type: 'leave' });
    if (this.room) save(tokenKey(this.room), null);
    this.passcode = null;
    this.control = null;
    this.stop('left');
  }

  retryNow() {
    if (this.status === 'reconnecting') this.connect('reconnecting');
  }

  isOpen() { return this.ws !== null && this.ws.readyState === WebSocket.OPEN; }

  /** Sends a request with a fresh ref and returns the ref, or null when there is no open socket. */
  request(message) {
    const ref = this.nextRef++;
    return this.send({ ...message, ref }) ? ref : null;
  }

  send(message) {
    if (!this.isOpen()) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  // MARK: internals

  setStatus(status, info = {}) {
    this.status = status;
    this.onStatus(status, info);
  }

  /** Lets the socket go, closing it with `code` if it is still open (1000: on purpose). */
  detach(code = 1000) {
    clearTimeout(this.retryTimer);
    clearTimeout(this.openTimer);
    this.retryTimer = null;
    this.pingDeadline = 0;
    const ws = this.ws;
    this.ws = null;
    if (ws) {
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
      if (ws.readyState === WebSocket.CONNECTING || ws.readyState === WebSocket.OPEN) {
        try { ws.close(code); } catch { /* already going */ }
      }
    }
  }

  stop(status, info) {
    this.detach();
    this.setStatus(status, info);
  }

  connect(status) {
    this.detach();
    this.replacedSeen = false;
    this.removed = null;
    this.accessEnded = null;
    this.setStatus(status, { attempt: this.attempt, ...(this.restartingSince !== null ? { restart: true } : {}) });
    let ws;
    try {
      ws = new WebSocket(roomSocketURL(this.url, this.room));
    } catch {
      this.scheduleRetry();
      return;
    }
    this.ws = ws;
    this.openTimer = setTimeout(() => { if (this.ws === ws) this.lost(); }, OPEN_DEADLINE_MS);
    ws.onopen = () => {
      if (this.ws !== ws) return;
      clearTimeout(this.openTimer);
      this.joinRef = `join-${this.nextRef++}`;
      if (this.observing) {
        const observe = { type: 'observe', room: this.room, ref: this.joinRef };
        if (this.token) observe.token = this.token;
        if (this.passcode) observe.passcode = this.passcode;
        ws.send(JSON.stringify(observe));
        return;
      }
      const join = { type: 'join', room: this.room, name: this.name, ref: this.joinRef };
      const token = this.token;
      if (token) join.token = token;
      if (this.passcode) join.passcode = this.passcode;
      if (this.control) join.control = this.control;
      if (this.tz) join.tz = this.tz;
      ws.send(JSON.stringify(join));
    };
    ws.onmessage = (event) => {
      if (this.ws !== ws) return;
      this.pingDeadline = 0;
      let message;
      try { message = JSON.parse(event.data); } catch { return; }
      if (!message || typeof message !== 'object' || typeof message.type !== 'string') return;
      if (message.type === 'observing') {
        this.attempt = 0;
        this.restartingSince = null;
        this.onMessage(message);
        this.setStatus('joined', { observing: true });
        return;
      }
      if (message.type === 'welcome') {
        if (message.you?.token) save(tokenKey(this.room), message.you.token);
        this.attempt = 0;
        this.restartingSince = null;
        this.onMessage(message);
        this.setStatus('joined', { resumed: !!message.you?.resumed });
        return;
      }
      if (message.type === 'error') {
        if (message.code === 'replaced') { this.replacedSeen = true; return; }
        if (message.code === 'removed') { this.removed = message; return; }
        if (this.observing && this.status === 'joined' && message.code === 'bad_passcode') {
          this.accessEnded = message;
          return;
        }
        if (this.status !== 'joined') {
          // Before the welcome the join is the only request in flight, so this error answers it (matched
          // by state rather than by ref: some servers leave the ref out of room_limit).
          // A zone the server does not know must not keep anyone out: join again without it (the server then
          // counts days in UTC).
          if (message.field === 'tz' && this.tz) {
            this.tz = null;
            this.connect(this.status);
            return;
          }
          // Too many wrong passcodes is no passing hiccup: retrying on our own would only keep the lock shut.
          const passcodeLimit = message.code === 'rate_limited' && message.field === 'passcode';
          if (TRANSIENT_JOIN_ERRORS.has(message.code) && !passcodeLimit) { this.lost(); return; }
          // Refused for good (bad room name, bad name, room full, no room left, locked): retrying would not
          // help. A passcode that did not open the room is forgotten.
          const sentPasscode = !!this.passcode;
          if (message.field === 'passcode') this.passcode = null;
          this.stop('refused', { error: message, sentPasscode });
          return;
        }
      }
      this.onMessage(message);
    };
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      if (event.code === 4001 || this.replacedSeen) {
        this.stop('replaced');
        return;
      }
      // Removed by the host (4002): the name and token are refused for a while, so never reconnect; the
      // landing says why, as for a refused join.
      if (event.code === 4002 || this.removed) {
        this.stop('refused', { error: this.removed ?? { code: 'removed' }, sentPasscode: false });
        return;
      }
      // The watch's access ended with a new lock (4003): never reconnect with what no longer opens it.
      if (event.code === 4003 || this.accessEnded) {
        this.passcode = null;
        this.stop('refused', { error: this.accessEnded ?? { code: 'bad_passcode', field: 'passcode' }, sentPasscode: true });
        return;
      }
      if (event.code === RESTART_CLOSE_CODE) {
        this.detach();
        this.attempt = 0;
        this.restartingSince = Date.now();
        this.scheduleRetry(Math.floor(Math.random() * RESTART_WINDOW_MS), { restart: true });
        return;
      }
      this.lost();
    };
    ws.onerror = () => { /* onclose follows */ };
  }

  lost() {
    this.detach(GAVE_UP_CLOSE_CODE);
    this.scheduleRetry();
  }

  /** Waits `delay` ms (by default the back-off for the next attempt, or 1–2 s while the server restarts), then
   *  connects again. */
  scheduleRetry(delay = null, info = {}) {
    const restarting = this.restartingSince !== null && Date.now() - this.restartingSince < RESTART_PATIENCE_MS;
    if (this.restartingSince !== null && !restarting) this.restartingSince = null;
    if (delay === null && restarting) {
      delay = RESTART_RETRY_MIN_MS + Math.floor(Math.random() * (RESTART_RETRY_MAX_MS - RESTART_RETRY_MIN_MS));
      info = { ...info, restart: true };
    }
    if (delay === null) {
      const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** this.attempt);
      delay = Math.round(base * (0.75 + Math.random() * 0.5));
    }
    this.attempt += 1;
    const retryAt = Date.now() + delay;
    this.retryTimer = setTimeout(() => this.connect('reconnecting'), delay);
    this.setStatus('reconnecting', { attempt: this.attempt, retryAt, ...info });
  }

  /** Sends a ping that must be answered within deadlineMs, else the socket counts as dead. */
  probe(deadlineMs) {
    if (!this.isOpen() || this.status !== 'joined') return;
    if (this.send({ type: 'ping', ref: `ping-${this.nextRef++}` })) {
      const deadline = Date.now() + deadlineMs;
      this.pingDeadline = this.pingDeadline ? Math.min(this.pingDeadline, deadline) : deadline;
    }
  }

  /** Back from sleep, from a hidden tab, or online again: check the socket now, or retry at once. */
  wake() {
    if (this.status === 'reconnecting') this.retryNow();
    else if (this.status === 'joined') this.probe(QUICK_CHECK_DEADLINE_MS);
  }

  watch() {
    const now = Date.now();
    const slept = now - this.lastWatch > SLEEP_GAP_MS;
    this.lastWatch = now;
    if (slept) { this.wake(); return; }
    if (this.status !== 'joined') return;
    if (this.pingDeadline && now > this.pingDeadline) { this.lost(); return; }
    if (!this.lastPingAt || now - this.lastPingAt >= PING_EVERY_MS) {
      this.lastPingAt = now;
      this.probe(PONG_DEADLINE_MS);
    }
  }
}
