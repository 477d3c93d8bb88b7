// The room's API tokens among the host's tools (docs/PROTOCOL.md §16): listed once joined, made with a name
// (the token shown once, to be copied), revoked. Offered to whoever may press the controls (anyone in an open
// room, the host in a host-only one); the server checks the same rule. The list is the room model's.

import { t } from './i18n.js';

const byId = (id) => document.getElementById(id);

export function createAPITokenView({ page, send }) {
  const els = {
    panel: byId('api-tokens'), list: byId('api-token-list'), none: byId('api-token-none'),
    created: byId('api-token-created'), createdLabel: byId('api-token-created-label'), secret: byId('api-token-secret'),
    form: byId('api-token-form'), name: byId('api-token-name'),
  };
  /** The room whose list was asked for, so it is asked once per room (and again after a reconnect). */
  let askedFor = null;

  const mayManage = () => {
    const { room, me, observing } = page.model;
    return !!room && !!me && !observing && (room.control === 'anyone' || room.host === me);
  };
  const when = (ms) => new Date(ms).toLocaleString(document.documentElement.lang || undefined,
    { dateStyle: 'medium', timeStyle: 'short' });

  function render() {
    const allowed = mayManage();
    els.panel.hidden = !allowed;
    if (!allowed) {
      askedFor = null;
      return;
    }
    const roomId = page.model.room.id;
    if (askedFor !== roomId && send('apiToken', { action: 'list' }) !== null) askedFor = roomId;
    const tokens = page.model.apiTokens ?? [];
    els.none.hidden = tokens.length > 0 || page.model.apiTokens === null;
    els.list.replaceChildren(...tokens.map((token) => {
      const item = document.createElement('li');
      const name = document.createElement('span');
      name.className = 'api-token-name';
      name.textContent = token.name;
      const meta = document.createElement('span');
      meta.className = 'hint';
      meta.textContent = token.lastUsedAt == null
        ? t('apiTokenNeverUsed', { made: when(token.createdAt) })
        : t('apiTokenUsed', { made: when(token.createdAt), used: when(token.lastUsedAt) });
      const revoke = document.createElement('button');
      revoke.type = 'button';
      revoke.className = 'btn ghost small';
      revoke.textContent = t('apiTokenRevoke');
      revoke.setAttribute('aria-label', t('apiTokenRevokeLabel', { name: token.name }));
      revoke.addEventListener('click', () => send('apiToken', { action: 'revoke', id: token.id }));
      item.append(name, ' ', meta, ' ', revoke);
      return item;
    }));
    const created = page.model.createdToken;
    const shown = created && tokens.find((token) => token.id === created.id);
    els.created.hidden = !shown;
    if (shown) {
      els.createdLabel.textContent = t('apiTokenNew', { name: shown.name });
      if (els.secret.value !== created.token) els.secret.value = created.token;
    } else {
      els.secret.value = '';
    }
  }

  els.form.addEventListener('submit', (event) => {
    event.preventDefault();
    const name = els.name.value.trim();
    if (!name || !mayManage()) {
      els.name.setCustomValidity(t('apiTokenName'));
      els.name.reportValidity();
      return;
    }
    els.name.setCustomValidity('');
    if (send('apiToken', { action: 'create', name }) !== null) els.name.value = '';
  });
  els.name.addEventListener('input', () => els.name.setCustomValidity(''));
  els.secret.addEventListener('focus', () => els.secret.select());

  /** A new connection asks again: the list may have changed meanwhile. */
  function reset() { askedFor = null; }

  return { render, reset };
}
