// The Webhooks card at work: shown to whoever may control the room (everyone in an open room, the host in
// a host-only one), it asks the room's webhooks once joined, draws each with its last deliveries, a switch,
// a test and a remove button, and sends the form; the new webhook's signing secret is shown once.
// The requests and the words are webhooks.js's.

import { t } from './i18n.js';
import { say } from './wording.js';
import { mayControl } from './render.js';
import { WEBHOOK_EVENTS, webhookFromForm, webhookRequest, deliveryWords, shownURL } from './webhooks.js';

const byId = (id) => document.getElementById(id);

export function createWebhookView({ page, connection }) {
  const els = {
    card: byId('webhook-card'), list: byId('webhook-list'), empty: byId('webhook-empty'), form: byId('webhook-form'),
    url: byId('webhook-url'), format: byId('webhook-format'), language: byId('webhook-language'),
    events: byId('webhook-events'), error: byId('webhook-error'), secret: byId('webhook-secret'),
  };
  /** The refs of this panel's requests: their errors are shown here. */
  const refs = new Set();
  let webhooks = null;
  let shownFor = null;

  function send(message) {
    const ref = connection.request(message);
    if (ref !== null) refs.add(ref);
  }

  function allowed() {
    const { room, me, observing } = page.model;
    return page.view === 'room' && page.conn === 'joined' && !!room && !observing && mayControl(room, me);
  }

  function refresh() {
    if (!allowed()) return;
    send(webhookRequest('list'));
  }

  /** A server message: the list, or an error answering one of this panel's requests. */
  function receive(message) {
    if (message?.type === 'webhooks' && message.room === page.model.room?.id) {
      webhooks = Array.isArray(message.webhooks) ? message.webhooks : [];
      if (message.secret) {
        els.secret.hidden = false;
        els.secret.textContent = t('webhookSecret', { secret: message.secret });
        els.form.reset();
        checkDefaults();
      }
      refs.delete(message.ref);
      draw();
    } else if (message?.type === 'error' && refs.has(message.ref)) {
      refs.delete(message.ref);
      els.error.textContent = t(`err_${message.code}`) + (message.message ? ` (${message.message})` : '');
    } else if (message?.type === 'ok' && refs.has(message.ref)) {
      refs.delete(message.ref);
      if (message.command === 'testWebhook') els.error.textContent = t('webhookTestSent');
      setTimeout(refresh, 1500);
    } else if (message?.type === 'event' && message.kind === 'webhookDisabled') {
      refresh();
    }
  }

  function checkDefaults() {
    for (const box of els.events.querySelectorAll('input')) box.checked = ['phase_started', 'phase_completed'].includes(box.value);
  }

  /** Shows the card to whoever may use it (asking the list when it comes into view for a room); the list
   *  itself is drawn only when a new one comes, so a redraw never takes the focus from its buttons. */
  function render() {
    const show = allowed();
    els.card.hidden = !show;
    if (!show) {
      shownFor = null;
      return;
    }
    const room = page.model.room.id;
    if (shownFor !== room) {
      shownFor = room;
      webhooks = null;
      els.secret.hidden = true;
      draw();
      refresh();
    }
  }

  function draw() {
    const focused = document.activeElement?.getAttribute('aria-label');
    els.list.replaceChildren();
    const list = webhooks ?? [];
    els.empty.hidden = list.length > 0;
    for (const hook of list) {
      const item = document.createElement('li');
      item.className = 'webhook-item';
      const head = document.createElement('div');
      head.className = 'webhook-head';
      const label = document.createElement('label');
      label.className = 'check small-check';
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.checked = !!hook.enabled;
      box.setAttribute('aria-label', t('webhookEnabledLabel', { n: hook.id }));
      box.addEventListener('change', () => send(webhookRequest('switch', { id: hook.id, enabled: box.checked })));
      const name = document.createElement('span');
      name.textContent = `${t(`webhookFormat_${hook.format}`)} · ${shownURL(hook.url)}`;
      label.append(box, name);
      const test = document.createElement('button');
      test.type = 'button';
      test.className = 'btn ghost small';
      test.textContent = t('webhookTest');
      test.setAttribute('aria-label', t('webhookTestLabel', { n: hook.id }));
      test.disabled = !hook.enabled;
      test.addEventListener('click', () => send(webhookRequest('test', { id: hook.id })));
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.className = 'btn ghost small';
      remove.textContent = t('webhookRemove');
      remove.setAttribute('aria-label', t('webhookRemoveLabel', { n: hook.id }));
      remove.addEventListener('click', () => send(webhookRequest('delete', { id: hook.id })));
      head.append(label, test, remove);
      item.append(head);
      if (!hook.enabled && hook.disabledReason) {
        const off = document.createElement('p');
        off.className = 'webhook-off';
        off.textContent = t('webhookOff', { reason: hook.disabledReason });
        item.append(off);
      }
      const deliveries = (hook.deliveries ?? []).slice(0, 3);
      if (deliveries.length) {
        const log = document.createElement('ul');
        log.className = 'webhook-deliveries';
        log.setAttribute('aria-label', t('webhookLast'));
        for (const delivery of deliveries) {
          const line = document.createElement('li');
          line.textContent = say(deliveryWords(delivery));
          log.append(line);
        }
        item.append(log);
      }
      els.list.append(item);
    }
    // The button or switch that had the focus keeps it in the new list.
    if (focused) [...els.list.querySelectorAll('[aria-label]')].find((el) => el.getAttribute('aria-label') === focused)?.focus();
  }

  function wire() {
    for (const event of WEBHOOK_EVENTS) {
      const label = document.createElement('label');
      label.className = 'check small-check';
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.value = event;
      const text = document.createElement('span');
      text.dataset.i18n = `webhookEv_${event}`;
      text.textContent = t(`webhookEv_${event}`);
      label.append(box, text);
      els.events.append(label);
    }
    checkDefaults();
    els.form.addEventListener('submit', (e) => {
      e.preventDefault();
      const events = [...els.events.querySelectorAll('input:checked')].map((box) => box.value);
      const { request, error } = webhookFromForm({
        url: els.url.value, format: els.format.value, language: els.language.value || document.documentElement.lang, events,
      });
      if (error) {
        els.error.textContent = t(error.key);
        (error.field === 'url' ? els.url : els.events.querySelector('input'))?.focus();
        return;
      }
      els.error.textContent = '';
      send(request);
    });
  }

  return { wire, render, refresh, receive };
}
