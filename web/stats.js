// The stats panel's numbers and geometry, from the server's `stats` reply (docs/PROTOCOL.md, stats): pure
// functions, no DOM and no translations, so that they run anywhere (statspanel.js draws what they return).
//
// A reply looks like {today, days, totals, perDay: [{date, focusSessions, focusSeconds, interruptions}],
// members: [{name, totals, perDay}]}; every perDay has the same `days` dates, oldest first, today last.

export const STATS_DAYS = 14;
export const JOURNAL_LIMIT = 10;

/** Colours the chart tells apart (style.css: --series-0 … --series-7); more members share one "others" bar. */
export const SERIES_COLORS = 8;
export const OTHERS = 'others';

/** Y-axis steps, in minutes: a quarter of a minute up to a day. */
const STEPS = [0.25, 0.5, 1, 2, 5, 10, 15, 20, 30, 60, 90, 120, 180, 240, 360, 480, 720, 1440, 2880, 5760];
const MAX_INTERVALS = 4;

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

const number = (value) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/** The `stats` request the page sends; `tz` is left out when the browser does not name its zone. */
export function statsRequest(room, tz, days = STATS_DAYS) {
  const message = { type: 'stats', room, days };
  if (tz) message.tz = tz;
  return message;
}

/** `/api/rooms/ROOM/history?…` for the focus journal, as JSON or (format "csv") as a CSV file. */
export function historyPath(room, { limit = null, tz = null, format = null } = {}) {
  const query = new URLSearchParams();
  if (limit) query.set('limit', String(limit));
  if (tz) query.set('tz', tz);
  if (format) query.set('format', format);
  const text = query.toString();
  return `/api/rooms/${encodeURIComponent(room)}/history${text ? `?${text}` : ''}`;
}

/** The file name a Content-Disposition header gives, else ROOM-history.csv. */
export function csvFileName(room, disposition = '') {
  const match = /filename="?([^";]+)"?/i.exec(disposition || '');
  const name = match ? match[1].trim() : '';
  return /^[A-Za-z0-9._-]{1,120}$/.test(name) ? name : `${room}-history.csv`;
}

/** A "2026-11-21" date as the Date of its midnight in UTC (format it with timeZone "UTC"), or null. */
export function parseDay(text) {
  const match = DATE_PATTERN.exec(String(text || ''));
  if (!match) return null;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  // Date.UTC rolls "2026-02-30" over into March; such a date is no date.
  return date.toISOString().slice(0, 10) === match[0] ? date : null;
}

/** Whether there is nothing at all to show: no session, no focus time, no interruption, ever. */
export function isEmptyStats(stats) {
  if (!stats || typeof stats !== 'object') return true;
  const totals = stats.totals || {};
  if (number(totals.focusSessions) || number(totals.focusSeconds) || number(totals.interruptions)) return false;
  const days = Array.isArray(stats.perDay) ? stats.perDay : [];
  if (days.some((d) => number(d?.focusSeconds) || number(d?.focusSessions))) return false;
  const members = Array.isArray(stats.members) ? stats.members : [];
  return !members.some((m) => number(m?.totals?.focusSessions) || number(m?.totals?.focusSeconds));
}

/** The dates of the window, oldest first, from the room's perDay. */
export function windowDates(stats) {
  const days = Array.isArray(stats?.perDay) ? stats.perDay : [];
  return days.map((d) => String(d?.date ?? ''));
}

/**
 * The chart's series: one per member, in the server's order (most focus in the window first), each with its
 * focus seconds per window date. Beyond SERIES_COLORS members, the last colour becomes "others": the sum of
 * everyone from there on, so that no two series share a colour.
 */
export function chartSeries(stats, maxSeries = SERIES_COLORS) {
  const dates = windowDates(stats);
  const members = Array.isArray(stats?.members) ? stats.members : [];
  const secondsOf = (member) => {
    const days = Array.isArray(member?.perDay) ? member.perDay : [];
    const byDate = new Map(days.map((d) => [d?.date, number(d?.focusSeconds)]));
    return dates.map((date) => byDate.get(date) ?? 0);
  };
  const all = members.map((member) => {
    const name = String(member?.name ?? '');
    return { key: `member:${name}`, name, seconds: secondsOf(member) };
  });
  let series = all;
  if (all.length > maxSeries) {
    const kept = all.slice(0, maxSeries - 1);
    const rest = all.slice(maxSeries - 1);
    const seconds = dates.map((_, i) => rest.reduce((sum, s) => sum + s.seconds[i], 0));
    series = [...kept, { key: OTHERS, name: '', seconds, count: rest.length }];
  }
  return series
    .map((s, index) => ({
      ...s, color: s.key === OTHERS ? OTHERS : index, total: s.seconds.reduce((a, b) => a + b, 0),
    }));
}

/** A y-axis in minutes: the smallest step that reaches `maxMinutes` in at most four intervals, never less
 *  than one minute in all. Returns { step, top, ticks } with ticks from 0 up to top. */
export function niceScale(maxMinutes) {
  const need = Math.max(number(maxMinutes), 1);
  let step = STEPS[STEPS.length - 1];
  for (const candidate of STEPS) {
    if (Math.ceil(need / candidate - 1e-9) <= MAX_INTERVALS) { step = candidate; break; }
  }
  const intervals = Math.max(1, Math.ceil(need / step - 1e-9));
  const ticks = [];
  for (let i = 0; i <= intervals; i += 1) ticks.push(Math.round(i * step * 100) / 100);
  return { step, top: intervals * step, ticks };
}

export const CHART_HEIGHT = 210;
const PAD = { left: 34, right: 6, top: 24, bottom: 38 };

