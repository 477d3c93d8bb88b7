#!/usr/bin/env node
// A reference peer for pomo-bench: the part of the Pomodoro protocol (docs/PROTOCOL.md) that the `smoke`,
// `rooms` and `allhands` scenarios use, written the way a Node.js developer would write it, on Debian's
// `nodejs` and `node-ws`. It keeps everything in memory. README.md beside it says what it leaves out.
//
//   node Tests/bench/peer/server.js [--host 127.0.0.1] [--port 0]
//
// Prints "pomodoro-peer listening on http://HOST:PORT/" once it listens; WebSocket at /ws.
'use strict';

const http = require('http');

// Debian's node-ws lives in /usr/share/nodejs, which Debian's own node searches; another build of node
// (NodeSource's, say) does not, so look there too.
function loadWs() {
  try {
    return require('ws');
  } catch (error) {
    return require('/usr/share/nodejs/ws');
  }
}
const WebSocket = loadWs();

// Limits, as the Swift server's defaults (docs/PROTOCOL.md §9).
const MAX_MESSAGE_BYTES = 16384;
const MAX_QUEUED_BYTES = 1 << 20; // a reader with more than this unsent is dropped (1008)
const MEMBER_LIST_LIMIT = 100; // a bigger room lists its first 100 and coalesces member-only states
const MEMBER_STATE_INTERVAL_MS = 1000;
const MAX_MEMBERS_PER_ROOM = 10000;
const GRACE_MS = 120 * 1000; // a disconnected member keeps their place this long
const PING_AFTER_MS = 30 * 1000; // silent for this long: pinged
const HANG_UP_AFTER_MS = 75 * 1000; // silent for this long: dropped
const SWEEP_EVERY_MS = 5 * 1000;
const DEFAULT_SETTINGS = { focus: 1500, shortBreak: 300, longBreak: 900, longBreakEvery: 4, autoStart: false };
const ROOM_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const SEND_TEXT = { binary: false };

