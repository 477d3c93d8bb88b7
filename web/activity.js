// The room's activity feed: the latest lines first, a few of them, each with the local time it came in.

import { language } from './i18n.js';

const ACTIVITY_LIMIT = 8;

export function createActivity(els) {
  /** One line; `at` is when its message came in (epoch milliseconds), `phase` colours it. */
  function add(text, { phase, at = Date.now() } = {}) {
    const li = document.createElement('li');
    const time = document.createElement('time');
    const when = new Date(at);
    time.dateTime = when.toISOString();
    time.textContent = when.toLocaleTimeString(language(), { hour: '2-digit', minute: '2-digit' });
    const body = document.createElement('span');
    body.textContent = text;
    if (phase) li.dataset.phase = phase;
    li.append(time, body);
    els.activity.prepend(li);
    while (els.activity.children.length > ACTIVITY_LIMIT) els.activity.lastChild.remove();
    els.activityEmpty.hidden = true;
  }

  function clear() {
    els.activity.textContent = '';
    els.activityEmpty.hidden = false;
  }

  return { add, clear };
}
