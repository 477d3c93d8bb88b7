// The Schedule card at work: asks the room's schedules once joined, draws them (the next sessions in this
// browser's zone, a switch, an edit and a delete button each), sends the form (a new schedule, or the one
// being edited, with its own lengths if it has them), and links the calendar feed.
// The requests and the words are schedules.js's; the list is the room model's (roommodel.js).

import { t, language } from './i18n.js';
import { say, errorWithDetail } from './wording.js';
import { requestSent } from './roommodel.js';
import { formatDurationInput, formatDurationShort } from './clock.js';
import { settingsFrom } from './formchecks.js';
import {
  scheduleFromForm, formFromSchedule, scheduleRequest, upcoming, daysText, calendarLinks, WEEKDAYS,
} from './schedules.js';

const byId = (id) => document.getElementById(id);

export function createScheduleView({ page, connection, notices }) {
  const els = {
    list: byId('schedule-list'), empty: byId('schedule-empty'), form: byId('schedule-form'),
    name: byId('schedule-name'), time: byId('schedule-time'), sessions: byId('schedule-sessions'),
    days: byId('schedule-days'), error: byId('schedule-error'), subscribe: byId('schedule-subscribe'),
    next: byId('next-session'), kind: byId('schedule-kind'), date: byId('schedule-date'),
    warning: byId('schedule-warning'), own: byId('schedule-own'), settings: byId('schedule-settings'),
    focus: byId('schedule-focus'), short: byId('schedule-short'), long: byId('schedule-long'),
    every: byId('schedule-every'), submit: byId('schedule-add'), cancel: byId('schedule-cancel'),
    hostNote: byId('schedule-host-note'),
  };
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  /** The schedule being edited: its id and zone (kept as it was made), or null when adding. */
  let editing = null;
  /** The form's error as a function of the page's language (so that a language switch says it anew), or null. */
  let problem = null;

  function showProblem(words) {
    problem = words;
    els.error.textContent = words ? words() : '';
  }

  /** Whether the form's add or change is on its way and unanswered (the room model holds its ref). */
  const pending = () => page.model.scheduleRef !== null;

  /** While the form's request waits for the server's answer, its button rests (aria-disabled, so that the
   *  focus stays on it) and the form says it is busy: a second click or Enter sends nothing. */
  function showPending() {
    const busy = pending();
    if ((els.submit.getAttribute('aria-disabled') === 'true') !== busy) {
      if (busy) els.submit.setAttribute('aria-disabled', 'true');
      else els.submit.removeAttribute('aria-disabled');
    }
    if (busy) els.form.setAttribute('aria-busy', 'true');
    else els.form.removeAttribute('aria-busy');
  }

  /** Whether this member may add, change, switch and delete schedules: anyone in an open room, only the host
   *  in a host-only room (docs/PROTOCOL.md §15), never the wall display. */
  function mayChange() {
    const { room, me, observing } = page.model;
    return !!room && !!me && !observing && (room.control !== 'host' || room.host === me);
  }

  /** The weekdays' names in the page's language: mon → "Mon", "월", "一". */
  const dayNames = () => Object.fromEntries(WEEKDAYS.map((day) => [day, t(`day_${day}`)]));

  function showKind() {
    const once = els.kind.value === 'once';
    els.date.hidden = !once;
    els.days.hidden = once;
    els.settings.hidden = !els.own.checked;
  }

  /** The form back to a new schedule. */
  function stopEditing() {
    editing = null;
    els.form.reset();
    for (const box of els.days.querySelectorAll('input')) box.checked = !['sat', 'sun'].includes(box.value);
    els.submit.textContent = t('schedAdd');
    els.cancel.hidden = true;
    showProblem(null);
    showKind();
  }

  /** Fills the form with a listed schedule; the next submit changes it. */
  function edit(entry) {
    const form = formFromSchedule(entry.schedule);
    editing = { id: entry.id, zone: form.zone };
    els.name.value = form.name;
    els.time.value = form.time;
    els.kind.value = form.kind;
    els.date.value = form.date;
    for (const box of els.days.querySelectorAll('input')) box.checked = form.days.includes(box.value);
    els.sessions.value = String(form.sessions);
    els.warning.value = String(form.warning);
    els.own.checked = !!form.settings;
    if (form.settings) {
      els.focus.value = formatDurationInput(form.settings.focus);
      els.short.value = formatDurationInput(form.settings.shortBreak);
      els.long.value = formatDurationInput(form.settings.longBreak);
      els.every.value = String(form.settings.longBreakEvery);
    }
    els.submit.textContent = t('schedSave');
    els.cancel.hidden = false;
    showProblem(null);
    showKind();
    els.name.focus();
  }

  /** The session's own lengths, checked as the settings form checks them, or the error to show. */
  function ownSettings() {
    if (!els.own.checked) return { settings: null };
    const { settings, problem } = settingsFrom({
      focus: els.focus.value, shortBreak: els.short.value, longBreak: els.long.value, longBreakEvery: els.every.value,
      autoStart: false,
    }, page.model.limits);
    if (problem) return { error: () => t('schedOwnInvalid') };
    return { settings };
  }

  function refresh() {
    if (page.view !== 'room' || page.conn !== 'joined') return;
    connection.request(scheduleRequest('list'));
  }

  function render() {
    const room = page.model.room;
    const list = page.model.schedules ?? [];
    const timeZone = zone;
    const locale = language();
    const may = mayChange();
    els.form.hidden = !may;
    showPending();
    els.hostNote.hidden = may || !room;
    if (!may && room) els.hostNote.textContent = t('schedHostOnly');
    const soon = new Map(upcoming(list, { timeZone, locale }).map((u) => [u.id, u.local]));
    els.list.textContent = '';
    for (const entry of list) {
      const s = entry.schedule;
      const item = document.createElement('li');
      item.className = 'schedule-item';
      const when = s.date ? s.date : say(daysText(s.days, dayNames()));
      const text = document.createElement('span');
      // How long it runs: "2 × 50 min / 10 min" with its own lengths, "2 ×" with the room's; nothing until stopped.
      const minutes = (n) => t('durMin', { n });
      const lengths = s.settings
        ? `${formatDurationShort(s.settings.focus, minutes)} / ${formatDurationShort(s.settings.shortBreak, minutes)}` : '';
      const runs = s.sessions ? ` · ${s.sessions} ×${lengths ? ` ${lengths}` : ''}` : lengths ? ` · ${lengths}` : '';
      text.textContent = `${s.name} · ${when} ${s.time} (${s.zone})${runs}` + (soon.has(entry.id) ? ` · ${soon.get(entry.id)}` : '');
      const toggle = document.createElement('input');
      toggle.type = 'checkbox';
      toggle.checked = s.enabled !== false;
      toggle.disabled = !may;
      toggle.setAttribute('aria-label', t('schedOn'));
      toggle.addEventListener('change', () => connection.request(scheduleRequest('switch', { id: entry.id, enabled: toggle.checked })));
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.className = 'btn small';
      remove.textContent = t('schedDelete');
      remove.addEventListener('click', () => {
        if (editing?.id === entry.id) stopEditing();
        connection.request(scheduleRequest('delete', { id: entry.id }));
      });
      const change = document.createElement('button');
      change.type = 'button';
      change.className = 'btn small schedule-edit';
      change.textContent = t('schedEdit');
      change.addEventListener('click', () => edit(entry));
      item.append(toggle, text);
      if (may) item.append(change, remove);
      els.list.append(item);
    }
    els.empty.hidden = list.length > 0;
    if (page.model.roomName) {
      const links = calendarLinks(page.model.roomName, window.location.origin);
      els.subscribe.href = links.webcal;
      els.subscribe.title = links.url;
    }
    const next = room?.nextSession;
    els.next.hidden = !next;
    if (next) {
      const local = upcoming([{ id: next.schedule, schedule: { name: next.name }, next: next.startsAt }], { timeZone, locale })[0].local;
      els.next.textContent = t('schedNext', { name: next.name, when: local });
    }
  }

  /** The form's own words (the day boxes, the button, an error shown) and the list in the page's language. */
  function languageChanged() {
    for (const label of els.days.querySelectorAll('label')) {
      label.querySelector('span').textContent = t(`day_${label.querySelector('input').value}`);
    }
    els.submit.textContent = t(editing ? 'schedSave' : 'schedAdd');
    showProblem(problem);
    render();
  }

  /** The server carried out the form's add or change: only now does the form go back to a new schedule, and
   *  its button works again. */
  function saved() {
    stopEditing();
    showPending();
  }

  /** The server refused the form's add or change: said under the form, with what was typed still there, and
   *  the button works again. */
  function refused(error) {
    showProblem(() => errorWithDetail(error));
    render();
  }

  /** The connection went before the answer came: the form may send again (once joined), with what was typed
   *  still there, and says why. */
  function unanswered() {
    showProblem(() => t('answerLost'));
    showPending();
  }

  function wire() {
    for (const day of WEEKDAYS) {
      const label = document.createElement('label');
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.value = day;
      box.checked = !['sat', 'sun'].includes(day);
      const name = document.createElement('span');
      name.textContent = t(`day_${day}`);
      label.append(box, name);
      els.days.append(label);
    }
    els.kind.addEventListener('change', showKind);
    els.own.addEventListener('change', showKind);
    els.cancel.addEventListener('click', stopEditing);
    showKind();
    els.form.addEventListener('submit', (event) => {
      event.preventDefault();
      // One add or change at a time: a double click or a second Enter before the answer would make two.
      if (pending()) return;
      const days = [...els.days.querySelectorAll('input:checked')].map((box) => box.value);
      const own = ownSettings();
      if (own.error) {
        showProblem(own.error);
        return;
      }
      const result = scheduleFromForm({ name: els.name.value, time: els.time.value, zone: editing?.zone ?? zone,
        kind: els.kind.value, days, date: els.date.value, sessions: els.sessions.value, warning: els.warning.value,
        settings: own.settings });
      const error = result.error;
      showProblem(error ? () => t(error.key, error.values ?? {}) : null);
      if (error) return;
      if (!mayChange()) {
        showProblem(() => t('schedHostOnly'));
        return;
      }
      const request = editing
        ? scheduleRequest('change', { id: editing.id, schedule: result.schedule })
        : scheduleRequest('add', { schedule: result.schedule });
      const ref = connection.request(request);
      if (ref === null) {
        notices.show('', t('schedOffline'));
        return;
      }
      // The form keeps what was typed until the server says it took it (scheduleSaved) or why not.
      page.model = requestSent(page.model, 'schedule', ref);
      showPending();
    });
  }

  return { refresh, render, wire, languageChanged, saved, refused, unanswered };
}
