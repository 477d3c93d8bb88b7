// The room as this page knows it, kept by one pure function: reduce(state, message, { now }) returns the next
// state and the effects the page carries out (play a chime, add a line to the activity feed, show a notice).
// No DOM, no timers, no storage and no translations here: words are { key, values } for i18n.js, and the
// time a message arrives comes in as `now`. Tested under node against the server's golden messages
// (Tests/browser/room_model.mjs, Tests/fixtures/wire/server/), so the page and the server cannot drift.
//
// A state is never changed in place: every step returns a new one, sharing what did not change.
//
// The effects, in the order the page carries them out (app.js, carryOut):
//   serverTime { serverTime }   a sample for the server clock (clock.js)
//   limits { limits }           the server's limits: keep them, and put them on the form fields
//   render / frame              draw the room again / only the clock's frame (a tick)
//   welcomed                    the join (or the watch) is done: the join button can be pressed again
//   notice { title?, text? | error }   the small notice: words, or a refusal said with its code's meaning
//   feed { text, phase?, at }   a line in the activity feed
//   announce { text, summary? }  said to screen readers (the polite live region); with summary, the room in one
//                               sentence follows, as it stands once the state the event comes with is drawn
//   chime { phase } / notify { title, body }   the end of a phase, heard and as a notification
//   refreshStats / statsPanel   ask for the stats again (if the panel is open) / draw the panel
//   dropTimeZone                the server does not know the browser's zone: stop sending it
//   controls                    the controls' enabled states (the host-only switch was confirmed)
//   settingsNoteCleared / settingsSaved { appliesFrom } / settingsError { error }   the settings form's notes
//   schedules                   draw the room's schedules again (the list came, or changed)
//   scheduleSaved / scheduleError { error }   the schedule form's request was carried out / refused
//   settingsUnanswered / scheduleUnanswered   the connection that carried the form's request is gone: its
//                               answer will never come, so the form may send again (what was typed is kept)
//   taskRefused                 the member's own task was refused: the field shows the task the server holds
//   apiTokens                   draw the room's API tokens again (the list came; a token was made or revoked)

import { limitsFrom, DEFAULT_LIMITS } from './limits.js';

/** Every message type the server sends (docs/PROTOCOL.md). Others, from later versions, are ignored. */
export const SERVER_MESSAGES = Object.freeze(['welcome', 'observing', 'state', 'tick', 'event', 'ok', 'error', 'pong', 'stats',
  'schedules', 'apiTokens', 'you']);

/** Every event kind the page has words for. Others, from later versions, are ignored. */
export const EVENT_KINDS = Object.freeze([
  'phaseCompleted', 'memberJoined', 'memberReturned', 'memberAway', 'memberBack', 'memberLeft', 'control',
  'hostChanged', 'controlModeChanged', 'lockChanged', 'scheduleWarning', 'scheduleStarted', 'scheduleMissed',
  'scheduleEnded', 'webhookDisabled',
]);

const CONTROL_WORDS = Object.freeze({
  start: 'evStart', pause: 'evPause', resume: 'evResume', skip: 'evSkip', reset: 'evReset', configure: 'evConfigure',
});

/** The stats panel's side of the room: open or not, the request in flight and its answer. */
function newStats(open = false) {
  return { open, ref: null, tz: null, loading: false, data: null, error: null };
}

/** Nobody's room yet: the landing page. `limits` are the last ones a server sent (kept by the page). */
export function initialState(limits = DEFAULT_LIMITS) {
  return {
    roomName: null,
    room: null,
    seq: -1,
    me: null,
    /** Me as the server told me alone (`you`): a big room's list may leave me out (PROTOCOL.md, "Big rooms"). */
    self: null,
    /** Member id to name, for members the snapshot no longer lists (they left, or a big room leaves them out). */
    names: {},
    /** What this join asked of a new room ({ passcode, control }), until its welcome says whether it applied. */
    asked: null,
    configureRef: null,
    controlRef: null,
    /** The schedule form's add or change, and the member's own task, while their answers are awaited. */
    scheduleRef: null,
    taskRef: null,
    /** The task this page last sent, until a snapshot shows it: a change to another text is someone else's. */
    taskSent: null,
    settingsDirty: false,
    stats: newStats(false),
    /** The room's schedules as the server last listed them (docs/PROTOCOL.md §15); null until it has. */
    schedules: null,
    /** The room's API tokens as last listed (docs/PROTOCOL.md §16), and one just made, shown once; null until. */
    apiTokens: null,
    createdToken: null,
    limits,
  };
}

// MARK: what the page does

