// The stats panel's pure functions (web/stats.js) under Node, without a browser: the series, the y-axis,
// the bar geometry, the day labels and the request paths. test_room.py runs this when node is installed.
//   node Tests/browser/stats_model.mjs

import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const S = await import(path.join(here, '../../web/stats.js'));

const dates = Array.from({ length: 14 }, (_, i) => `2026-11-${String(8 + i).padStart(2, '0')}`);
const day = (date, focusSeconds = 0, focusSessions = 0) => ({ date, focusSessions, focusSeconds, interruptions: 0 });
const member = (name, secondsByDate) => ({
  name,
  totals: { focusSessions: 1, focusSeconds: Object.values(secondsByDate).reduce((a, b) => a + b, 0) },
  perDay: dates.map((d) => day(d, secondsByDate[d] ?? 0)),
});
const stats = {
  today: '2026-11-21', days: 14,
  totals: { focusSessions: 3, focusSeconds: 4500, interruptions: 1, currentStreak: 2, longestStreak: 2 },
  perDay: dates.map((d) => day(d, d === '2026-11-21' ? 3000 : d === '2026-11-20' ? 600 : 0)),
  members: [member('Ada', { '2026-11-21': 3000, '2026-11-20': 600 }), member('Lin', { '2026-11-21': 1500 })],
};

const checks = [];
const check = (name, fn) => checks.push([name, fn]);

check('empty: nothing ever, versus anything at all', () => {
  assert.equal(S.isEmptyStats({ totals: {}, perDay: dates.map((d) => day(d)), members: [] }), true);
  assert.equal(S.isEmptyStats(null), true);
  assert.equal(S.isEmptyStats(stats), false);
  assert.equal(S.isEmptyStats({ totals: { interruptions: 1 }, perDay: [], members: [] }), false);
});

check('series: one per member in the server order, seconds per window date', () => {
  const series = S.chartSeries(stats);
  assert.deepEqual(series.map((s) => [s.name, s.color, s.total]), [['Ada', 0, 3600], ['Lin', 1, 1500]]);
  assert.equal(series[0].seconds.length, 14);
  assert.equal(series[0].seconds[13], 3000);
  assert.equal(series[0].seconds[12], 600);
});

check('series: past eight people, the rest share one "others" colour', () => {
  const many = { ...stats, members: Array.from({ length: 10 }, (_, i) => member(`M${i}`, { '2026-11-21': 60 * (10 - i) })) };
  const series = S.chartSeries(many);
  assert.equal(series.length, 8);
  assert.deepEqual(series.slice(0, 7).map((s) => s.color), [0, 1, 2, 3, 4, 5, 6]);
  assert.equal(series[7].key, S.OTHERS);
  assert.equal(series[7].color, S.OTHERS);
  assert.equal(series[7].count, 3);
  assert.equal(series[7].total, 60 * (3 + 2 + 1));
});

check('y-axis: at most four intervals, at least a minute', () => {
  assert.deepEqual(S.niceScale(0), { step: 0.25, top: 1, ticks: [0, 0.25, 0.5, 0.75, 1] });
  assert.deepEqual(S.niceScale(50), { step: 15, top: 60, ticks: [0, 15, 30, 45, 60] });
  assert.deepEqual(S.niceScale(60), { step: 15, top: 60, ticks: [0, 15, 30, 45, 60] });
  assert.deepEqual(S.niceScale(130).ticks, [0, 60, 120, 180]);
  for (const minutes of [0.1, 1, 7, 25, 61, 99, 240, 601, 1500, 9000]) {
    const scale = S.niceScale(minutes);
    assert.ok(scale.top >= minutes, `${minutes}: top ${scale.top}`);
    assert.ok(scale.ticks.length >= 2 && scale.ticks.length <= 5, `${minutes}: ${scale.ticks}`);
  }
});

