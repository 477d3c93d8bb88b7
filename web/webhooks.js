// The Webhooks panel's requests and words, from the server's `webhooks` list (docs/PROTOCOL.md §17): pure
// functions, no DOM and no translations, so that they run anywhere (webhookview.js draws what they return).
//
// A listed webhook looks like {id, url, events, format, language, enabled, disabledReason, createdAt,
// deliveries: [{eventId, event, state, attempts, status, error, createdAt, lastAttemptAt, nextAttemptAt}]}.

export const WEBHOOK_EVENTS = Object.freeze([
  'phase_started', 'phase_completed', 'schedule_warning', 'schedule_ended', 'member_joined', 'member_left', 'task_changed',
]);
export const WEBHOOK_FORMATS = Object.freeze(['slack', 'discord', 'json']);

/** The form's values as an `addWebhook` request, or the first problem as { field, key } (a word for i18n.js).
 *  `form` is {url, format, language, events: [...]}. The server checks again (its address rules). */
export function webhookFromForm(form) {
  const url = String(form.url ?? '').trim();
  if (!/^https?:\/\/[^\s/?#@]+[^\s]*$/i.test(url) || url.length > 2000) return { error: { field: 'url', key: 'webhookUrlBad' } };
  const events = WEBHOOK_EVENTS.filter((event) => (form.events ?? []).includes(event));
  if (!events.length) return { error: { field: 'events', key: 'webhookEventsNone' } };
  const format = WEBHOOK_FORMATS.includes(form.format) ? form.format : 'json';
  const request = { type: 'addWebhook', url, events, format };
  if (form.language) request.language = form.language;
  return { request };
}

/** The request for the panel's buttons: list, switch (with enabled), test, delete. */
export function webhookRequest(action, { id = null, enabled = null } = {}) {
  switch (action) {
    case 'switch': return { type: 'changeWebhook', id, enabled: !!enabled };
    case 'test': return { type: 'testWebhook', id };
    case 'delete': return { type: 'deleteWebhook', id };
    default: return { type: 'webhooks' };
  }
}

/** A delivery as a line of words ({ key, values }): delivered with its status, waiting with what went wrong,
 *  or given up. `when` formats a time (epoch ms). */
export function deliveryWords(delivery, when = (ms) => new Date(ms).toLocaleTimeString()) {
  const event = { key: `webhookEv_${delivery.event}` };
  switch (delivery.state) {
    case 'delivered':
      return { key: 'webhookDelivered', values: { event, status: delivery.status ?? '', when: when(delivery.lastAttemptAt ?? delivery.createdAt) } };
    case 'failed':
      return { key: 'webhookFailed', values: { event, error: delivery.error ?? '' } };
    default:
      return { key: 'webhookDue', values: { event, n: delivery.attempts ?? 0, error: delivery.error ?? '' } };
  }
}

/** The host part of a webhook's URL, to show without its secret path (a Slack URL is a credential). */
export function shownURL(url) {
  const match = /^(https?:\/\/[^/?#]+)/i.exec(String(url ?? ''));
  return match ? `${match[1]}/…` : String(url ?? '');
}