/** Going into a room: everything about the last one is forgotten (an open stats panel stays open). */
export function joinStarted(state, roomName, access = {}) {
  return {
    ...state,
    roomName,
    asked: access.passcode || access.control ? { ...access } : null,
    configureRef: null,
    controlRef: null,
    scheduleRef: null,
    taskRef: null,
    taskSent: null,
    room: null,
    seq: -1,
    me: null,
    self: null,
    observing: false,
    settingsDirty: false,
    names: {},
    stats: newStats(state.stats.open),
    schedules: null,
    apiTokens: null,
    createdToken: null,
  };
}

export function left(state) {
  return {
    ...state, room: null, roomName: null, schedules: null, apiTokens: null, createdToken: null,
    stats: { ...state.stats, open: false },
  };
}

/** A request that waits for its answer: `configure`, `control` or a schedule's add or change (`schedule`)
 *  with its ref. */
export function requestSent(state, command, ref) {
  if (command === 'configure') return { ...state, configureRef: ref };
  if (command === 'control') return { ...state, controlRef: ref };
  if (command === 'schedule') return { ...state, scheduleRef: ref };
  return state;
}

/**
 * The connection closed (or a new one began): the requests it carried are answered on none, since a ref is
 * answered on the connection that sent it. The settings form, the schedule form and the host-only switch stop
 * waiting, and the forms say so (what was typed stays, and the settings stay marked as edited, so that a
 * snapshot does not overwrite them); the switch shows what the room says at the next render. My task keeps
 * `taskSent`: its echo may still come in the next snapshot. Returns { state, effects }, as `reduce` does.
 */
export function connectionClosed(state) {
  const effects = [];
  if (state.configureRef !== null) effects.push({ type: 'settingsUnanswered' });
  if (state.scheduleRef !== null) effects.push({ type: 'scheduleUnanswered' });
  const waiting = [state.configureRef, state.controlRef, state.scheduleRef, state.taskRef].some((ref) => ref !== null);
  if (!waiting) return { state, effects };
  return { state: { ...state, configureRef: null, controlRef: null, scheduleRef: null, taskRef: null }, effects };
}

/** The member's own task was sent from this page (with `ref`): its echo in the next snapshot is not news, and
 *  a refusal puts the server's task back in the field. */
export function taskSent(state, text, ref = null) {
  return { ...state, taskSent: text, taskRef: ref };
}

/** The settings form was edited (true) or its edits dropped (false). */
export function settingsEdited(state, dirty) {
  return state.settingsDirty === dirty ? state : { ...state, settingsDirty: dirty };
}

export function statsOpened(state, open) {
  return { ...state, stats: { ...state.stats, open } };
}

/** A stats request went out with `ref`, in the zone `tz` (null: the server's default). */
export function statsRequested(state, ref, tz) {
  return { ...state, stats: { ...state.stats, ref, tz, loading: true } };
}

export function statsErrorCleared(state) {
  return { ...state, stats: { ...state.stats, error: null } };
}

// MARK: questions the page asks

/** The name of a member by id, or null for someone this page never saw. */
/** Where the room stands in its set, for the cycle line and its dots: during a scheduled run (the snapshot's
 *  `scheduledRun`, PROTOCOL.md §15) its own focus sessions ("Writing block · focus 2 of 3"), otherwise the
 *  long-break cycle. `total` is null for a run that goes on until stopped (no dots then); `dots` are
 *  'done', 'current' or 'todo'. */
export function setPosition(room) {
  const run = room.scheduledRun;
  const inFocus = room.phase === 'focus' || room.phase === 'idle';
  if (run && typeof run === 'object') {
    const done = Math.max(0, run.focusDone | 0);
    const total = typeof run.focusSessions === 'number' ? run.focusSessions : null;
    // As the cycle does: the focus under way, or during a break the one just done.
    let n = inFocus ? done + 1 : Math.max(done, 1);
    if (total !== null) n = Math.min(n, total);
    const dots = [];
    for (let i = 0; total !== null && i < Math.min(total, 12); i++) {
      dots.push(i < done ? 'done' : (i === done && inFocus && room.status !== 'idle') ? 'current' : 'todo');
    }
    return { name: run.name, n, total, dots };
  }
  const total = room.settings.longBreakEvery;
  const n = Math.min(room.cycle, total);
  const dots = [];
  for (let i = 1; i <= total; i++) {
    dots.push(i < n || (i === n && !inFocus) ? 'done' : (i === n && room.status !== 'idle') ? 'current' : 'todo');
  }
  return { name: null, n, total, dots };
}

export function nameOf(state, id) {
  return state.names[id] || null;
}

