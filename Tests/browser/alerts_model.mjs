// The page's alerts and keys as pure functions under Node: when the "1 minute left" warning goes off
// (web/alerts.js, times as arguments), the end sounds and the volume, and which command each key stands
// for (web/keys.js, the same keys as pomo's). test_room.py runs this when node is installed.
//   node Tests/browser/alerts_model.mjs

import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const A = await import(path.join(here, '../../web/alerts.js'));
const K = await import(path.join(here, '../../web/keys.js'));

const checks = [];
const check = (name, fn) => checks.push([name, fn]);

const MIN = 60 * 1000;
const room = (fields = {}) => ({ id: 'team-alpha', phase: 'focus', cycle: 1, status: 'running', ...fields });

/** The room looked at at each remaining time in turn: the times at which the warning went off. */
function warnings(looks, memory = A.NO_WARNING) {
  const fired = [];
  for (const [r, remaining] of looks) {
    const step = A.warningStep(memory, r, remaining);
    memory = step.memory;
    if (step.warn) fired.push(remaining);
  }
  return { fired, memory };
}

check('a running focus warns once, when it crosses one minute left', () => {
  const r = room();
  const { fired } = warnings([[r, 25 * MIN], [r, 2 * MIN], [r, MIN + 1], [r, MIN], [r, 59_000], [r, 30_000], [r, 1]]);
  assert.deepEqual(fired, [MIN]);
});

check('looks half a second apart that skip the exact minute still warn once', () => {
  const r = room();
  assert.deepEqual(warnings([[r, 61_200], [r, 60_700], [r, 60_200], [r, 59_700], [r, 59_200]]).fired, [59_700]);
});

check('a phase of a minute or less, or a room joined with under a minute left, stays quiet', () => {
  assert.deepEqual(warnings([[room(), MIN], [room(), 40_000], [room(), 1_000]]).fired, []);
  assert.deepEqual(warnings([[room(), 30_000], [room(), 20_000]]).fired, []);
});

check('paused or idle: no warning; resumed, the warning comes where it belongs', () => {
  const paused = room({ status: 'paused' });
  assert.deepEqual(warnings([[room(), 5 * MIN], [paused, 50_000], [paused, 50_000]]).fired, []);
  assert.deepEqual(warnings([[room(), 5 * MIN], [paused, 50_000], [room(), 49_000]]).fired, [49_000]);
  assert.deepEqual(warnings([[room({ status: 'idle', phase: 'idle' }), 25 * MIN], [room({ status: 'idle', phase: 'idle' }), 0]]).fired, []);
  assert.deepEqual(warnings([[null, 0]]).fired, []);
});

check('each phase warns for itself: the break after a focus, and the next focus of the set', () => {
  const focus1 = room(), brk = room({ phase: 'shortBreak' }), focus2 = room({ cycle: 2 });
  const { fired } = warnings([[focus1, 2 * MIN], [focus1, 50_000], [brk, 5 * MIN], [brk, 40_000], [focus2, 25 * MIN], [focus2, 10_000]]);
  assert.deepEqual(fired, [50_000, 40_000, 10_000]);
});

check('skipping into a short phase after the arming of a long one does not warn at once', () => {
  // Armed in focus 1 (five minutes left), then skipped into a 45-second break: that break never had a minute.
  const { fired } = warnings([[room(), 5 * MIN], [room({ phase: 'shortBreak' }), 45_000], [room({ phase: 'shortBreak' }), 20_000]]);
  assert.deepEqual(fired, []);
});

check('time added after the warning arms it again: the new last minute is announced too', () => {
  const r = room();
  const { fired } = warnings([[r, 2 * MIN], [r, 59_000], [r, 3 * MIN + 59_000], [r, 2 * MIN], [r, 58_000]]);
  assert.deepEqual(fired, [59_000, 58_000]);
});

check('another room is another phase', () => {
  const { fired } = warnings([[room(), 5 * MIN], [room({ id: 'other' }), 30_000]]);
  assert.deepEqual(fired, []);
});

check('a step never changes the memory it is given', () => {
  const memory = Object.freeze({ phase: 'team-alpha|focus|1', armed: true });
  const step = A.warningStep(memory, room(), 30_000);
  assert.equal(step.warn, true);
  assert.equal(memory.armed, true);
  assert.equal(step.memory.armed, false);
});