function options(argv) {
  const result = { host: '127.0.0.1', port: 0 };
  for (let i = 0; i < argv.length; i += 2) {
    const [name, value] = [argv[i], argv[i + 1]];
    if (name === '--host' && value !== undefined) result.host = value;
    else if (name === '--port' && /^[0-9]+$/.test(value || '')) result.port = Number(value);
    else {
      process.stderr.write(`usage: server.js [--host ADDRESS] [--port PORT]\n`);
      process.exit(64);
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------------------------
// Rooms. Time is a deadline: remaining = deadline - now. One timer per room, set for its next whole-second
// boundary (or its phase's end); a broadcast is encoded once and the same bytes go to every member.

const rooms = new Map();

class ProtocolError extends Error {
  constructor(code, message, field) {
    super(message);
    this.code = code;
    this.field = field;
  }
}

function newRoom(id) {
  return {
    id,
    members: new Map(), // member id -> member, in join order
    sockets: new Set(), // connections of members in the room: who gets broadcasts
    nextMember: 1,
    host: null,
    phase: 'idle',
    status: 'idle',
    deadline: null, // while running
    remaining: 0, // while ready or paused
    phaseLength: 0,
    cycle: 1,
    settings: { ...DEFAULT_SETTINGS },
    pendingSettings: null,
    stats: { focusCompleted: 0, focusMs: 0, interruptions: 0 },
    focusSince: null, // while a focus runs: since when its time is not yet in stats.focusMs
    seq: 0,
    shownSeconds: 0, // the whole seconds of the last tick or state: a tick goes out when this falls
    timer: null,
    memberStateTimer: null,
    lastMemberStateAt: 0,
  };
}

function snapshot(room, now) {
  const members = [];
  for (const member of room.members.values()) {
    if (members.length === MEMBER_LIST_LIMIT) break;
    members.push({
      id: member.id, name: member.name, present: member.socket !== null, connected: member.socket !== null,
      task: '', stats: { focusCompleted: member.focusCompleted, focusSeconds: Math.floor(memberFocusMs(room, member, now) / 1000), interruptions: member.interruptions },
    });
  }
  return {
    id: room.id, phase: room.phase, status: room.status, running: room.status === 'running',
    remainingMs: remainingMs(room, now), phaseLengthMs: room.phaseLength,
    endsAt: room.status === 'running' ? room.deadline : null, cycle: room.cycle,
    settings: room.settings, pendingSettings: room.pendingSettings, members,
    memberCount: room.members.size, presentCount: room.sockets.size, membersTruncated: room.members.size > MEMBER_LIST_LIMIT,
    stats: { focusCompleted: room.stats.focusCompleted, focusSeconds: Math.floor(roomFocusMs(room, now) / 1000), interruptions: room.stats.interruptions },
    seq: room.seq, serverTime: now, control: 'anyone', host: room.host, locked: false,
  };
}

function remainingMs(room, now) {
  if (room.status === 'running') return Math.max(0, room.deadline - now);
  return room.status === 'idle' ? 0 : room.remaining;
}

function roomFocusMs(room, now) {
  return room.stats.focusMs + (room.focusSince === null ? 0 : Math.max(0, now - room.focusSince));
}

// A member's focus time is credited when a focus stops (ends, pauses, or the member leaves); until then
// it is the time since the member was last credited, so a tick costs nothing per member.
function memberFocusMs(room, member, now) {
  return member.focusMs + (room.focusSince === null || member.socket === null ? 0 : Math.max(0, now - Math.max(room.focusSince, member.focusFrom)));
}

function creditFocus(room, until) {
  if (room.focusSince === null) return;
  for (const member of room.members.values()) {
    if (member.socket !== null) member.focusMs += Math.max(0, until - Math.max(room.focusSince, member.focusFrom));
  }
  room.stats.focusMs += Math.max(0, until - room.focusSince);
  room.focusSince = null;
}

function broadcast(room, message) {
  const frame = Buffer.from(JSON.stringify(message));
  for (const socket of room.sockets) sendFrame(socket, frame);
}

function sendFrame(socket, frame) {
  if (socket.readyState !== WebSocket.OPEN) return;
  if (socket.bufferedAmount > MAX_QUEUED_BYTES) {
    socket.close(1008, 'too slow');
    return;
  }
  socket.send(frame, SEND_TEXT);
}

function send(socket, message) {
  sendFrame(socket, Buffer.from(JSON.stringify(message)));
}

function changed(room) {
  room.seq += 1;
}

// A state after a change of the timer, settings or host: at once, covering any member change pending.
function broadcastState(room, now) {
  if (room.memberStateTimer !== null) {
    clearTimeout(room.memberStateTimer);
    room.memberStateTimer = null;
  }
  broadcast(room, { type: 'state', room: snapshot(room, now) });
}

// A state after members came or went (the caller counted the change in `seq`): at once in a small room
// (with its event), at most once a second in a big one (no event), as docs/PROTOCOL.md "Big rooms" says.
function membersChanged(room, now, event) {
  if (room.members.size <= MEMBER_LIST_LIMIT) {
    if (event) broadcast(room, { type: 'event', room: room.id, kind: event.kind, serverTime: now, ...event.fields });
    broadcastState(room, now);
    return;
  }
  if (room.memberStateTimer !== null) return;
  const wait = Math.max(0, room.lastMemberStateAt + MEMBER_STATE_INTERVAL_MS - now);
  room.memberStateTimer = setTimeout(() => {
    room.memberStateTimer = null;
    room.lastMemberStateAt = Date.now();
    broadcast(room, { type: 'state', room: snapshot(room, room.lastMemberStateAt) });
  }, wait);
}

function lengthOf(room, phase) {
  const seconds = phase === 'focus' ? room.settings.focus : phase === 'shortBreak' ? room.settings.shortBreak : room.settings.longBreak;
  return seconds * 1000;
}

function run(room, remaining, now) {
  room.status = 'running';
  room.deadline = now + remaining;
  room.remaining = 0;
  room.shownSeconds = Math.ceil(remaining / 1000);
  if (room.phase === 'focus') room.focusSince = now;
  schedule(room);
}

function stopRunning(room, now) {
  creditFocus(room, now);
  if (room.timer !== null) clearTimeout(room.timer);
  room.timer = null;
}

// Sets up `phase` with its full length, running from `at` or ready.
function enter(room, phase, at, running) {
  room.phase = phase;
  room.phaseLength = lengthOf(room, phase);
  if (running) {
    run(room, room.phaseLength, at);
  } else {
    room.status = 'ready';
    room.remaining = room.phaseLength;
    room.deadline = null;
  }
}

function nextPhase(room) {
  if (room.phase === 'focus') return room.cycle >= room.settings.longBreakEvery ? 'longBreak' : 'shortBreak';
  return 'focus';
}

// Ends the current phase at `at` and sets up the next one; returns the phaseCompleted event's fields.
function moveOn(room, at) {
  const completed = room.phase;
  const next = nextPhase(room);
  if (completed === 'shortBreak') room.cycle += 1;
  if (completed === 'longBreak') room.cycle = 1;
  if (room.pendingSettings !== null) {
    room.settings = room.pendingSettings;
    room.pendingSettings = null;
  }
  const autoStarted = room.settings.autoStart && room.sockets.size > 0;
  enter(room, next, at, autoStarted);
  return { completed, next, autoStarted, cycle: room.cycle };
}

function schedule(room) {
  if (room.timer !== null) clearTimeout(room.timer);
  room.timer = null;
  if (room.status !== 'running') return;
  const next = room.deadline - Math.max(0, room.shownSeconds - 1) * 1000;
  room.timer = setTimeout(advance, Math.max(0, Math.ceil(next - Date.now())), room);
}

// The room's timer: phases that ended by now, each on its own deadline (an auto-started phase begins at
// the previous one's, so the grid never drifts), then a tick if the shown second fell.
function advance(room) {
  room.timer = null;
  const now = Date.now();
  while (room.status === 'running' && room.deadline <= now) {
    const deadline = room.deadline;
    if (room.phase === 'focus') {
      creditFocus(room, deadline);
      room.stats.focusCompleted += 1;
      for (const member of room.members.values()) if (member.socket !== null) member.focusCompleted += 1;
    }
    const fields = moveOn(room, deadline);
    changed(room);
    broadcast(room, { type: 'event', room: room.id, kind: 'phaseCompleted', serverTime: now, ...fields });
    broadcastState(room, now);
  }
  if (room.status !== 'running') return;
  const seconds = Math.ceil((room.deadline - now) / 1000);
  if (seconds < room.shownSeconds) {
    room.shownSeconds = seconds;
    broadcast(room, {
      type: 'tick', room: room.id, phase: room.phase, remainingMs: seconds * 1000, endsAt: room.deadline,
      cycle: room.cycle, seq: room.seq, serverTime: now,
    });
  }
  schedule(room);
}

// ---------------------------------------------------------------------------------------------------------
// Commands.

function readRef(message) {
  const ref = message.ref;
  if (ref === undefined || ref === null) return undefined;
  if (Number.isSafeInteger(ref)) return ref;
  if (typeof ref === 'string' && Buffer.byteLength(ref) <= 64) return ref;
  throw new ProtocolError('bad_request', "'ref' must be a string of at most 64 bytes or an integer", 'ref');
}

function requireString(message, field) {
  if (typeof message[field] !== 'string') throw new ProtocolError('bad_request', `'${field}' must be a string`, field);
  return message[field];
}

function requireInteger(message, field, min, max) {
  const value = message[field];
  if (!Number.isSafeInteger(value)) throw new ProtocolError('bad_request', `'${field}' must be an integer`, field);
  if (value < min || value > max) throw new ProtocolError('bad_request', `'${field}' must be ${min}–${max}`, field);
  return value;
}

function randomToken() {
  return require('crypto').randomBytes(18).toString('base64url');
}

function join(socket, message, ref, now) {
  if (socket.room) throw new ProtocolError('already_joined', 'this connection is in a room already');
  const roomName = requireString(message, 'room');
  if (!ROOM_NAME.test(roomName)) throw new ProtocolError('bad_request', "'room' must be 1–64 of A–Z a–z 0–9 _ -", 'room');
  const name = requireString(message, 'name').trim();
  const characters = [...name].length;
  if (characters < 1 || characters > 40 || /[\u0000-\u001f\u007f-\u009f]/.test(name)) {
    throw new ProtocolError('bad_request', "'name' must be 1–40 visible characters", 'name');
  }
  const token = message.token === undefined || message.token === null ? null : requireString(message, 'token');
  let room = rooms.get(roomName);
  if (!room) {
    room = newRoom(roomName);
    rooms.set(roomName, room);
  }
  let member = null;
  if (token !== null) {
    for (const candidate of room.members.values()) if (candidate.token === token) member = candidate;
  }
  const resumed = member !== null;
  if (resumed) {
    if (member.socket !== null) { // a takeover: the older connection is told and closed
      const older = member.socket;
      detach(room, member, now);
      send(older, { type: 'error', code: 'replaced', message: 'another connection joined as this member' });
      older.close(4001, 'replaced');
    }
    clearTimeout(member.expiry);
    member.name = name;
  } else {
    if (room.members.size >= MAX_MEMBERS_PER_ROOM) throw new ProtocolError('room_full', 'the room is full');
    member = {
      id: `m${room.nextMember++}`, name, token: randomToken(), socket: null, expiry: null,
      focusMs: 0, focusFrom: 0, focusCompleted: 0, interruptions: 0,
    };
    room.members.set(member.id, member);
    if (room.host === null) room.host = member.id;
  }
  member.socket = socket;
  member.focusFrom = now;
  socket.room = room;
  socket.member = member;
  room.sockets.add(socket);
  const reply = { type: 'welcome', you: { id: member.id, token: member.token, resumed }, room: null, serverTime: now };
  changed(room);
  reply.room = snapshot(room, now);
  if (ref !== undefined) reply.ref = ref;
  send(socket, reply);
  membersChanged(room, now, resumed ? { kind: 'memberReturned', fields: { member: member.id } }
    : { kind: 'memberJoined', fields: { member: member.id, name } });
}

// Takes a member's connection out of the room: they stay a member (away) for the grace period.
function detach(room, member, now) {
  if (room.focusSince !== null) {
    member.focusMs += Math.max(0, now - Math.max(room.focusSince, member.focusFrom));
    member.interruptions += 1;
  }
  room.sockets.delete(member.socket);
  member.socket.room = null;
  member.socket.member = null;
  member.socket = null;
}

function disconnected(socket, now) {
  const room = socket.room;
  const member = socket.member;
  if (!room) return;
  detach(room, member, now);
  member.expiry = setTimeout(() => removeMember(room, member, 'expired', Date.now()), GRACE_MS);
  changed(room);
  membersChanged(room, now, { kind: 'memberAway', fields: { member: member.id, reason: 'disconnected' } });
}

function removeMember(room, member, reason, now) {
  clearTimeout(member.expiry);
  if (member.socket !== null) detach(room, member, now);
  room.members.delete(member.id);
  if (room.host === member.id) {
    let next = null;
    for (const candidate of room.members.values()) {
      if (candidate.socket !== null) { next = candidate.id; break; }
      if (next === null) next = candidate.id;
    }
    room.host = next;
  }
  changed(room);
  membersChanged(room, now, { kind: 'memberLeft', fields: { member: member.id, reason } });
  if (room.members.size === 0) {
    stopRunning(room, now);
    if (room.memberStateTimer !== null) clearTimeout(room.memberStateTimer);
    rooms.delete(room.id);
  }
}

function configure(room, message) {
  const settings = {
    focus: requireInteger(message, 'focus', 1, 14400),
    shortBreak: requireInteger(message, 'shortBreak', 1, 14400),
    longBreak: requireInteger(message, 'longBreak', 1, 14400),
    longBreakEvery: requireInteger(message, 'longBreakEvery', 1, 12),
    autoStart: message.autoStart,
  };
  if (typeof settings.autoStart !== 'boolean') throw new ProtocolError('bad_request', "'autoStart' must be a boolean", 'autoStart');
  if (room.status === 'idle' || room.status === 'ready') {
    room.settings = settings;
    room.pendingSettings = null;
    if (room.status === 'ready') {
      room.phaseLength = lengthOf(room, room.phase);
      room.remaining = room.phaseLength;
    }
    return 'now';
  }
  const same = JSON.stringify(settings) === JSON.stringify(room.settings);
  room.pendingSettings = same ? null : settings;
  return 'nextPhase';
}

// A timer command; returns the `ok` reply's extra fields.
function control(socket, type, message, now) {
  const room = socket.room;
  if (!room) throw new ProtocolError('not_joined', 'join a room first');
  const extra = {};
  switch (type) {
    case 'start':
      if (room.status === 'running') throw new ProtocolError('invalid_state', 'the timer is already running');
      if (room.status === 'idle') enter(room, 'focus', now, true);
      else run(room, room.remaining, now);
      break;
    case 'pause':
      if (room.status !== 'running') throw new ProtocolError('invalid_state', 'the timer is not running');
      if (room.phase === 'focus') room.stats.interruptions += 1;
      room.remaining = Math.max(0, room.deadline - now);
      stopRunning(room, now);
      room.status = 'paused';
      room.deadline = null;
      break;
    case 'resume':
      if (room.status !== 'paused') throw new ProtocolError('invalid_state', 'the timer is not paused');
      run(room, room.remaining, now);
      break;
    case 'skip': {
      if (room.phase === 'idle') throw new ProtocolError('invalid_state', 'there is no phase to skip');
      if (room.status === 'running' && room.phase === 'focus') room.stats.interruptions += 1;
      stopRunning(room, now);
      moveOn(room, now);
      break;
    }
    case 'reset':
      if (room.phase === 'idle' && room.cycle === 1) throw new ProtocolError('invalid_state', 'the timer is already reset');
      if (room.status === 'running' && room.phase === 'focus') room.stats.interruptions += 1;
      stopRunning(room, now);
      Object.assign(room, { phase: 'idle', status: 'idle', deadline: null, remaining: 0, phaseLength: 0, cycle: 1 });
      if (room.pendingSettings !== null) {
        room.settings = room.pendingSettings;
        room.pendingSettings = null;
      }
      break;
    case 'configure':
      extra.appliesFrom = configure(room, message);
      break;
  }
  changed(room);
  broadcast(room, { type: 'event', room: room.id, kind: 'control', serverTime: now, action: type, by: socket.member.id });
  broadcastState(room, now);
  return extra;
}

const TIMER_COMMANDS = new Set(['start', 'pause', 'resume', 'skip', 'reset', 'configure']);
const NOT_HERE = new Set(['extend', 'task', 'presence', 'control', 'handOff', 'stats']);

function handle(socket, data, isBinary) {
  const now = Date.now();
  if (isBinary) {
    send(socket, { type: 'error', code: 'binary_unsupported', message: 'this protocol uses JSON text frames only' });
    return;
  }
  let message;
  try {
    message = JSON.parse(data.toString('utf8'));
  } catch (error) {
    send(socket, { type: 'error', code: 'bad_json', message: 'the frame is not JSON' });
    return;
  }
  if (message === null || typeof message !== 'object' || Array.isArray(message)) {
    send(socket, { type: 'error', code: 'bad_json', message: 'a message must be a JSON object' });
    return;
  }
  let ref;
  try {
    ref = readRef(message);
    const type = message.type;
    if (typeof type !== 'string') throw new ProtocolError('bad_request', "'type' must be a string", 'type');
    if (type === 'join') {
      join(socket, message, ref, now);
      return;
    }
    if (type === 'ping') {
      send(socket, ref === undefined ? { type: 'pong', serverTime: now } : { type: 'pong', serverTime: now, ref });
      return;
    }
    let reply;
    if (type === 'leave') {
      if (!socket.room) throw new ProtocolError('not_joined', 'join a room first');
      reply = { type: 'ok', command: 'leave' };
      removeMember(socket.room, socket.member, 'left', now);
    } else if (TIMER_COMMANDS.has(type)) {
      reply = { type: 'ok', command: type, ...control(socket, type, message, now) };
    } else if (NOT_HERE.has(type)) {
      throw new ProtocolError('unknown_type', `'${type}' is not implemented by the reference peer`, 'type');
    } else {
      throw new ProtocolError('unknown_type', 'unknown message type', 'type');
    }
    if (ref !== undefined) reply.ref = ref;
    send(socket, reply);
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    const reply = { type: 'error', code: error.code, message: error.message };
    if (error.field !== undefined) reply.field = error.field;
    if (ref !== undefined) reply.ref = ref;
    send(socket, reply);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Transport.

function main() {
  const { host, port } = options(process.argv.slice(2));
  const server = http.createServer((request, response) => {
    const ok = request.url === '/healthz';
    response.writeHead(ok ? 200 : 404, { 'content-type': 'text/plain' });
    response.end(ok ? 'ok\n' : 'not found\n');
  });
  const wss = new WebSocket.WebSocketServer({ server, path: '/ws', maxPayload: MAX_MESSAGE_BYTES, perMessageDeflate: false, clientTracking: true });

  wss.on('connection', (socket) => {
    socket.room = null;
    socket.member = null;
    socket.lastHeard = Date.now();
    socket.pingSent = false;
    socket.on('message', (data, isBinary) => {
      socket.lastHeard = Date.now();
      socket.pingSent = false;
      handle(socket, data, isBinary);
    });
    socket.on('pong', () => {
      socket.lastHeard = Date.now();
      socket.pingSent = false;
    });
    socket.on('close', () => disconnected(socket, Date.now()));
    socket.on('error', () => socket.terminate());
  });

  // Keep-alive: one sweep every few seconds pings the silent and drops the long silent.
  setInterval(() => {
    const now = Date.now();
    for (const socket of wss.clients) {
      const silent = now - socket.lastHeard;
      if (silent > HANG_UP_AFTER_MS) socket.terminate();
      else if (silent > PING_AFTER_MS && !socket.pingSent) {
        socket.pingSent = true;
        socket.ping();
      }
    }
  }, SWEEP_EVERY_MS);

  server.listen(port, host, () => {
    const address = server.address();
    const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    process.stdout.write(`pomodoro-peer listening on http://${shown}:${address.port}/\n`);
  });
  for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
}

main();