/** My member object: as the room lists me, or as the server told me alone when a big room's list leaves me out. */
export function myMember(state) {
  if (!state.me || !state.room) return null;
  return state.room.members.find((m) => m.id === state.me)
    ?? (state.self?.id === state.me ? state.self : null);
}

/**
 * The members to draw: the room's list with my row first (as `pomo` draws it), whether the list holds me or,
 * in a big room that leaves me out, the server told me myself.
 */
export function shownMembers(state) {
  const members = state.room?.members ?? [];
  const mine = myMember(state);
  return mine ? [mine, ...members.filter((m) => m !== mine)] : members;
}

export function myName(state) {
  return myMember(state)?.name ?? '';
}

/** The server time in a message, where it has one (a snapshot carries it inside its room). */
export function serverTimeOf(message) {
  const time = message?.type === 'state' ? message.room?.serverTime : message?.serverTime;
  return typeof time === 'number' ? time : null;
}

// MARK: what the server says

/**
 * The next state after one server message, and what the page should do about it.
 * `now` (epoch milliseconds, the local clock) stamps the activity feed's lines.
 */
export function reduce(state, message, { now = 0 } = {}) {
  const effects = [];
  const serverTime = serverTimeOf(message);
  if (serverTime !== null) effects.push({ type: 'serverTime', serverTime });
  let next = state;
  switch (message?.type) {
    case 'welcome': next = welcome(state, message, effects); break;
    case 'observing': next = observing(state, message, effects); break;
    case 'state': next = snapshot(state, message.room, false, effects); break;
    case 'tick': next = tick(state, message, effects); break;
    case 'event': next = event(state, message, effects, now); break;
    case 'ok': next = ok(state, message, effects); break;
    case 'error': next = error(state, message, effects); break;
    case 'stats': next = stats(state, message, effects); break;
    case 'schedules': next = schedules(state, message, effects); break;
    case 'apiTokens': next = apiTokens(state, message, effects); break;
    case 'you': next = you(state, message, effects); break;
    default: break; // pong (its server time is all it brings), and message types from later versions
  }
  return { state: next, effects };
}

function welcome(state, message, effects) {
  let next = state;
  if (message.limits) {
    next = { ...next, limits: limitsFrom(message.limits) };
    effects.push({ type: 'limits', limits: next.limits });
  }
  // A request sent on a connection that dropped is answered on none: the forms may send again.
  const closed = connectionClosed(next);
  effects.push(...closed.effects);
  next = snapshot({ ...closed.state, me: message.you.id, self: null, seq: -1, observing: false }, message.room, true, effects);
  effects.push({ type: 'welcomed' });
  // A passcode or host-only choice only shapes a new room: joining one that already existed, say so.
  const asked = next.asked;
  next = { ...next, asked: null };
  const room = message.room;
  if (asked && room) {
    const passcodeIgnored = !!asked.passcode && room.locked === false;
    const controlIgnored = asked.control === 'host' && room.control !== 'host';
    if (passcodeIgnored || controlIgnored) effects.push({ type: 'notice', text: { key: 'accessNotApplied' } });
  }
  return next;
}

/** The answer to `observe` (the wall display): the room, with nobody in it who is me. */
function observing(state, message, effects) {
  const next = snapshot({ ...state, me: null, self: null, seq: -1, observing: true }, message.room, true, effects);
  effects.push({ type: 'welcomed' });
  return next;
}

/** How the room sees me, to me alone, when its list leaves me out: my row, my task field, my away switch. */
function you(state, message, effects) {
  const member = message.member;
  if (!state.room || message.room !== state.room.id || !member || member.id !== state.me) return state;
  const sent = myTaskSeen(state, myMember(state), member, effects);
  effects.push({ type: 'render' });
  return { ...state, self: member, names: { ...state.names, [member.id]: member.name }, taskSent: sent };
}

/**
 * My task as the server now shows me (`after`, as I was shown `before`): the echo of the task this page sent
 * ends the wait for it; another change is news from elsewhere (pomo, another tab that took the member over,
 * the server), said, since it happened where I was not looking. Returns the task still awaited.
 */
function myTaskSeen(state, before, after, effects) {
  const sent = state.taskSent;
  if (!after) return sent;
  if (sent !== null && after.task === sent) return null;
  if (before && before.task !== after.task) {
    effects.push({
      type: 'announce',
      text: after.task ? { key: 'announceTask', values: { task: after.task } } : { key: 'announceTaskCleared', values: {} },
    });
  }
  return sent;
}

