// Drawing the stats panel: the totals, the stacked bar chart (inline SVG built node by node), its legend and
// text alternative, the per-person table and the focus journal. The numbers and the geometry come from
// stats.js; names and tasks go in as text, never as HTML.

import { t, language } from './i18n.js';
import { formatTotal } from './clock.js';
import {
  chartSeries, chartGeometry, windowDates, windowSummary, totalsOf, isEmptyStats, dayLabels, showsLabel,
  formatFocusLength, statsKey, OTHERS,
} from './stats.js';
import { setText } from './render.js';

const SVG = 'http://www.w3.org/2000/svg';

const units = {
  min: (n) => t('durMin', { n }),
  sec: (n) => t('durSec', { n }),
  hour: (h) => t('durHour', { h }),
  hourMin: (h, m) => t('durHourMin', { h, m }),
};

/** A focus length: seconds below a minute, else whole minutes ("50 min"). */
export const focusLength = (seconds) => formatFocusLength(seconds, units);

/** A total: seconds below a minute, else hours and minutes ("5 h 20 min"). */
export const focusTotal = (seconds) => (seconds > 0 && seconds < 60 ? units.sec(Math.floor(seconds)) : formatTotal(seconds, units));

const daysText = (n) => t('durDays', { n });

function svg(name, attributes = {}, text = null) {
  const el = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) {
    el.setAttribute(key, typeof value === 'number' ? String(Math.round(value * 100) / 100) : value);
  }
  if (text !== null) el.textContent = text;
  return el;
}

function html(name, className = '', text = null) {
  const el = document.createElement(name);
  if (className) el.className = className;
  if (text !== null) el.textContent = text;
  return el;
}

const colorClass = (color) => (color === OTHERS ? 'c-others' : `c${color}`);

function seriesName(s) {
  return s.key === OTHERS ? t('statsOthers', { n: s.count }) : s.name;
}

/**
 * Renders a stats reply into the panel. Redraws only what changed: the same reply at the same width in the
 * same language leaves the DOM alone, and a new one replaces the chart in one step, so that a refresh never
 * shows an empty frame. `myName` marks my own row.
 */
export function renderStats(els, stats, { myName = '' } = {}) {
  const empty = isEmptyStats(stats);
  els.empty.hidden = !empty;
  els.content.hidden = empty;
  if (empty) return;

  const totals = totalsOf(stats.totals);
  setText(els.sessions, String(totals.focusSessions));
  setText(els.focus, focusTotal(totals.focusSeconds));
  setText(els.interruptions, String(totals.interruptions));
  setText(els.streak, daysText(totals.currentStreak));
  setText(els.longest, daysText(totals.longestStreak));

  // Drawn at the width it gets, one SVG unit to the pixel, so that its text keeps the page's size.
  const width = els.chart.clientWidth || 320;
  const key = `${statsKey(stats)}|${Math.round(width)}|${language()}|${myName}`;
  if (els.chart.dataset.key === key) return;
  els.chart.dataset.key = key;

  const series = chartSeries(stats);
  const summary = windowSummary(stats);
  const dates = windowDates(stats);
  const hasWindow = summary.totalSeconds > 0;
  els.chartEmpty.hidden = hasWindow;
  els.legend.hidden = !hasWindow;
  if (hasWindow) {
    els.chart.replaceChildren(buildChart(series, dates, stats.today, width, summary));
    els.legend.replaceChildren(...buildLegend(series));
    els.chartTable.replaceChildren(...buildChartTable(series, dates));
  } else {
    els.chart.replaceChildren();
    els.legend.replaceChildren();
    els.chartTable.replaceChildren();
  }
  renderMemberRows(els.membersBody, stats, series, myName);
}

/** The chart's summary for screen readers, said in its aria-label. */
export function chartSummaryText(summary) {
  if (!summary.totalSeconds) return t('statsChartEmpty', { days: summary.days });
  const best = summary.best ? dayLabels(summary.best.date, language()).long : '';
  return t('statsChartSummary', {
    days: summary.days,
    total: focusTotal(summary.totalSeconds),
    active: summary.activeDays,
    people: summary.people,
    best,
    bestTime: summary.best ? focusTotal(summary.best.seconds) : '',
  });
}