/**
 * The stacked bars in SVG units (one unit = one CSS pixel at `width`): the plot area, the gridlines with their
 * y, and per date a slot with its bar's segments, bottom up in series order. Heights are proportional to the
 * seconds; nothing is rounded here.
 */
export function chartGeometry(series, dates, { width = 420, height = CHART_HEIGHT } = {}) {
  const w = Math.max(width, 160);
  const plot = { left: PAD.left, right: w - PAD.right, top: PAD.top, bottom: height - PAD.bottom };
  const plotHeight = plot.bottom - plot.top;
  const totals = dates.map((_, i) => series.reduce((sum, s) => sum + (s.seconds[i] || 0), 0));
  const scale = niceScale(Math.max(0, ...totals) / 60);
  const topSeconds = scale.top * 60;
  const yOf = (seconds) => plot.bottom - (seconds / topSeconds) * plotHeight;
  const count = Math.max(dates.length, 1);
  const pitch = (plot.right - plot.left) / count;
  const barWidth = Math.min(28, Math.max(4, pitch * 0.64));
  const days = dates.map((date, i) => {
    const center = plot.left + pitch * (i + 0.5);
    let below = 0;
    const segments = [];
    for (const s of series) {
      const seconds = s.seconds[i] || 0;
      if (seconds <= 0) continue;
      const y0 = yOf(below);
      const y1 = yOf(below + seconds);
      segments.push({
        key: s.key, name: s.name, color: s.color, seconds, x: center - barWidth / 2, y: y1, width: barWidth, height: y0 - y1,
      });
      below += seconds;
    }
    return { date, index: i, center, slotX: plot.left + pitch * i, pitch, totalSeconds: totals[i], segments };
  });
  return {
    width: w,
    height,
    plot,
    scale,
    ticks: scale.ticks.map((minutes) => ({ minutes, y: yOf(minutes * 60) })),
    barWidth,
    days,
    // Day labels need about 22 units each; on narrow charts every other one is shown, always with today.
    labelEvery: pitch >= 22 ? 1 : 2,
  };
}

/** Whether a day's label is drawn: every `every`-th day counted back from today (the last). */
export function showsLabel(index, count, every) {
  return (count - 1 - index) % every === 0;
}

/** A window's headline numbers, for the chart's text alternative. */
export function windowSummary(stats) {
  const days = Array.isArray(stats?.perDay) ? stats.perDay : [];
  const series = chartSeries(stats, Number.MAX_SAFE_INTEGER);
  const perDate = days.map((_, i) => series.reduce((sum, s) => sum + s.seconds[i], 0));
  let best = -1;
  perDate.forEach((seconds, i) => { if (seconds > 0 && (best < 0 || seconds > perDate[best])) best = i; });
  return {
    days: days.length,
    totalSeconds: perDate.reduce((a, b) => a + b, 0),
    activeDays: perDate.filter((s) => s > 0).length,
    best: best >= 0 ? { date: String(days[best]?.date ?? ''), seconds: perDate[best] } : null,
    people: series.filter((s) => s.total > 0).length,
  };
}

/** A member's or the room's totals with every key present. */
export function totalsOf(totals) {
  const t = totals || {};
  return {
    focusSessions: number(t.focusSessions),
    focusSeconds: number(t.focusSeconds),
    interruptions: number(t.interruptions),
    currentStreak: number(t.currentStreak),
    longestStreak: number(t.longestStreak),
  };
}

/** The focus journal's entries (newest first) from GET …/history, each with its members. */
export function journalEntries(history, limit = JOURNAL_LIMIT) {
  const sessions = Array.isArray(history?.sessions) ? history.sessions : [];
  return sessions.slice(0, limit).map((s) => ({
    startedAt: number(s?.startedAt),
    endedAt: number(s?.endedAt),
    lengthSeconds: number(s?.lengthSeconds),
    members: (Array.isArray(s?.members) ? s.members : []).map((m) => ({
      id: String(m?.id ?? ''),
      name: String(m?.name ?? ''),
      task: String(m?.task ?? ''),
      focusSeconds: number(m?.focusSeconds),
    })),
  }));
}

/** A window date's labels in `locale`: the narrow weekday and the day of the month for the axis, a short
 *  date for tooltips ("Nov 21") and a long one for screen readers. Dates are formatted in UTC, where
 *  parseDay put their midnight, so the browser's own zone never shifts them. */
export function dayLabels(text, locale) {
  const date = parseDay(text);
  if (!date) return { weekday: '', day: String(text || ''), short: String(text || ''), long: String(text || '') };
  const format = (options) => new Intl.DateTimeFormat(locale, { ...options, timeZone: 'UTC' });
  const dayPart = format({ day: 'numeric' }).formatToParts(date).find((p) => p.type === 'day');
  return {
    weekday: format({ weekday: 'narrow' }).format(date),
    day: dayPart ? dayPart.value : String(date.getUTCDate()),
    short: format({ month: 'short', day: 'numeric' }).format(date),
    long: format({ weekday: 'long', month: 'long', day: 'numeric' }).format(date),
  };
}

/** A length of focus as the chart says it: whole minutes from a minute up, seconds below. `units` gives the
 *  words ({ min(n), sec(n) }). */
export function formatFocusLength(seconds, units) {
  const s = Math.floor(number(seconds));
  if (s > 0 && s < 60) return units.sec(s);
  return units.min(Math.round(s / 60));
}

/** A stats reply's identity for redrawing: the same data at the same width draws the same picture. */
export function statsKey(stats) {
  if (!stats) return '';
  const { ref, type, ...rest } = stats; // eslint-disable-line no-unused-vars
  return JSON.stringify(rest);
}