/** A whole room: taken unless it is older than the one shown (a welcome's is always taken). */
function snapshot(state, room, fresh, effects) {
  if (!room || typeof room !== 'object') return state;
  if (!fresh && typeof room.seq === 'number' && room.seq < state.seq) return state;
  const names = { ...state.names };
  for (const member of room.members) names[member.id] = member.name;
  effects.push({ type: 'render' });
  const before = state.me && state.room?.id === room.id ? myMember(state) : null;
  const after = state.me ? room.members.find((m) => m.id === state.me) : null;
  const sent = myTaskSeen(state, before, after, effects);
  return { ...state, seq: room.seq, room, names, taskSent: sent };
}

/** A tick moves the clock of the room shown; one for another room, or older than the snapshot, is ignored. */
function tick(state, message, effects) {
  const room = state.room;
  if (!room || message.room !== room.id || message.seq < state.seq) return state;
  const next = {
    ...room,
    remainingMs: message.remainingMs,
    endsAt: typeof message.endsAt === 'number' ? message.endsAt : room.endsAt,
    phase: message.phase,
    cycle: message.cycle,
  };
  effects.push({ type: 'frame' });
  return { ...state, room: next };
}

const phaseWords = (phase) => ({ key: `phase_${phase || 'idle'}` });

function event(state, message, effects, now) {
  let next = state;
  const subject = message.member ?? message.by;
  // A command carried by the control API names its token: `api:deploy bot`.
  const name = (id) => nameOf(next, id) ?? (typeof id === 'string' && id.startsWith('api:') ? id : { key: 'someone' });
  const isMe = subject === state.me;
  const feed = (key, values = {}, phase = undefined) => {
    const line = { type: 'feed', text: { key, values }, at: now };
    if (phase) line.phase = phase;
    effects.push(line);
  };
  switch (message.kind) {
    case 'phaseCompleted': {
      const completed = phaseWords(message.completed);
      const after = phaseWords(message.next);
      feed('evCompleted', { phase: completed }, message.completed);
      effects.push({
        type: 'announce',
        text: { key: message.autoStarted ? 'announceStarted' : 'announceNext', values: { completed, next: after } },
      });
      effects.push({ type: 'chime', phase: message.completed });
      if (message.completed === 'focus') {
        effects.push({ type: 'notify', title: { key: 'notifyFocusDone' }, body: { key: 'notifyBodyBreak', values: { phase: after } } });
        // The server stores a session before it announces it, so asking now shows it.
        effects.push({ type: 'refreshStats' });
      } else {
        effects.push({ type: 'notify', title: { key: 'notifyBreakDone' }, body: { key: 'notifyBodyFocus', values: {} } });
      }
      break;
    }
    case 'memberJoined':
      if (message.name) next = { ...next, names: { ...next.names, [message.member]: message.name } };
      if (!isMe) feed('evJoined', { name: name(message.member) });
      break;
    case 'memberReturned':
      if (!isMe) feed('evReturned', { name: name(subject) });
      break;
    case 'memberAway':
      if (!isMe || message.reason === 'away') {
        // A client closed on purpose (`connection: "closed"`) stepped out; without it (lost, or an older
        // server), the connection was lost.
        const key = message.reason === 'away' ? 'evAway' : message.connection === 'closed' ? 'evClosed' : 'evDisconnected';
        feed(key, { name: name(subject) });
      }
      break;
    case 'memberBack':
      feed('evBack', { name: name(subject) });
      break;
    case 'memberLeft':
      feed({ expired: 'evExpired', removed: 'evRemoved' }[message.reason] ?? 'evLeft', { name: name(subject) });
      break;
    case 'control':
      // Another member's settings make our own "saved" note old news.
      if (message.action === 'configure' && !isMe) effects.push({ type: 'settingsNoteCleared' });
      if (message.action === 'extend') {
        const minutes = Math.round((Math.abs(message.seconds) / 60) * 10) / 10;
        feed(message.seconds >= 0 ? 'evExtend' : 'evShorten', { name: name(subject), n: minutes });
        announceControl(effects, message.seconds >= 0 ? 'evExtend' : 'evShorten', { name: name(subject), n: minutes });
      } else if (CONTROL_WORDS[message.action]) {
        feed(CONTROL_WORDS[message.action], { name: name(subject) });
        if (message.action !== 'configure') announceControl(effects, CONTROL_WORDS[message.action], { name: name(subject) });
      }
      break;
    case 'hostChanged':
      if (message.member) {
        feed('evHostChanged', { name: name(message.member) });
        if (message.member === state.me) effects.push({ type: 'announce', text: { key: 'announceHostYou', values: {} } });
      } else {
        feed('evHostNone');
      }
      break;
    case 'controlModeChanged':
      feed(message.mode === 'host' ? 'evModeHost' : 'evModeAnyone', { name: name(message.by) });
      break;
    case 'scheduleWarning': {
      const words = { key: 'evScheduleWarning', values: { name: message.name, n: message.minutes } };
      feed(words.key, words.values);
      effects.push({ type: 'notify', title: words, body: { key: 'evScheduleWarning', values: words.values } });
      break;
    }
    case 'scheduleStarted':
      feed('evScheduleStarted', { name: message.name }, 'focus');
      effects.push({ type: 'announce', text: { key: 'evScheduleStarted', values: { name: message.name } } });
      break;
    case 'scheduleMissed':
      feed(message.busy ? 'evScheduleSkipped' : 'evScheduleMissed', { name: message.name });
      break;
    case 'scheduleEnded':
      feed('evScheduleEnded', { name: message.name, n: message.focusSessions });
      break;
    case 'lockChanged':
      feed(message.locked ? 'evLocked' : 'evUnlocked', { name: name(message.by) });
      break;
    case 'webhookDisabled':
      feed('evWebhookDisabled', { n: message.webhook });
      break;
    default:
      break; // event kinds from later versions
  }
  return next;
}

