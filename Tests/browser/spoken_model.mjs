// web/spoken.js under node: the room in one sentence for screen readers, and when the time left is said by
// itself (at the whole minutes chosen, only when a running phase crosses them). Run: node Tests/browser/spoken_model.mjs

import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const web = (file) => import(path.join(here, '../../web', file));
const S = await web('spoken.js');
const { say } = await web('wording.js');
const I = await web('i18n.js');

// setLanguage marks the page's language; a stand-in document is enough here.
globalThis.document ??= { documentElement: {}, querySelectorAll: () => [] };

const checks = [];
const check = (name, fn) => checks.push([name, fn]);
const room = (status, phase = 'focus', cycle = 1) => ({ id: 'r', phase, status, cycle });

check('the time left in words: minutes from 90 s, then one minute, then seconds', () => {
  assert.equal(say(S.leftWords(18 * 60000 - 20000)), '18 minutes');
  assert.equal(say(S.leftWords(90000)), '2 minutes');
  assert.equal(say(S.leftWords(89000)), '1 minute');
  assert.equal(say(S.leftWords(60000)), '1 minute');
  assert.equal(say(S.leftWords(59001)), '1 minute', 'shown as 1:00, said as 1 minute');
  assert.equal(say(S.leftWords(58000)), '58 seconds');
  assert.equal(say(S.leftWords(1000)), '1 second');
});

check('the room in one sentence: phase, where the timer stands, the time left, the end and the people', () => {
  assert.equal(say(S.summaryWords(room('running'), { remaining: 18 * 60000, endsText: '10:25', present: 4 })),
    'Focus, 18 minutes left, ends 10:25, 4 people here');
  assert.equal(say(S.summaryWords(room('paused', 'shortBreak'), { remaining: 125000, present: 1 })),
    'Short break, paused with 2 minutes left, 1 person here');
  assert.equal(say(S.summaryWords(room('ready', 'longBreak'), { remaining: 900000 })), 'Long break ready to start, 15 minutes');
  assert.equal(say(S.summaryWords(room('idle', 'idle'), { remaining: 0 })), 'The timer has not started');
  I.setLanguage('zh-Hans');
  try {
    assert.equal(say(S.summaryWords(room('running'), { remaining: 18 * 60000, endsText: '10:25', present: 4 })),
      '专注，还剩 18 分钟，10:25 结束，4 人在这里');
  } finally {
    I.setLanguage('en');
  }
});

check('said by itself only when a running phase crosses a chosen whole minute while watched', () => {
  let memory = S.NOT_SPOKEN;
  const look = (r, ms, every) => {
    const step = S.speakStep(memory, r, ms, every);
    memory = step.memory;
    return step.minutes;
  };
  const running = room('running');
  assert.equal(look(running, 10 * 60000 + 500, 5), null, 'the first look says nothing');
  assert.equal(look(running, 10 * 60000, 5), 10, 'ten minutes left, a multiple of five');
  assert.equal(look(running, 9 * 60000 + 500, 5), null);
  assert.equal(look(running, 9 * 60000, 5), null, 'nine is not a multiple of five');
  assert.equal(look(running, 9 * 60000 - 1, 1), null, 'still within the ninth minute');
  assert.equal(look(running, 8 * 60000, 1), 8, 'every minute');
  assert.equal(look(room('paused'), 7 * 60000, 1), null, 'paused: never');
  assert.equal(look(running, 7 * 60000 - 1, 1), null, 'back from a pause: the first look again');
  assert.equal(look(running, 6 * 60000, 0), null, 'never, when never was chosen');
  assert.equal(look(running, 12 * 60000, 1), null, 'a jump up (time added) says nothing');
  assert.equal(look(running, 11 * 60000, 1), 11);
  assert.equal(look(room('running', 'shortBreak'), 4 * 60000, 1), null, 'a new phase starts afresh');
  assert.equal(look(running, 30000, 1), null, 'a new phase again');
  assert.equal(look(running, 0, 1), null, 'zero is the end, said by the phase change');
});

check('the choices kept in the browser', () => {
  assert.equal(S.speakEveryFrom('5'), 5);
  assert.equal(S.speakEveryFrom('7'), 0);
  assert.equal(S.speakEveryFrom(null), 0);
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
