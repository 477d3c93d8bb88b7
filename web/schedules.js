// The Schedule panel's words and requests, from the server's `schedules` list (docs/PROTOCOL.md §15): pure
// functions, no DOM and no translations, so that they run anywhere (the panel draws what they return).
//
// A list entry looks like {id, schedule: {name, time, zone, date, days, settings, sessions, warning, enabled},
// missed, next}; `next` is epoch milliseconds or null.

export const WEEKDAYS = Object.freeze(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']);
export const WORKDAYS = Object.freeze(['mon', 'tue', 'wed', 'thu', 'fri']);

const TIME = /^([01]\d|2[0-3]):[0-5]\d$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * The form's values as a schedule object, or the first problem as { field, key } (a word for i18n.js).
 * `form` is {name, time, zone, kind: 'weekly'|'once', days: [...], date, sessions, warning, settings}; empty
 * sessions runs until stopped; `settings` (a whole settings object, checked by the settings form's rules) is
 * the session's own, null for the room's. The server checks again (zone names, the date not past, its bounds).
 */
export function scheduleFromForm(form, { maxNameLength = 60 } = {}) {
  const name = String(form.name ?? '').trim();
  if (!name) return { error: { field: 'name', key: 'schedNameEmpty' } };
  if ([...name].length > maxNameLength) return { error: { field: 'name', key: 'schedNameLong', values: { n: maxNameLength } } };
  const time = String(form.time ?? '');
  if (!TIME.test(time)) return { error: { field: 'time', key: 'schedTime' } };
  const zone = String(form.zone ?? '');
  if (!zone) return { error: { field: 'zone', key: 'schedZone' } };
  const schedule = { name, time, zone, date: null, days: null, settings: null, sessions: null };
  if (form.kind === 'once') {
    const match = DATE.exec(String(form.date ?? ''));
    if (!match) return { error: { field: 'date', key: 'schedDate' } };
    schedule.date = form.date;
  } else {
    const days = WEEKDAYS.filter((day) => (form.days ?? []).includes(day));
    if (!days.length) return { error: { field: 'days', key: 'schedDays' } };
    schedule.days = days;
  }
  if (form.sessions !== undefined && form.sessions !== null && String(form.sessions) !== '') {
    const n = Number(form.sessions);
    if (!Number.isInteger(n) || n < 1 || n > 24) return { error: { field: 'sessions', key: 'schedSessions' } };
    schedule.sessions = n;
  }
  if (form.warning !== undefined && form.warning !== null && String(form.warning) !== '') {
    const n = Number(form.warning);
    if (!Number.isInteger(n) || n < 0 || n > 60) return { error: { field: 'warning', key: 'schedWarning' } };
    schedule.warning = n;
  }
  if (form.settings) schedule.settings = form.settings;
  return { schedule };
}

/** A listed schedule as the form's values, to edit it (the inverse of `scheduleFromForm`). */
export function formFromSchedule(schedule) {
  return {
    name: schedule.name, time: schedule.time, zone: schedule.zone,
    kind: schedule.date ? 'once' : 'weekly', date: schedule.date ?? '', days: schedule.days ?? [],
    sessions: schedule.sessions ?? '', warning: schedule.warning ?? 5, settings: schedule.settings ?? null,
  };
}

/** The request for the panel's buttons: add, change (with id), switch, delete, list. */
export function scheduleRequest(action, { id = null, schedule = null, enabled = null } = {}) {
  switch (action) {
    case 'add': return { type: 'addSchedule', schedule };
    case 'change': return { type: 'changeSchedule', id, schedule };
    case 'switch': return { type: 'switchSchedule', id, enabled: !!enabled };
    case 'delete': return { type: 'deleteSchedule', id };
    default: return { type: 'schedules' };
  }
}

/** The days as people say them: "every day", "weekdays", or "Mon, Thu" (from `dayNames`, mon → Mon). */
export function daysText(days, dayNames = {}) {
  const list = WEEKDAYS.filter((day) => (days ?? []).includes(day));
  if (list.length === 7) return { key: 'schedEveryDay' };
  if (list.length === 5 && WORKDAYS.every((day) => list.includes(day))) return { key: 'schedWeekdays' };
  return list.map((day) => dayNames[day] ?? day).join(', ');
}

/** The next sessions, soonest first, each with its start in the reader's zone (`Intl` formats it). */
export function upcoming(list, { timeZone, locale = 'en' } = {}) {
  const format = new Intl.DateTimeFormat(locale, {
    weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone,
  });
  return (Array.isArray(list) ? list : [])
    .filter((entry) => typeof entry?.next === 'number' && entry.schedule?.enabled !== false)
    .sort((a, b) => a.next - b.next || String(a.id).localeCompare(String(b.id)))
    .map((entry) => ({ id: entry.id, name: entry.schedule.name, at: entry.next, local: format.format(new Date(entry.next)) }));
}

/** The calendar feed of a room: `https://HOST/api/rooms/ROOM/calendar.ics`, and its webcal:// form for
 *  "Subscribe in your calendar" (calendar apps open that scheme). */
export function calendarLinks(room, origin) {
  const url = `${origin}/api/rooms/${encodeURIComponent(room)}/calendar.ics`;
  return { url, webcal: url.replace(/^https?:/, 'webcal:') };
}
