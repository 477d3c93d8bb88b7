// The Schedule card at work: asks the room's schedules once joined, draws them (the next sessions in this
// browser's zone, a switch and a delete button each), sends the add form, and links the calendar feed.
// The requests and the words are schedules.js's; the list is the room model's (roommodel.js).

import { t } from './i18n.js';
import { say } from './wording.js';
import { scheduleFromForm, scheduleRequest, upcoming, daysText, calendarLinks, WEEKDAYS } from './schedules.js';

const byId = (id) => document.getElementById(id);

export function createScheduleView({ page, connection, notices }) {
  const els = {
    list: byId('schedule-list'), empty: byId('schedule-empty'), form: byId('schedule-form'),
    name: byId('schedule-name'), time: byId('schedule-time'), sessions: byId('schedule-sessions'),
    days: byId('schedule-days'), error: byId('schedule-error'), subscribe: byId('schedule-subscribe'),
    next: byId('next-session'),
  };
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

  function refresh() {
    if (page.view !== 'room' || page.conn !== 'joined') return;
    connection.request(scheduleRequest('list'));
  }

  function render() {
    const room = page.model.room;
    const list = page.model.schedules ?? [];
    const timeZone = zone;
    const soon = new Map(upcoming(list, { timeZone }).map((u) => [u.id, u.local]));
    els.list.textContent = '';
    for (const entry of list) {
      const s = entry.schedule;
      const item = document.createElement('li');
      item.className = 'schedule-item';
      const when = s.date ? s.date : say(daysText(s.days));
      const text = document.createElement('span');
      text.textContent = `${s.name} · ${when} ${s.time} (${s.zone})` + (soon.has(entry.id) ? ` · ${soon.get(entry.id)}` : '');
      const toggle = document.createElement('input');
      toggle.type = 'checkbox';
      toggle.checked = s.enabled !== false;
      toggle.setAttribute('aria-label', t('schedOn'));
      toggle.addEventListener('change', () => connection.request(scheduleRequest('switch', { id: entry.id, enabled: toggle.checked })));
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.className = 'btn small';
      remove.textContent = t('schedDelete');
      remove.addEventListener('click', () => connection.request(scheduleRequest('delete', { id: entry.id })));
      item.append(toggle, text, remove);
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
      const local = upcoming([{ id: next.schedule, schedule: { name: next.name }, next: next.startsAt }], { timeZone })[0].local;
      els.next.textContent = t('schedNext', { name: next.name, when: local });
    }
  }

  function wire() {
    for (const day of WEEKDAYS) {
      const label = document.createElement('label');
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.value = day;
      box.checked = !['sat', 'sun'].includes(day);
      label.append(box, ` ${t(`day_${day}`)}`);
      els.days.append(label);
    }
    els.form.addEventListener('submit', (event) => {
      event.preventDefault();
      const days = [...els.days.querySelectorAll('input:checked')].map((box) => box.value);
      const result = scheduleFromForm({ name: els.name.value, time: els.time.value, zone, kind: 'weekly', days,
        sessions: els.sessions.value });
      els.error.textContent = result.error ? t(result.error.key, result.error.values ?? {}) : '';
      if (result.error) return;
      if (connection.request(scheduleRequest('add', { schedule: result.schedule })) === null) {
        notices.show('', t('schedOffline'));
        return;
      }
      els.name.value = '';
    });
  }

  return { refresh, render, wire };
}
