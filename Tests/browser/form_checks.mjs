// The forms' checks (web/formchecks.js) under Node: a join and the room's settings against the server's
// limits, those of the golden `welcome` (Tests/fixtures/wire/server/welcome.json) and an operator's own.
// test_room.py runs this when node is installed.
//   node Tests/browser/form_checks.mjs

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const F = await import(path.join(here, '../../web/formchecks.js'));
const { limitsFrom } = await import(path.join(here, '../../web/limits.js'));
const welcome = JSON.parse(readFileSync(path.join(here, '../fixtures/wire/server/welcome.json'), 'utf8'));
const limits = limitsFrom(welcome.limits);
const operator = limitsFrom({ ...welcome.limits, maxNameLength: 8, minPasscodeLength: 6, minFocusSeconds: 300, maxLongBreakEvery: 4 });

const checks = [];
const check = (name, fn) => checks.push([name, fn]);
const join = (fields, within = limits) => F.joinProblem({ room: 'team-alpha', name: 'Ada', ...fields }, within);

check('a join: the room id first, then the name, then the passcode', () => {
  assert.equal(join({}), null);
  assert.equal(join({ room: 'team alpha', name: '' }), 'room');
  assert.equal(join({ room: '' }), 'room');
  assert.equal(join({ room: 'a'.repeat(64) }), null);
  assert.equal(join({ room: 'a'.repeat(65) }), 'room');
  assert.equal(join({ name: '', passcode: 'x' }), 'name');
  assert.equal(join({ passcode: 'abc' }), 'passcode');
});

check('a name is as long as the server lets it be, in user-perceived characters and four bytes each', () => {
  assert.equal(join({ name: 'a'.repeat(limits.maxNameLength) }), null);
  assert.equal(join({ name: 'a'.repeat(limits.maxNameLength + 1) }), 'name');
  assert.equal(join({ name: '🍅'.repeat(limits.maxNameLength) }), null);
  assert.equal(join({ name: '🍅'.repeat(limits.maxNameLength + 1) }), 'name');
  // Forty accented letters are eighty code points (and eighty UTF-16 units): forty characters, as the server counts.
  assert.equal(join({ name: 'e\u0301'.repeat(limits.maxNameLength) }), null);
  // Forty thumbs with a skin tone are forty characters but eight bytes each: past the server's byte bound.
  assert.deepEqual(F.overLimit('name', '👍🏽'.repeat(limits.maxNameLength), limits), { max: limits.maxNameLength, n: limits.maxNameLength });
  assert.equal(join({ name: '👍🏽'.repeat(limits.maxNameLength / 2) }), null);
  assert.equal(join({ name: 'Ada Lovelace' }, operator), 'name', 'an operator\'s --max-name-length');
  assert.equal(join({ name: 'Ada Love' }, operator), null);
});

check('a task: the same count against the task\'s own limit, said with the limit and the count', () => {
  const max = limits.maxTaskLength;
  assert.equal(F.overLimit('task', '', limits), null);
  assert.equal(F.overLimit('task', 'a'.repeat(max), limits), null);
  assert.deepEqual(F.overLimit('task', 'a'.repeat(max + 1), limits), { max, n: max + 1 });
  // An emoji is one character, however many UTF-16 units (a maxlength counted those, and cut it in half).
  assert.equal(F.overLimit('task', '🍅'.repeat(max), limits), null);
  assert.deepEqual(F.overLimit('task', '🍅'.repeat(max + 1), limits), { max, n: max + 1 });
  assert.equal(F.overLimit('task', 'e\u0301'.repeat(max), limits), null, 'accented letters of two code points each');
  // Within the characters but past four bytes each: a family emoji is one character of 25 bytes.
  assert.deepEqual(F.overLimit('task', '👨‍👩‍👧‍👦'.repeat(40), limits), { max, n: 40 });
  assert.deepEqual(F.overLimit('task', 'a'.repeat(9), limitsFrom({ ...welcome.limits, maxTaskLength: 8 })), { max: 8, n: 9 },
    'an operator\'s --max-task-length');
});