/** A start, pause, resume, skip, reset or extension is said with who did it and the room as it now stands. */
function announceControl(effects, key, values) {
  effects.push({ type: 'announce', text: { key, values }, summary: true });
}

function ok(state, message, effects) {
  let next = state;
  if (message.command === 'control' && message.ref === state.controlRef) {
    // The switch already shows the new mode; the state that confirms it may come before or after this.
    next = { ...next, controlRef: null };
    effects.push({ type: 'controls' });
  }
  if (message.command === 'configure' && message.ref === state.configureRef) {
    next = { ...next, configureRef: null, settingsDirty: false };
    effects.push({ type: 'settingsSaved', appliesFrom: message.appliesFrom || 'now' });
    effects.push({ type: 'render' });
  }
  if (answers(message, state.scheduleRef)) {
    next = { ...next, scheduleRef: null };
    effects.push({ type: 'scheduleSaved' });
  }
  if (answers(message, state.taskRef)) next = { ...next, taskRef: null };
  return next;
}

const answers = (message, ref) => message.ref !== undefined && message.ref === ref;

function error(state, message, effects) {
  if (answers(message, state.stats.ref)) return statsError(state, message, effects);
  if (answers(message, state.configureRef)) {
    effects.push({ type: 'settingsError', error: message });
    return { ...state, configureRef: null };
  }
  if (answers(message, state.scheduleRef)) {
    effects.push({ type: 'scheduleError', error: message });
    return { ...state, scheduleRef: null };
  }
  // Being replaced or removed ends the connection: the connection reports it as a state.
  if (message.code === 'replaced' || message.code === 'removed') return state;
  let next = state;
  if (answers(message, state.taskRef)) {
    // The others still see the task the server holds: so does this member's own field, and the notice says why.
    next = { ...next, taskRef: null, taskSent: null };
    effects.push({ type: 'taskRefused' });
  }
  if (answers(message, state.controlRef)) {
    next = { ...next, controlRef: null }; // the switch goes back to what the room says
    effects.push({ type: 'render' });
  }
  effects.push({ type: 'notice', title: { key: 'errorTitle' }, error: message });
  return next;
}

function statsError(state, message, effects) {
  const stats = { ...state.stats, ref: null, loading: false };
  if (message.field === 'tz' && stats.tz) {
    // A zone the server does not know: ask again without it, in the server's default (UTC).
    effects.push({ type: 'dropTimeZone' }, { type: 'refreshStats' });
    return { ...state, stats };
  }
  effects.push({ type: 'statsPanel' });
  return { ...state, stats: { ...stats, error: message } };
}

/** Only the answer to the latest request: an older one would show older numbers. */
function stats(state, message, effects) {
  if (message.ref === undefined || message.ref !== state.stats.ref) return state;
  effects.push({ type: 'statsPanel' });
  return { ...state, stats: { ...state.stats, ref: null, loading: false, error: null, data: message } };
}

/** The room's schedules: only for the room shown (a list for another room is old news). */
function schedules(state, message, effects) {
  if (!state.room || message.room !== state.room.id || !Array.isArray(message.schedules)) return state;
  effects.push({ type: 'schedules' });
  return { ...state, schedules: message.schedules };
}

/** The room's API tokens: only for the room shown. A token just made comes once, in `created`. */
function apiTokens(state, message, effects) {
  if (!state.room || message.room !== state.room.id || !Array.isArray(message.tokens)) return state;
  effects.push({ type: 'apiTokens' });
  return { ...state, apiTokens: message.tokens, createdToken: message.created ?? null };
}