function buildChart(series, dates, today, width, summary) {
  const locale = language();
  const g = chartGeometry(series, dates, { width });
  const number = new Intl.NumberFormat(locale, { maximumFractionDigits: 2 });
  const root = svg('svg', {
    class: 'chart', viewBox: `0 0 ${Math.round(g.width)} ${g.height}`, width: Math.round(g.width), height: g.height,
    role: 'img', 'aria-label': `${t('statsChartTitle', { days: dates.length })}. ${chartSummaryText(summary)}`,
    focusable: 'false', 'data-top-minutes': String(g.scale.top),
  });

  const grid = svg('g', { class: 'grid' });
  const axisText = (className, y, text) => svg('text', {
    class: className, x: g.plot.left - 6, y, 'text-anchor': 'end', 'dominant-baseline': 'middle',
  }, text);
  for (const tick of g.ticks) {
    grid.append(
      svg('line', {
        class: tick.minutes === 0 ? 'gridline baseline' : 'gridline', x1: g.plot.left, x2: g.plot.right,
        y1: tick.y, y2: tick.y, 'data-minutes': String(tick.minutes),
      }),
      axisText('tick-label', tick.y, number.format(tick.minutes)),
    );
  }
  grid.append(axisText('axis-unit', 8, t('min')));
  root.append(grid);

  const bars = svg('g', { class: 'days' });
  for (const day of g.days) {
    const labels = dayLabels(day.date, locale);
    const isToday = day.date === today;
    const group = svg('g', {
      class: isToday ? 'day today' : 'day', 'data-date': day.date, 'data-seconds': String(day.totalSeconds),
    });
    // The whole slot answers a hover with the day's total, so that a thin bar is easy to point at.
    const hit = svg('rect', {
      class: 'day-hit', x: day.slotX, y: g.plot.top, width: day.pitch, height: g.plot.bottom - g.plot.top,
    });
    hit.append(svg('title', {}, `${labels.short} · ${focusLength(day.totalSeconds)}`));
    group.append(hit);
    for (const segment of day.segments) {
      const rect = svg('rect', {
        class: `seg ${colorClass(segment.color)}`, x: segment.x, y: segment.y, width: segment.width,
        height: segment.height, rx: Math.min(3, segment.width / 4), 'data-name': segment.key === OTHERS ? OTHERS : segment.name,
        'data-seconds': String(segment.seconds),
      });
      const name = segment.key === OTHERS ? seriesName(series.find((s) => s.key === OTHERS)) : segment.name;
      rect.append(svg('title', {}, `${name} · ${focusLength(segment.seconds)} · ${labels.short}`));
      group.append(rect);
    }
    if (showsLabel(day.index, g.days.length, g.labelEvery)) {
      group.append(
        svg('text', { class: 'day-label weekday', x: day.center, y: g.plot.bottom + 14, 'text-anchor': 'middle' }, labels.weekday),
        svg('text', { class: 'day-label date', x: day.center, y: g.plot.bottom + 29, 'text-anchor': 'middle' }, labels.day),
      );
    }
    bars.append(group);
  }
  root.append(bars);
  return root;
}

function swatch(color) {
  const el = html('span', `swatch ${colorClass(color)}`);
  el.setAttribute('aria-hidden', 'true');
  return el;
}

function buildLegend(series) {
  return series.filter((s) => s.total > 0).map((s) => {
    const li = html('li', 'legend-item');
    li.dataset.name = s.key === OTHERS ? OTHERS : s.name;
    li.append(swatch(s.color), html('span', 'legend-name', seriesName(s)), html('span', 'legend-value', focusTotal(s.total)));
    return li;
  });
}

/** The chart as a table, for screen readers: a row per day, a column per person. */
function buildChartTable(series, dates) {
  const locale = language();
  const shown = series.filter((s) => s.total > 0);
  const caption = html('caption', '', t('statsTableCaption'));
  const head = html('thead');
  const headRow = html('tr');
  const corner = html('th', '', t('statsColDay'));
  corner.scope = 'col';
  headRow.append(corner);
  for (const s of shown) {
    const th = html('th', '', seriesName(s));
    th.scope = 'col';
    headRow.append(th);
  }
  const totalHead = html('th', '', t('statsColTotal'));
  totalHead.scope = 'col';
  headRow.append(totalHead);
  head.append(headRow);
  const body = html('tbody');
  dates.forEach((date, i) => {
    const tr = html('tr');
    const th = html('th', '', dayLabels(date, locale).long);
    th.scope = 'row';
    tr.append(th);
    let total = 0;
    for (const s of shown) {
      total += s.seconds[i];
      tr.append(html('td', '', focusLength(s.seconds[i])));
    }
    tr.append(html('td', '', focusLength(total)));
    body.append(tr);
  });
  return [caption, head, body];
}

function renderMemberRows(tbody, stats, series, myName) {
  const colorOf = new Map(series.filter((s) => s.key !== OTHERS).map((s) => [s.name, s.color]));
  const hasOthers = series.some((s) => s.key === OTHERS);
  const members = Array.isArray(stats.members) ? stats.members : [];
  const rows = members.map((member) => {
    const name = String(member?.name ?? '');
    const totals = totalsOf(member?.totals);
    const tr = html('tr');
    tr.dataset.name = name;
    if (name === myName) tr.className = 'is-me';
    const th = html('th');
    th.scope = 'row';
    const color = colorOf.has(name) ? colorOf.get(name) : (hasOthers ? OTHERS : null);
    if (color !== null) th.append(swatch(color));
    th.append(html('span', 'stats-name', name));
    if (name === myName) th.append(html('span', 'you-tag', t('you')));
    tr.append(
      th,
      html('td', 'num', String(totals.focusSessions)),
      html('td', 'num focus', focusTotal(totals.focusSeconds)),
      html('td', 'num', daysText(totals.currentStreak)),
      html('td', 'num', daysText(totals.longestStreak)),
    );
    return tr;
  });
  tbody.replaceChildren(...rows);
}

/** The last sessions of the focus journal: when, how long, and who focused on what. */
export function renderJournal(list, entries, { colorOf = () => null } = {}) {
  const locale = language();
  const when = new Intl.DateTimeFormat(locale, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
  const items = entries.map((entry) => {
    const li = html('li', 'journal-entry');
    const head = html('div', 'journal-head');
    const time = html('time', '', entry.endedAt ? when.format(new Date(entry.endedAt)) : '');
    if (entry.endedAt) time.dateTime = new Date(entry.endedAt).toISOString();
    head.append(time, html('span', 'journal-length', focusLength(entry.lengthSeconds)));
    const people = html('ul', 'journal-people');
    for (const member of entry.members) {
      const row = html('li');
      const color = colorOf(member.name);
      if (color !== null) row.append(swatch(color));
      row.append(html('span', 'journal-name', member.name));
      row.append(html('span', member.task ? 'journal-task' : 'journal-task is-empty', member.task || t('statsNoTask')));
      people.append(row);
    }
    li.append(head, people);
    return li;
  });
  list.replaceChildren(...items);
}
