// The Schedule panel's pure functions (web/schedules.js) under Node, against the golden schedules message
// (Tests/fixtures/wire/server/schedules.json, client/addSchedule.json).
//   node Tests/browser/schedules_model.mjs

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const S = await import(path.join(here, '../../web/schedules.js'));
const golden = (file) => JSON.parse(readFileSync(path.join(here, '../fixtures/wire', file), 'utf8'));

const checks = [];
const check = (name, fn) => checks.push([name, fn]);

check('the form becomes the golden addSchedule request', () => {
  const { schedule } = S.scheduleFromForm({ name: ' Writing block ', time: '14:00', zone: 'Europe/Berlin', kind: 'weekly',
    days: ['thu', 'mon'], sessions: '4', warning: '' });
  const request = S.scheduleRequest('add', { schedule });
  const expected = golden('client/addSchedule.json');
  delete expected.ref;
  assert.deepEqual(request, expected);
});

check('a one-time schedule has a date and no days; empty sessions runs until stopped', () => {
  const { schedule } = S.scheduleFromForm({ name: 'Launch', time: '02:30', zone: 'America/New_York', kind: 'once',
    date: '2027-03-14', sessions: '', warning: '0' });
  assert.deepEqual(schedule, { name: 'Launch', time: '02:30', zone: 'America/New_York', date: '2027-03-14', days: null,
    settings: null, sessions: null, warning: 0 });
});

check('editing: a listed schedule fills the form, and the form gives the golden changeSchedule back', () => {
  const listed = golden('server/schedules.json').schedules[0];
  const form = S.formFromSchedule(listed.schedule);
  assert.equal(form.kind, 'weekly');
  const { schedule } = S.scheduleFromForm(form);
  const { enabled, ...sent } = listed.schedule; // switching is its own request
  assert.equal(enabled, true);
  assert.deepEqual(schedule, sent);
  // The golden change: 15:00 on Thursdays, until stopped, warned 10 minutes before.
  const changed = S.scheduleFromForm({ ...form, time: '15:00', days: ['thu'], sessions: '', warning: '10' });
  const expected = golden('client/changeSchedule.json');
  assert.deepEqual(S.scheduleRequest('change', { id: 's1', schedule: changed.schedule }), expected);
});

check('a schedule\'s own settings go with it, and come back to the form', () => {
  const settings = { focus: 3000, shortBreak: 600, longBreak: 1200, longBreakEvery: 2, autoStart: false };
  const { schedule } = S.scheduleFromForm({ name: 'Deep work', time: '08:00', zone: 'UTC', kind: 'once', date: '2027-01-04',
    sessions: '2', warning: '15', settings });
  assert.deepEqual(schedule.settings, settings);
  assert.deepEqual(S.formFromSchedule(schedule), { name: 'Deep work', time: '08:00', zone: 'UTC', kind: 'once',
    date: '2027-01-04', days: [], sessions: 2, warning: 15, settings });
});

check('each wrong field is named', () => {
  const base = { name: 'x', time: '09:30', zone: 'UTC', kind: 'weekly', days: ['mon'] };
  const field = (form) => S.scheduleFromForm({ ...base, ...form }).error?.field;
  assert.equal(field({ name: '  ' }), 'name');
  assert.equal(field({ name: 'x'.repeat(61) }), 'name');
  assert.equal(field({ time: '9:30' }), 'time');
  assert.equal(field({ time: '24:00' }), 'time');
  assert.equal(field({ zone: '' }), 'zone');
  assert.equal(field({ days: [] }), 'days');
  assert.equal(field({ kind: 'once', date: '14.03.2027' }), 'date');
  assert.equal(field({ sessions: '0' }), 'sessions');
  assert.equal(field({ sessions: '2.5' }), 'sessions');
  assert.equal(field({ warning: '61' }), 'warning');
  assert.equal(field({}), undefined);
});

check('switch, change, delete and list requests', () => {
  assert.deepEqual(S.scheduleRequest('switch', { id: 's1', enabled: false }), { type: 'switchSchedule', id: 's1', enabled: false });
  assert.deepEqual(S.scheduleRequest('delete', { id: 's1' }), { type: 'deleteSchedule', id: 's1' });
  assert.deepEqual(S.scheduleRequest('change', { id: 's2', schedule: { name: 'a' } }), { type: 'changeSchedule', id: 's2', schedule: { name: 'a' } });
  assert.deepEqual(S.scheduleRequest('list'), { type: 'schedules' });
});

check('days read as people say them', () => {
  assert.deepEqual(S.daysText(['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat']), { key: 'schedEveryDay' });
  assert.deepEqual(S.daysText(['fri', 'thu', 'wed', 'tue', 'mon']), { key: 'schedWeekdays' });
  assert.equal(S.daysText(['thu', 'mon'], { mon: 'Mon', thu: 'Thu' }), 'Mon, Thu');
});

check('upcoming: the switched-on sessions soonest first, in the reader\'s zone', () => {
  const list = golden('server/schedules.json').schedules;
  const berlin = S.upcoming(list, { timeZone: 'Europe/Berlin' });
  assert.deepEqual(berlin.map((u) => u.id), ['s1'], 'the switched-off one-time schedule has no next start');
  assert.equal(berlin[0].local, 'Fri, Jan 2, 01:00');
  assert.equal(S.upcoming(list, { timeZone: 'America/New_York' })[0].local, 'Thu, Jan 1, 19:00');
  assert.deepEqual(S.upcoming(null), []);
});

check('the calendar links', () => {
  assert.deepEqual(S.calendarLinks('team alpha', 'https://pomodoro.example'), {
    url: 'https://pomodoro.example/api/rooms/team%20alpha/calendar.ics',
    webcal: 'webcal://pomodoro.example/api/rooms/team%20alpha/calendar.ics',
  });
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