check('a passcode: none is fine, else within the server\'s bounds in user-perceived characters, spaces counted', () => {
  assert.equal(join({ passcode: '' }), null);
  assert.equal(join({ passcode: 'a'.repeat(limits.minPasscodeLength) }), null);
  assert.equal(join({ passcode: 'a'.repeat(limits.minPasscodeLength - 1) }), 'passcode');
  assert.equal(join({ passcode: 'a'.repeat(limits.maxPasscodeLength + 1) }), 'passcode');
  assert.equal(join({ passcode: '    ' }), null);
  const accented = 'e\u0301'.repeat(4); // eight code points, four characters
  assert.equal(F.characterCount(accented), 4);
  assert.equal(join({ passcode: accented }), null);
  assert.equal(join({ passcode: 'abcde' }, operator), 'passcode');
});

const form = (fields = {}) => ({ focus: '25', shortBreak: '5', longBreak: '15', longBreakEvery: '4', autoStart: false, ...fields });

check('settings: minutes, m:ss and h:mm:ss become seconds', () => {
  assert.deepEqual(F.settingsFrom(form({ shortBreak: '1:30', longBreak: '1:00:00', autoStart: true }), limits), {
    settings: { focus: 1500, shortBreak: 90, longBreak: 3600, longBreakEvery: 4, autoStart: true },
  });
  assert.equal(F.settingsFrom(form({ focus: '0,5' }), { ...limits, minFocusSeconds: 1 }).settings.focus, 30);
});

check('settings: on the clock, the zone is sent, and lengths that do not fill the hour are refused', () => {
  assert.deepEqual(F.settingsFrom(form({ aligned: 'Europe/Berlin' }), limits), {
    settings: { focus: 1500, shortBreak: 300, longBreak: 900, longBreakEvery: 4, autoStart: false, aligned: 'Europe/Berlin' },
  });
  assert.equal(F.settingsFrom(form({ focus: '50', shortBreak: '10', aligned: 'UTC' }), limits).settings.aligned, 'UTC');
  assert.equal(F.settingsFrom(form({ focus: '110', shortBreak: '10', aligned: 'UTC' }), limits).settings.aligned, 'UTC', 'two hours');
  assert.deepEqual(F.settingsFrom(form({ shortBreak: '10', aligned: 'UTC' }), limits).problem, { field: 'aligned' });
  assert.equal('aligned' in F.settingsFrom(form({ aligned: null }), limits).settings, false, 'not aligned: not sent');
});

check('settings: the first length out of bounds is named, with the bounds it broke', () => {
  assert.deepEqual(F.settingsFrom(form({ focus: '0:30', longBreak: 'x' }), limits).problem, { field: 'focus', least: 60, most: 14400 });
  assert.equal(F.settingsFrom(form({ shortBreak: '0:30' }), limits).settings.shortBreak, 30, 'a break may be shorter than focus\'s floor');
  assert.deepEqual(F.settingsFrom(form({ shortBreak: '0' }), limits).problem, { field: 'shortBreak', least: 1, most: 14400 });
  assert.deepEqual(F.settingsFrom(form({ longBreak: '241' }), limits).problem, { field: 'longBreak', least: 1, most: 14400 });
  assert.equal(F.settingsFrom(form({ longBreak: '240' }), limits).settings.longBreak, 14400);
  assert.deepEqual(F.settingsFrom(form({ focus: '4' }), operator).problem, { field: 'focus', least: 300, most: 14400 },
    'an operator\'s --min-focus');
});

check('settings: a long break every 1 to the server\'s most phases, whole numbers only', () => {
  assert.equal(F.settingsFrom(form({ longBreakEvery: '12' }), limits).settings.longBreakEvery, 12);
  for (const every of ['0', '13', '2.5', '', 'x']) {
    assert.deepEqual(F.settingsFrom(form({ longBreakEvery: every }), limits).problem, { field: 'longBreakEvery' }, every);
  }
  assert.deepEqual(F.settingsFrom(form({ longBreakEvery: '5' }), operator).problem, { field: 'longBreakEvery' });
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