check('geometry: stacked bottom up, heights in proportion to seconds', () => {
  const series = S.chartSeries(stats);
  const g = S.chartGeometry(series, S.windowDates(stats), { width: 400 });
  assert.equal(g.days.length, 14);
  const plot = g.plot.bottom - g.plot.top;
  const [ada, lin] = g.days[13].segments;
  assert.equal(ada.name, 'Ada');
  assert.equal(lin.name, 'Lin');
  assert.ok(Math.abs(ada.height - (3000 / 60 / g.scale.top) * plot) < 1e-9);
  assert.ok(Math.abs(lin.height - (1500 / 60 / g.scale.top) * plot) < 1e-9);
  assert.ok(Math.abs(ada.y + ada.height - g.plot.bottom) < 1e-9, 'the first segment sits on the baseline');
  assert.ok(Math.abs(lin.y + lin.height - ada.y) < 1e-9, 'the second sits on the first');
  assert.equal(g.days[0].segments.length, 0);
  assert.deepEqual(g.ticks.map((t) => t.minutes), g.scale.ticks);
  assert.equal(g.ticks[0].y, g.plot.bottom);
  assert.equal(g.ticks[g.ticks.length - 1].y, g.plot.top);
  assert.ok(g.days.every((d, i) => i === 0 || d.center > g.days[i - 1].center), 'oldest to newest, left to right');
});

check('geometry: narrow charts label every other day, always today', () => {
  const g = S.chartGeometry(S.chartSeries(stats), S.windowDates(stats), { width: 300 });
  assert.equal(g.labelEvery, 2);
  assert.equal(S.showsLabel(13, 14, 2), true);
  assert.equal(S.showsLabel(12, 14, 2), false);
  assert.equal(S.chartGeometry(S.chartSeries(stats), S.windowDates(stats), { width: 460 }).labelEvery, 1);
});

check('window summary: total, active days, the best day', () => {
  assert.deepEqual(S.windowSummary(stats), {
    days: 14, totalSeconds: 5100, activeDays: 2, best: { date: '2026-11-21', seconds: 4500 }, people: 2,
  });
});

check('day labels: localized, never shifted by the local zone', () => {
  assert.deepEqual(S.dayLabels('2026-11-21', 'en'), { weekday: 'S', day: '21', short: 'Nov 21', long: 'Saturday, November 21' });
  assert.equal(S.dayLabels('2026-11-21', 'ko').short, '11월 21일');
  assert.equal(S.dayLabels('2026-11-21', 'zh-Hant').short, '11月21日');
  assert.equal(S.dayLabels('2026-11-21', 'zh-Hant').day, '21');
  assert.equal(S.parseDay('2026-02-30'), null);
  assert.equal(S.dayLabels('2026-02-30', 'en').short, '2026-02-30');
  assert.equal(S.parseDay('nope'), null);
});

check('lengths: seconds under a minute, whole minutes above', () => {
  const units = { min: (n) => `${n} min`, sec: (n) => `${n} s` };
  assert.equal(S.formatFocusLength(6, units), '6 s');
  assert.equal(S.formatFocusLength(0, units), '0 min');
  assert.equal(S.formatFocusLength(150, units), '3 min');
  assert.equal(S.formatFocusLength(3000, units), '50 min');
});

check('requests: the stats message, the history paths, the file name', () => {
  assert.deepEqual(S.statsRequest('team-alpha', 'Europe/Berlin'), { type: 'stats', room: 'team-alpha', days: 14, tz: 'Europe/Berlin' });
  assert.deepEqual(S.statsRequest('team-alpha', null), { type: 'stats', room: 'team-alpha', days: 14 });
  assert.equal(S.historyPath('team-alpha', { limit: 10 }), '/api/rooms/team-alpha/history?limit=10');
  assert.equal(S.historyPath('r', { format: 'csv', tz: 'Europe/Berlin' }), '/api/rooms/r/history?tz=Europe%2FBerlin&format=csv');
  assert.equal(S.csvFileName('r', 'attachment; filename="r-history.csv"'), 'r-history.csv');
  assert.equal(S.csvFileName('r', 'attachment; filename="../x"'), 'r-history.csv');
  assert.equal(S.csvFileName('r', null), 'r-history.csv');
});

check('journal: newest first as given, fields made safe', () => {
  const entries = S.journalEntries({ sessions: [{ startedAt: 1, endedAt: 2, lengthSeconds: 1500, members: [{ id: 'm1', name: 'Ada', task: null, focusSeconds: 1500 }] }] });
  assert.deepEqual(entries, [{ startedAt: 1, endedAt: 2, lengthSeconds: 1500, members: [{ id: 'm1', name: 'Ada', task: '', focusSeconds: 1500 }] }]);
  assert.deepEqual(S.journalEntries({}), []);
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
