// The page's room model (web/roommodel.js) under Node, fed the golden server messages the Swift tests pin
// (Tests/fixtures/wire/server/): what the server writes is what the page reads. Every golden message has a
// check here; a new one without a check fails, and so does a message type or event kind the model does not
// know, so the page and the server cannot drift apart. test_room.py runs this when node is installed.
//   node Tests/browser/room_model.mjs

import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const web = (file) => import(path.join(here, '../../web', file));
const M = await web('roommodel.js');
const { say, errorText, errorWithDetail } = await web('wording.js');
const { remainingMs } = await web('clock.js');
const { DEFAULT_LIMITS } = await web('limits.js');
const { setLanguage } = await web('i18n.js');
// setLanguage marks the page's language; a stand-in document is enough here.
globalThis.document ??= { documentElement: {}, querySelectorAll: () => [] };

const folder = path.join(here, '../fixtures/wire/server');
const files = readdirSync(folder).filter((f) => f.endsWith('.json')).sort();
/** A golden message, frozen all the way down: the model may not change what it is given. */
const golden = (name) => deepFreeze(JSON.parse(readFileSync(path.join(folder, `${name}.json`), 'utf8')));

function deepFreeze(value) {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

const NOW = 1767225700000;
/** One message through the model, from a frozen state. */
const step = (state, message, now = NOW) => M.reduce(deepFreeze(state), message, { now });
/** The state after a run of messages, and the effects of the last one. */
function run(messages, state = M.initialState()) {
  let effects = [];
  for (const message of messages) ({ state, effects } = step(state, message));
  return { state, effects };
}
const ofType = (effects, type) => effects.filter((e) => e.type === type);
const feedText = (effects) => ofType(effects, 'feed').map((e) => say(e.text));
const joined = () => run([golden('welcome')]).state; // m1 (Ada) in team-alpha, with m2 (Zoë) away

const checks = [];
/** Checks by golden file: every file in the folder must have one. */
const byFixture = new Map();
const check = (name, fn) => checks.push([name, fn]);
const fixture = (file, name, fn) => { byFixture.set(file, true); check(`${file}: ${name}`, fn); };

// MARK: the model knows every golden message, and the tests check each one

check('every golden server message is a type the model knows, and every type it knows has one', () => {
  const types = new Set(files.map((f) => JSON.parse(readFileSync(path.join(folder, f), 'utf8')).type));
  for (const type of types) assert.ok(M.SERVER_MESSAGES.includes(type), `the model does not know '${type}'`);
  for (const type of M.SERVER_MESSAGES) assert.ok(types.has(type), `no golden '${type}' message`);
});

check('every golden event kind is one the model has words for, and every kind it has words for is golden', () => {
  const kinds = new Set(files.map((f) => JSON.parse(readFileSync(path.join(folder, f), 'utf8')))
    .filter((m) => m.type === 'event').map((m) => m.kind));
  for (const kind of kinds) assert.ok(M.EVENT_KINDS.includes(kind), `the model does not know the event '${kind}'`);
  for (const kind of M.EVENT_KINDS) assert.ok(kinds.has(kind), `no golden '${kind}' event`);
});

// MARK: snapshots and seq order

fixture('welcome.json', 'the room is the welcome\'s, the member is me, the server\'s limits are taken', () => {
  const message = golden('welcome');
  const { state, effects } = step(M.initialState(), message);
  assert.deepEqual(state.room, message.room);
  assert.equal(state.me, 'm1');
  assert.equal(state.seq, 42);
  assert.deepEqual(state.names, { m1: 'Ada', m2: 'Zoë "Z" 🍅' });
  assert.deepEqual({ ...state.limits }, message.limits);
  assert.deepEqual(effects.map((e) => e.type), ['serverTime', 'limits', 'render', 'welcomed']);
  assert.equal(effects[0].serverTime, 1767225601000);
});

fixture('welcome-resumed.json', 'a welcome is taken even when its seq is older than the room shown', () => {
  const { state } = run([golden('welcome'), golden('welcome-resumed')]);
  assert.equal(state.seq, 2);
  assert.equal(state.room.status, 'idle');
});

check('a passcode or host-only asked of a room that already existed is noted once; of a new room, not', () => {
  const asking = M.joinStarted(M.initialState(), 'team-alpha', { passcode: 'secret', control: 'host' });
  const unapplied = step(asking, golden('welcome-resumed')); // unlocked, anyone controls
  assert.deepEqual(ofType(unapplied.effects, 'notice'), [{ type: 'notice', text: { key: 'accessNotApplied' } }]);
  assert.equal(unapplied.state.asked, null);
  const again = step(unapplied.state, golden('welcome-resumed'));
  assert.deepEqual(ofType(again.effects, 'notice'), []);
  const applied = step(asking, golden('welcome')); // locked, host-only: what was asked
  assert.deepEqual(ofType(applied.effects, 'notice'), []);
  const hostOnly = step(M.joinStarted(M.initialState(), 'team-alpha', { control: 'host' }), golden('welcome-resumed'));
  assert.equal(ofType(hostOnly.effects, 'notice').length, 1);
});

fixture('state.json', 'a newer snapshot replaces the room', () => {
  const { state, effects } = run([golden('welcome-resumed'), golden('state')]);
  assert.deepEqual(state.room, golden('state').room);
  assert.equal(state.seq, 42);
  // My task in it differs from the welcome's, and this page did not send it: said to screen readers.
  assert.deepEqual(effects, [{ type: 'serverTime', serverTime: 1767225601000 }, { type: 'render' },
    { type: 'announce', text: { key: 'announceTask', values: { task: 'Write the codec' } } }]);
});

check('my own task coming back is not news; cleared by someone else, it is', () => {
  const welcomed = run([golden('welcome-resumed')]).state;
  const sent = M.taskSent(welcomed, 'Write the codec');
  const echo = step(sent, golden('state'));
  assert.deepEqual(ofType(echo.effects, 'announce'), []);
  assert.equal(echo.state.taskSent, null);
  const room = golden('state').room;
  const cleared = { type: 'state', room: { ...room, seq: room.seq + 1, members: room.members.map((m) => (m.id === 'm1' ? { ...m, task: '' } : m)) } };
  assert.deepEqual(ofType(step(echo.state, cleared).effects, 'announce').map((e) => say(e.text)), ['Your task was cleared']);
  // Another member's task is theirs: nothing said.
  const theirs = { type: 'state', room: { ...room, seq: room.seq + 1, members: room.members.map((m) => (m.id === 'm2' ? { ...m, task: 'x' } : m)) } };
  assert.deepEqual(ofType(step(echo.state, theirs).effects, 'announce'), []);
});

check('a start, pause, resume, skip, reset or extension is announced with the room after it; a configure is not', () => {
  const said = (overrides) => ofType(step(joined(), { ...golden('event-control'), ...overrides }).effects, 'announce');
  for (const action of ['start', 'pause', 'resume', 'skip', 'reset']) {
    const announced = said({ action, by: 'm2' });
    assert.equal(announced.length, 1, action);
    assert.equal(announced[0].summary, true, action);
  }
  assert.deepEqual(said({ action: 'start', by: 'm2' }).map((e) => say(e.text)), ['Zoë "Z" 🍅 started the timer']);
  assert.deepEqual(said({ action: 'extend', by: 'm1', seconds: 180 }).map((e) => say(e.text)), ['Ada added 3 min']);
  assert.deepEqual(said({ action: 'configure', by: 'm2' }), []);
});

fixture('state-idle.json', 'an older snapshot is ignored: the room stays as it was', () => {
  const before = joined();
  const { state, effects } = step(before, golden('state-idle'));
  assert.equal(state, before);
  assert.equal(state.room.status, 'running');
  assert.deepEqual(ofType(effects, 'render'), []);
});

fixture('state-big-room.json', 'a big room: the counts are the whole room\'s, the names the listed members\'', () => {
  const { state } = run([golden('welcome'), golden('state-big-room')]);
  assert.equal(state.seq, 9000);
  assert.equal(state.room.memberCount, 250);
  assert.equal(state.room.members.length, 3);
  assert.equal(M.nameOf(state, 'm3'), 'Member 3');
  assert.equal(M.myName(state), 'Member 1');
  // My row is drawn first, listed or not.
  const second = { ...golden('welcome'), you: { ...golden('welcome').you, id: 'm2' } };
  const listed = run([second, golden('state-big-room')]).state;
  assert.deepEqual(M.shownMembers(listed).map((m) => m.id), ['m2', 'm1', 'm3']);
});

fixture('you.json', 'a member a big room leaves out knows themselves: their row first, their task, their away', () => {
  // Joined as m150: the welcome's room lists m1 and m2, not me.
  const welcome = { ...golden('welcome'), you: { ...golden('welcome').you, id: 'm150' } };
  let { state } = run([welcome]);
  assert.equal(M.myMember(state), null);
  assert.equal(M.myName(state), '');
  const message = golden('you');
  const stepped = step(state, message);
  state = stepped.state;
  assert.deepEqual(M.myMember(state), message.member);
  assert.equal(M.myName(state), 'Cy');
  assert.deepEqual(M.shownMembers(state).map((m) => m.id), ['m150', 'm1', 'm2']);
  assert.equal(ofType(stepped.effects, 'render').length, 1);
  // Not sent by this page: my task changed elsewhere, and is said.
  assert.equal(ofType(stepped.effects, 'announce').length, 0, 'nothing to compare with before the first');
  const changed = step(state, { ...message, member: { ...message.member, task: 'Review' } });
  assert.equal(ofType(changed.effects, 'announce').length, 1);
  // Sent by this page: its echo is not news.
  const sent = step(M.taskSent(state, 'Plan'), { ...message, member: { ...message.member, task: 'Plan' } });
  assert.equal(ofType(sent.effects, 'announce').length, 0);
  assert.equal(sent.state.taskSent, null);
  // Someone else's, or another room's: ignored.
  assert.equal(step(state, { ...message, member: { ...message.member, id: 'm151' } }).state, state);
  assert.equal(step(state, { ...message, room: 'elsewhere' }).state, state);
  // A state that lists me is taken over the `you`; a welcome forgets it.
  const listed = { ...golden('state'), room: { ...golden('state').room, seq: 99,
    members: [...golden('state').room.members, { ...message.member, task: 'Listed now' }] } };
  assert.equal(M.myMember(step(state, listed).state).task, 'Listed now');
  assert.equal(M.myMember(step(state, welcome).state), null);
});

// MARK: ticks

fixture('tick.json', 'a tick moves the clock: the remaining time runs from endsAt', () => {
  const message = golden('tick');
  const { state, effects } = step(joined(), message);
  assert.equal(state.room.remainingMs, 1498000);
  assert.equal(state.room.endsAt, 1767227099000);
  const at = (now) => ({ now: () => now });
  assert.equal(remainingMs(state.room, at(message.serverTime)), 1767227099000 - message.serverTime);
  assert.equal(remainingMs(state.room, at(1767227099000 + 5)), 0);
  assert.deepEqual(effects.map((e) => e.type), ['serverTime', 'frame']);
  assert.equal(state.seq, 42, 'a tick does not move the snapshot order');
});

check('a tick older than the snapshot, for another room, or before any room, is ignored', () => {
  const before = joined();
  for (const message of [
    { ...golden('tick'), seq: 41, remainingMs: 5 },
    { ...golden('tick'), room: 'team-beta', remainingMs: 5 },
  ]) {
    const { state, effects } = step(before, message);
    assert.equal(state, before);
    assert.deepEqual(ofType(effects, 'frame'), []);
  }
  const nobody = M.initialState();
  assert.equal(step(nobody, golden('tick')).state, nobody);
});

check('a tick without endsAt (paused) keeps the last one, and takes the phase and cycle', () => {
  const { state } = step(joined(), { ...golden('tick'), endsAt: null, phase: 'shortBreak', cycle: 3, remainingMs: 1000 });
  assert.equal(state.room.endsAt, 1767227099000);
  assert.equal(state.room.phase, 'shortBreak');
  assert.equal(state.room.cycle, 3);
  assert.equal(state.room.remainingMs, 1000);
});

// MARK: events: the activity feed, and what else each one sets off

const eventLines = (name, state = joined(), overrides = {}) => feedText(step(state, { ...golden(name), ...overrides }).effects);

fixture('event-phaseCompleted.json', 'a focus phase ends: feed, announcement, chime, notification, fresh stats', () => {
  const { effects } = step(joined(), golden('event-phaseCompleted'));
  assert.deepEqual(ofType(effects, 'feed'), [{ type: 'feed', text: { key: 'evCompleted', values: { phase: { key: 'phase_focus' } } }, at: NOW, phase: 'focus' }]);
  assert.deepEqual(feedText(effects), ['Focus complete']);
  assert.deepEqual(ofType(effects, 'announce').map((e) => say(e.text)), ['Focus complete. Short break has started.']);
  assert.deepEqual(ofType(effects, 'chime'), [{ type: 'chime', phase: 'focus' }]);
  assert.deepEqual(ofType(effects, 'notify').map((e) => [say(e.title), say(e.body)]), [['Focus complete', 'Time for a Short break.']]);
  assert.equal(ofType(effects, 'refreshStats').length, 1);
});

check('a break ends: the notification says back to focus, and the stats are not asked for', () => {
  const { effects } = step(joined(), { ...golden('event-phaseCompleted'), completed: 'shortBreak', next: 'focus', autoStarted: false });
  assert.deepEqual(ofType(effects, 'announce').map((e) => say(e.text)), ['Short break complete. Focus is next.']);
  assert.deepEqual(ofType(effects, 'notify').map((e) => [say(e.title), say(e.body)]), [['Break is over', 'Back to focus.']]);
  assert.equal(ofType(effects, 'refreshStats').length, 0);
});

fixture('event-memberJoined.json', 'a new member\'s name is learnt and said', () => {
  const { state, effects } = step(joined(), golden('event-memberJoined'));
  assert.equal(M.nameOf(state, 'm2'), 'Lin');
  assert.deepEqual(feedText(effects), ['Lin joined']);
  assert.deepEqual(eventLines('event-memberJoined', joined(), { member: 'm1', name: 'Ada' }), [], 'my own join is not news');
});

fixture('event-memberReturned.json', 'another member is back in the room', () => {
  assert.deepEqual(eventLines('event-memberReturned'), ['Zoë "Z" 🍅 came back']);
  assert.deepEqual(eventLines('event-memberReturned', joined(), { member: 'm1' }), []);
});

fixture('event-memberAway.json', 'stepping away is said, mine too', () => {
  assert.deepEqual(eventLines('event-memberAway'), ['Zoë "Z" 🍅 stepped away']);
  assert.deepEqual(eventLines('event-memberAway', joined(), { member: 'm1' }), ['Ada stepped away']);
});

fixture('event-memberAway-disconnected.json', 'a lost connection is said, but not my own', () => {
  assert.deepEqual(eventLines('event-memberAway-disconnected'), ['Zoë "Z" 🍅 lost the connection']);
  assert.deepEqual(eventLines('event-memberAway-disconnected', joined(), { member: 'm1' }), []);
  // A server that does not say how (an older one, or after its restart): lost, as before.
  assert.deepEqual(eventLines('event-memberAway-disconnected', joined(), { connection: undefined }),
    ['Zoë "Z" 🍅 lost the connection']);
});

fixture('event-memberAway-closed.json', 'a client closed on purpose stepped out, and is not said to have lost anything', () => {
  assert.deepEqual(eventLines('event-memberAway-closed'), ['Zoë "Z" 🍅 stepped out']);
  assert.deepEqual(eventLines('event-memberAway-closed', joined(), { member: 'm1' }), [], 'not my own');
  assert.deepEqual(eventLines('event-memberAway-closed', joined(), { connection: 'teleported' }),
    ['Zoë "Z" 🍅 lost the connection'], 'a value from a later server reads as lost');
});

fixture('event-memberBack.json', 'back from away', () => {
  assert.deepEqual(eventLines('event-memberBack'), ['Zoë "Z" 🍅 is back']);
});

fixture('event-memberLeft.json', 'a member left; one this page never saw is "Someone"', () => {
  assert.deepEqual(eventLines('event-memberLeft'), ['Zoë "Z" 🍅 left']);
  assert.deepEqual(eventLines('event-memberLeft', joined(), { member: 'm9' }), ['Someone left']);
});

fixture('event-memberLeft-expired.json', 'a member timed out', () => {
  assert.deepEqual(eventLines('event-memberLeft-expired'), ['Zoë "Z" 🍅 left (timed out)']);
});

fixture('event-control.json', 'a command is said with who gave it', () => {
  assert.deepEqual(eventLines('event-control'), ['Ada paused']);
  assert.deepEqual(eventLines('event-control', joined(), { action: 'configure', by: 'm2' }), ['Zoë "Z" 🍅 changed the settings']);
  assert.equal(ofType(step(joined(), { ...golden('event-control'), action: 'configure', by: 'm2' }).effects, 'settingsNoteCleared').length, 1);
  assert.equal(ofType(step(joined(), { ...golden('event-control'), action: 'configure' }).effects, 'settingsNoteCleared').length, 0,
    'my own settings keep my "saved" note');
  assert.deepEqual(eventLines('event-control', joined(), { action: 'later' }), [], 'an action from a later version');
});

fixture('event-control-extend.json', 'an extension in minutes, and a shortening', () => {
  assert.deepEqual(eventLines('event-control-extend'), ['Ada added 5 min']);
  assert.deepEqual(eventLines('event-control-extend', joined(), { seconds: -90 }), ['Ada took off 1.5 min']);
});

fixture('event-hostChanged.json', 'a new host; being made host is announced to me', () => {
  const other = step(joined(), golden('event-hostChanged')).effects;
  assert.deepEqual(feedText(other), ['Zoë "Z" 🍅 is now the host']);
  assert.deepEqual(ofType(other, 'announce'), []);
  const me = step(joined(), { ...golden('event-hostChanged'), member: 'm1' }).effects;
  assert.deepEqual(ofType(me, 'announce').map((e) => say(e.text)), ['You are now the host']);
});

fixture('event-hostChanged-nobody.json', 'nobody hosts', () => {
  assert.deepEqual(eventLines('event-hostChanged-nobody'), ['Nobody is hosting now']);
});

fixture('event-controlModeChanged.json', 'host-only and back', () => {
  assert.deepEqual(eventLines('event-controlModeChanged'), ['Ada made the timer host-only']);
  assert.deepEqual(eventLines('event-controlModeChanged', joined(), { mode: 'anyone' }), ['Ada let everyone control the timer']);
});

fixture('event-scheduleWarning.json', 'a warning names the schedule and the minutes, in the feed and as a notification', () => {
  const { effects } = step(joined(), golden('event-scheduleWarning'));
  assert.deepEqual(feedText(effects), ['Writing block starts in 5 min']);
  assert.deepEqual(ofType(effects, 'notify').map((e) => say(e.title)), ['Writing block starts in 5 min']);
  assert.deepEqual(eventLines('event-scheduleWarning', joined(), { minutes: 1 }), ['Writing block starts in 1 min']);
});

fixture('event-scheduleStarted.json', 'a scheduled start is said and announced', () => {
  const { effects } = step(joined(), golden('event-scheduleStarted'));
  assert.deepEqual(feedText(effects), ['Writing block started on schedule']);
  assert.deepEqual(ofType(effects, 'announce').map((e) => say(e.text)), ['Writing block started on schedule']);
});

fixture('event-scheduleMissed.json', 'skipped while busy, or missed', () => {
  assert.deepEqual(eventLines('event-scheduleMissed'), ['Writing block was skipped: a session was running']);
  assert.deepEqual(eventLines('event-scheduleMissed', joined(), { busy: false }), ['Writing block was missed']);
});

fixture('event-scheduleEnded.json', 'the set is done', () => {
  assert.deepEqual(eventLines('event-scheduleEnded'), ['Writing block is done: 4 focus sessions']);
  assert.deepEqual(eventLines('event-scheduleEnded', joined(), { focusSessions: 1 }), ['Writing block is done: 1 focus session']);
});

fixture('schedules.json', "the room's schedules are kept for the room shown only", () => {
  const { state, effects } = step(joined(), golden('schedules'));
  assert.deepEqual(state.schedules, golden('schedules').schedules);
  assert.deepEqual(effects, [{ type: 'schedules' }]);
  const other = step(joined(), { ...golden('schedules'), room: 'team-beta' });
  assert.equal(other.state.schedules, null);
  assert.deepEqual(other.effects, []);
  assert.equal(step(M.initialState(), golden('schedules')).state.schedules, null);
});

fixture('apiTokens.json', "the room's API tokens are kept for the room shown, the one just made with them", () => {
  const { state, effects } = step(joined(), golden('apiTokens'));
  assert.deepEqual(state.apiTokens, golden('apiTokens').tokens);
  assert.deepEqual(state.createdToken, golden('apiTokens').created);
  assert.deepEqual(effects, [{ type: 'apiTokens' }]);
  const listed = step(state, { ...golden('apiTokens'), created: undefined }).state;
  assert.equal(listed.createdToken, null, 'a later list no longer shows the token');
  const other = step(joined(), { ...golden('apiTokens'), room: 'team-beta' });
  assert.equal(other.state.apiTokens, null);
  assert.deepEqual(other.effects, []);
  assert.equal(M.left(state).apiTokens, null);
});

fixture('event-control-api.json', 'a command carried by an API token names the token', () => {
  assert.deepEqual(eventLines('event-control-api'), ['api:deploy bot started the timer']);
});

fixture('state-next-session.json', 'the next session comes with the room', () => {
  const { state } = run([golden('welcome-resumed'), golden('state-next-session')]);
  assert.deepEqual(state.room.nextSession, { schedule: 's1', name: 'Writing block', startsAt: 1767312000000 });
});

fixture('state-aligned.json', 'an aligned room says its zone in its settings, and its summary says it runs on the clock', () => {
  const { state } = run([golden('welcome'), golden('state-aligned')]);
  assert.equal(state.room.settings.aligned, 'Europe/Berlin');
  assert.equal(run([golden('welcome'), golden('state')]).state.room.settings.aligned, undefined, 'absent when not aligned');
});

fixture('state-scheduled-run.json', 'a scheduled run counts its own set: focus 2 of 3, not the long-break cycle', () => {
  const { state } = run([golden('welcome'), golden('state-scheduled-run')]);
  assert.deepEqual(state.room.scheduledRun, { schedule: 's1', name: 'Writing block', focusSessions: 3, focusDone: 1 });
  assert.deepEqual(M.setPosition(state.room), { name: 'Writing block', n: 2, total: 3, dots: ['done', 'current', 'todo'] });
  const inBreak = { ...state.room, phase: 'shortBreak' };
  assert.deepEqual(M.setPosition(inBreak), { name: 'Writing block', n: 1, total: 3, dots: ['done', 'todo', 'todo'] },
    'during a break the focus just done, as the cycle');
  const last = { ...state.room, scheduledRun: { ...state.room.scheduledRun, focusDone: 3 }, phase: 'shortBreak' };
  assert.equal(M.setPosition(last).n, 3, 'never past the set');
  const plain = run([golden('welcome'), golden('state')]).state.room;
  assert.equal(plain.scheduledRun, undefined, 'absent while the room runs on its own');
  assert.deepEqual(M.setPosition(plain), { name: null, n: 2, total: 4, dots: ['done', 'current', 'todo', 'todo'] });
});

fixture('state-scheduled-run-open.json', 'a scheduled run until stopped has a count and no dots', () => {
  const { state } = run([golden('welcome'), golden('state-scheduled-run-open')]);
  assert.deepEqual(state.room.scheduledRun, { schedule: 's2', name: 'Open studio', focusSessions: null, focusDone: 0 });
  assert.deepEqual(M.setPosition(state.room), { name: 'Open studio', n: 1, total: null, dots: [] });
});

check('the cycle dots without a scheduled run follow the long-break cycle', () => {
  const room = { phase: 'focus', status: 'running', cycle: 2, settings: { longBreakEvery: 4 } };
  assert.deepEqual(M.setPosition(room).dots, ['done', 'current', 'todo', 'todo']);
  assert.deepEqual(M.setPosition({ ...room, phase: 'shortBreak' }).dots, ['done', 'done', 'todo', 'todo']);
  assert.deepEqual(M.setPosition({ ...room, phase: 'idle', status: 'idle', cycle: 1 }).dots, ['todo', 'todo', 'todo', 'todo']);
});

check('the feed is stamped with the time it came in, and an unknown kind says nothing', () => {
  const { effects } = step(joined(), golden('event-memberBack'), 1234);
  assert.equal(ofType(effects, 'feed')[0].at, 1234);
  assert.deepEqual(eventLines('event-memberBack', joined(), { kind: 'fromLater' }), []);
});

// MARK: answers to requests

fixture('ok.json', 'an ok nobody waits for changes nothing', () => {
  const before = joined();
  const { state, effects } = step(before, golden('ok'));
  assert.equal(state, before);
  assert.deepEqual(effects, []);
});

fixture('ok-configure.json', 'the settings were saved: the form is clean, and says when they apply', () => {
  const waiting = M.settingsEdited(M.requestSent(joined(), 'configure', 'cfg'), true);
  const { state, effects } = step(waiting, golden('ok-configure'));
  assert.equal(state.configureRef, null);
  assert.equal(state.settingsDirty, false);
  assert.deepEqual(effects, [{ type: 'settingsSaved', appliesFrom: 'nextPhase' }, { type: 'render' }]);
  const other = step(M.requestSent(joined(), 'configure', 'cfg2'), golden('ok-configure'));
  assert.equal(other.state.configureRef, 'cfg2');
  assert.deepEqual(other.effects, []);
});

check('the schedule form waits for the answer to its ref alone, ok or error; a new connection ends the wait', () => {
  const waiting = M.requestSent(joined(), 'schedule', 's1');
  assert.equal(waiting.scheduleRef, 's1');
  const other = step(waiting, { type: 'ok', command: 'addSchedule', ref: 's0' });
  assert.equal(other.state.scheduleRef, 's1', 'the answer to another request');
  const saved = step(waiting, { type: 'ok', command: 'addSchedule', ref: 's1' });
  assert.equal(saved.state.scheduleRef, null);
  assert.deepEqual(saved.effects, [{ type: 'scheduleSaved' }]);
  const refused = step(waiting, { ...golden('error'), ref: 's1' });
  assert.equal(refused.state.scheduleRef, null);
  assert.deepEqual(refused.effects.map((e) => e.type), ['scheduleError']);
  // Back after a dropped connection: the request it carried is answered on none, so the form may send again.
  assert.equal(step(waiting, golden('welcome')).state.scheduleRef, null);
});

check('a connection that closes answers none of its requests: the forms and the switch stop waiting, and say so', () => {
  const waiting = M.taskSent(M.requestSent(M.requestSent(M.settingsEdited(M.requestSent(joined(), 'configure', 'c1'), true),
    'schedule', 's1'), 'control', 'k1'), 'review', 't1');
  const { state, effects } = M.connectionClosed(deepFreeze(waiting));
  assert.deepEqual(effects, [{ type: 'settingsUnanswered' }, { type: 'scheduleUnanswered' }]);
  assert.deepEqual([state.configureRef, state.scheduleRef, state.controlRef, state.taskRef], [null, null, null, null]);
  // What was typed stays: the settings are still edited (a snapshot does not fill the form over them), and the
  // task sent may still come back in a snapshot as this page's own.
  assert.equal(state.settingsDirty, true);
  assert.equal(state.taskSent, 'review');
  // Each form is told only about its own request; with nothing awaited nothing changes.
  assert.deepEqual(M.connectionClosed(M.requestSent(joined(), 'schedule', 's2')).effects, [{ type: 'scheduleUnanswered' }]);
  const switchOnly = M.connectionClosed(M.requestSent(joined(), 'control', 'k2'));
  assert.deepEqual(switchOnly.effects, []);
  assert.equal(switchOnly.state.controlRef, null);
  const idle = joined();
  assert.equal(M.connectionClosed(idle).state, idle);
  assert.deepEqual(M.connectionClosed(idle).effects, []);
  // A late answer to the old ref, should one come, is nobody's: an ok changes nothing, an error is a notice.
  const late = step(state, { type: 'ok', command: 'configure', ref: 'c1', appliesFrom: 'now' });
  assert.deepEqual(late.effects, []);
  assert.deepEqual(step(state, { ...golden('error'), ref: 's1' }).effects.map((e) => e.type), ['notice']);
});

check('the welcome of a rejoin ends every wait the dropped connection left, as a close does', () => {
  const waiting = M.requestSent(M.requestSent(M.requestSent(joined(), 'configure', 'c1'), 'control', 'k1'), 'schedule', 's1');
  const { state, effects } = step(waiting, golden('welcome'));
  assert.deepEqual([state.configureRef, state.controlRef, state.scheduleRef], [null, null, null]);
  assert.deepEqual(effects.map((e) => e.type),
    ['serverTime', 'limits', 'settingsUnanswered', 'scheduleUnanswered', 'render', 'welcomed']);
  // Going into another room forgets the last one's requests.
  assert.equal(M.joinStarted(M.requestSent(joined(), 'configure', 'c1'), 'other').configureRef, null);
});

check('the host-only switch is confirmed by its ok', () => {
  const waiting = M.requestSent(joined(), 'control', 3);
  const { state, effects } = step(waiting, { type: 'ok', command: 'control', ref: 3 });
  assert.equal(state.controlRef, null);
  assert.deepEqual(effects, [{ type: 'controls' }]);
});

fixture('error.json', 'a refusal nobody waits for is a notice with the server\'s words', () => {
  const { state, effects } = step(joined(), golden('error'));
  assert.deepEqual(effects, [{ type: 'notice', title: { key: 'errorTitle' }, error: golden('error') }]);
  assert.equal(say(effects[0].title), 'Not done:');
  assert.equal(errorWithDetail(effects[0].error), 'That value is not accepted. (seconds must be non-zero)');
  assert.equal(state.configureRef, null);
});

check('an error with the ref of a request goes to that request: the settings form, the switch, the stats', () => {
  const configure = step(M.requestSent(joined(), 'configure', 7), golden('error'));
  assert.deepEqual(configure.effects, [{ type: 'settingsError', error: golden('error') }]);
  assert.equal(configure.state.configureRef, null);

  const control = step(M.requestSent(joined(), 'control', 7), golden('error'));
  assert.equal(control.state.controlRef, null);
  assert.deepEqual(control.effects.map((e) => e.type), ['render', 'notice']);

  const stats = step(M.statsRequested(M.statsOpened(joined(), true), 7, null), golden('error'));
  assert.deepEqual(stats.effects, [{ type: 'statsPanel' }]);
  assert.deepEqual(stats.state.stats.error, golden('error'));
  assert.equal(stats.state.stats.loading, false);
  assert.equal(stats.state.stats.ref, null);
});

check('a time zone the server does not know: the stats are asked again without one', () => {
  const asked = M.statsRequested(M.statsOpened(joined(), true), 7, 'Mars/Olympus');
  const { state, effects } = step(asked, { ...golden('error'), field: 'tz' });
  assert.deepEqual(effects, [{ type: 'dropTimeZone' }, { type: 'refreshStats' }]);
  assert.equal(state.stats.error, null);
  const withoutZone = step(M.statsRequested(asked, 8, null), { ...golden('error'), field: 'tz', ref: 8 });
  assert.deepEqual(withoutZone.effects, [{ type: 'statsPanel' }]);
});

fixture('error-invalid-state.json', 'an error without a ref is a notice, whatever is waiting', () => {
  const waiting = M.requestSent(M.requestSent(joined(), 'configure', 7), 'control', 8);
  const { state, effects } = step(waiting, golden('error-invalid-state'));
  assert.deepEqual(effects.map((e) => e.type), ['notice']);
  assert.equal(state.configureRef, 7);
  assert.equal(state.controlRef, 8);
});

fixture('error-replaced.json', 'being replaced is the connection\'s to report: no notice', () => {
  const before = joined();
  const { state, effects } = step(before, golden('error-replaced'));
  assert.equal(state, before);
  assert.deepEqual(effects, []);
});

fixture('observing.json', 'watching: the room is shown with nobody in it who is me, and nothing is asked of it', () => {
  const message = golden('observing');
  const { state, effects } = step(M.joinStarted(M.initialState(), 'team-alpha'), message);
  assert.deepEqual(state.room, message.room);
  assert.equal(state.me, null);
  assert.equal(state.observing, true);
  assert.equal(state.seq, 42);
  assert.deepEqual(effects.map((e) => e.type), ['serverTime', 'render', 'welcomed']);
  // Its ticks and states follow as a member's do.
  const ticked = step(state, golden('tick'));
  assert.equal(ticked.state.room.remainingMs, 1498000);
  // Joining afterwards (a refused watch, then the join form) is a member's page again.
  assert.equal(M.joinStarted(state, 'team-alpha').observing, false);
  assert.equal(step(state, golden('welcome')).state.observing, false);
});

fixture('error-observer.json', 'a control pressed while watching is a notice in words of its own', () => {
  const { effects } = step(joined(), golden('error-observer'));
  assert.deepEqual(effects.map((e) => e.type), ['notice']);
  assert.equal(errorWithDetail(effects[0].error).startsWith('Watching only: join the room to take part'), true);
});

fixture('stats.json', 'the answer to the latest stats request is shown; an older one is not', () => {
  const message = golden('stats');
  const asked = M.statsRequested(M.statsOpened(joined(), true), 9, 'Europe/Berlin');
  assert.equal(asked.stats.loading, true);
  const { state, effects } = step(asked, message);
  assert.equal(state.stats.data, message);
  assert.equal(state.stats.loading, false);
  assert.equal(state.stats.ref, null);
  assert.deepEqual(effects, [{ type: 'statsPanel' }]);
  const newer = M.statsRequested(asked, 10, 'Europe/Berlin');
  const old = step(newer, message);
  assert.equal(old.state, newer);
  assert.deepEqual(old.effects, []);
});

fixture('pong.json', 'a pong only tells the time', () => {
  const before = joined();
  const { state, effects } = step(before, golden('pong'));
  assert.equal(state, before);
  assert.deepEqual(effects, [{ type: 'serverTime', serverTime: 1767225600000 }]);
});

check('a message type from a later version changes nothing', () => {
  const before = joined();
  const { state, effects } = step(before, { type: 'fromLater', serverTime: 'soon' });
  assert.equal(state, before);
  assert.deepEqual(effects, []);
});

// MARK: what the page does

check('going into another room forgets the last one, but not the limits or an open stats panel', () => {
  const before = M.statsOpened(step(joined(), golden('event-memberJoined')).state, true);
  const state = M.joinStarted(deepFreeze(before), 'team-beta', {});
  assert.equal(state.roomName, 'team-beta');
  assert.equal(state.room, null);
  assert.equal(state.seq, -1);
  assert.equal(state.me, null);
  assert.deepEqual(state.names, {});
  assert.equal(state.asked, null);
  assert.equal(state.stats.open, true);
  assert.equal(state.stats.data, null);
  assert.equal(state.limits, before.limits);
  // After it, the older snapshot of the new room is taken: the order starts again.
  assert.equal(step(state, golden('state-idle')).state.seq, 2);
});

check('before any welcome the page has the limits it was given', () => {
  assert.equal(M.initialState().limits, DEFAULT_LIMITS);
  const kept = { ...DEFAULT_LIMITS, maxNameLength: 8 };
  assert.equal(M.initialState(kept).limits, kept);
});

// MARK: the host's tools

fixture('event-memberLeft-removed.json', 'a member the host removed', () => {
  assert.deepEqual(eventLines('event-memberLeft-removed'), ['The host removed Zoë "Z" 🍅']);
});

fixture('event-lockChanged.json', 'a new passcode is said with who set it', () => {
  assert.deepEqual(eventLines('event-lockChanged'), ['Ada set a new passcode']);
});

fixture('event-lockChanged-unlocked.json', 'the passcode removed', () => {
  assert.deepEqual(eventLines('event-lockChanged-unlocked'), ['Ada removed the passcode']);
});

fixture('event-webhookDisabled.json', 'a webhook the server switched off is said with its number', () => {
  assert.deepEqual(eventLines('event-webhookDisabled'), ['Webhook 2 was switched off: it failed for a day']);
});

fixture('error-removed.json', 'being removed is the connection\'s to report: no notice; its words say for how long', () => {
  const before = joined();
  const { state, effects } = step(before, golden('error-removed'));
  assert.equal(state, before);
  assert.deepEqual(effects, []);
  assert.equal(errorText(golden('error-removed')), 'The host removed you from this room; you may join again in 10 minutes.');
});

fixture('error-banned.json', 'a join refused for a while says for how long, from retryAfter, in the page\'s words', () => {
  const { effects } = step(joined(), golden('error-banned'));
  assert.deepEqual(effects.map((e) => e.type), ['notice']);
  // The length is in the page's sentence: the server's, which says it too, is not added.
  assert.equal(errorWithDetail(effects[0].error), 'The host removed you from this room lately; you may join again in 9 minutes.');
  // The minutes are retryAfter's seconds rounded up, whatever the server's sentence says (or its language).
  assert.equal(errorText({ code: 'banned', message: 'in 9 minutes', retryAfter: 61 }),
    'The host removed you from this room lately; you may join again in 2 minutes.');
  assert.equal(errorText({ code: 'removed', message: 'in 9 minutes', retryAfter: 60 }),
    'The host removed you from this room; you may join again in 1 minute.');
  setLanguage('ko');
  try {
    assert.equal(errorText({ code: 'banned', message: 'in 9 minutes', retryAfter: 301 }),
      '호스트가 최근에 나를 이 방에서 내보냈어요. 6분 후에 다시 들어올 수 있어요.');
  } finally {
    setLanguage('en');
  }
  // From a server without the field: no length is guessed from its words.
  assert.equal(errorWithDetail({ code: 'banned', message: 'the host removed you from this room; you may join again in 9 minutes' }),
    'The host removed you from this room lately; you may join again later. (the host removed you from this room; you may join again in 9 minutes)');
});

check('every golden server message has a check of its own above', () => {
  const missing = files.map((f) => f).filter((f) => !byFixture.has(f));
  assert.deepEqual(missing, [], `golden messages without a check: ${missing.join(', ')}`);
});

let failed = 0;
for (const [name, fn] of checks) {
  try {
    fn();
    console.log(`ok ${name}`);
  } catch (error) {
    failed += 1;
    console.log(`not ok ${name}: ${error.message}`);
  }
}
console.log(`${checks.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