check('at least three end sounds, each with notes for a focus, a break and the warning', () => {
  assert.ok(A.SOUNDS.length >= 3, `${A.SOUNDS.length} sounds`);
  for (const sound of A.SOUNDS) {
    for (const event of ['focus', 'shortBreak', 'longBreak', 'warning']) {
      const { voice, notes } = A.notesFor(sound, event);
      assert.ok(['bell', 'marimba', 'square', 'gong'].includes(voice), `${sound}/${event}: voice ${voice}`);
      assert.ok(notes.length >= 1, `${sound}/${event}: no notes`);
      for (const n of notes) {
        assert.ok(n.frequency > 20 && n.frequency < 20000 && n.duration > 0 && n.level > 0 && n.level <= 1 && n.at >= 0,
          `${sound}/${event}: ${JSON.stringify(n)}`);
      }
    }
  }
  // The sounds differ from one another, and a focus's end differs from a break's.
  const shapes = A.SOUNDS.map((s) => JSON.stringify(A.notesFor(s, 'focus')));
  assert.equal(new Set(shapes).size, A.SOUNDS.length);
  for (const sound of A.SOUNDS) assert.notDeepEqual(A.notesFor(sound, 'focus'), A.notesFor(sound, 'shortBreak'), sound);
});

check('the bell falls when a focus ends and rises when a break ends', () => {
  const f = A.notesFor('bell', 'focus').notes.map((n) => n.frequency);
  const b = A.notesFor('bell', 'longBreak').notes.map((n) => n.frequency);
  assert.deepEqual(f, [...f].sort((x, y) => y - x));
  assert.deepEqual(b, [...b].sort((x, y) => x - y));
});

check('stored choices: an unknown sound is the default, a volume is clamped to 0..100', () => {
  assert.equal(A.soundFrom('gong'), 'gong');
  assert.equal(A.soundFrom('kazoo'), A.SOUNDS[0]);
  assert.equal(A.soundFrom(null), A.SOUNDS[0]);
  assert.equal(A.volumeFrom('35'), 35);
  assert.equal(A.volumeFrom('140'), 100);
  assert.equal(A.volumeFrom('-3'), 0);
  assert.equal(A.volumeFrom('0'), 0);
  assert.equal(A.volumeFrom(null), A.DEFAULT_VOLUME);
  assert.equal(A.volumeFrom('loud'), A.DEFAULT_VOLUME);
  assert.equal(A.gainFor(0), 0);
  assert.equal(A.gainFor(100), 1);
  assert.ok(A.gainFor(50) > 0 && A.gainFor(50) < 0.5, 'quadratic: half the slider is a quarter of the gain');
});

check('keys: pomo\'s keys, the same commands', () => {
  const key = (k, extra = {}) => K.commandForKey({ key: k, code: k === ' ' ? 'Space' : `Key${k.toUpperCase()}`, ...extra });
  assert.deepEqual(key(' '), { command: 'toggle' });
  assert.deepEqual(key('s'), { command: 'skip' });
  assert.deepEqual(key('S'), { command: 'skip' });
  assert.deepEqual(key('r'), { command: 'reset' });
  assert.deepEqual(key('+'), { command: 'extend', minutes: 1 });
  assert.deepEqual(key('='), { command: 'extend', minutes: 1 });
  assert.deepEqual(key('-'), { command: 'extend', minutes: -1 });
  assert.deepEqual(key('1'), { command: 'extend', minutes: 1 });
  assert.deepEqual(key('3'), { command: 'extend', minutes: 3 });
  assert.deepEqual(key('5'), { command: 'extend', minutes: 5 });
  assert.deepEqual(key('t'), { command: 'task' });
  assert.deepEqual(key('a'), { command: 'away' });
  assert.deepEqual(key('m'), { command: 'sound' });
  assert.deepEqual(key('?', { shiftKey: true }), { command: 'help' });
  for (const other of ['q', 'x', '2', 'Enter', 'Tab']) assert.equal(key(other), null, other);
  // With Ctrl, Alt or Meta the key is the browser's (Ctrl-R reloads, Ctrl-S saves).
  assert.equal(key('r', { ctrlKey: true }), null);
  assert.equal(key('s', { metaKey: true }), null);
  assert.equal(key('a', { altKey: true }), null);
});

check('the help lists every command a key has', () => {
  const listed = new Set(K.KEY_HELP.map((h) => h.words));
  for (const words of ['key_toggle', 'key_skip', 'key_reset', 'key_extend', 'key_add', 'key_task', 'key_away', 'key_sound', 'key_help']) {
    assert.ok(listed.has(words), words);
  }
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
