// Making another member the host: the host's confirmation dialog (a plain confirm where dialogs are missing).

import { t } from './i18n.js';
import { setText } from './render.js';

export function createHandoff({ els, page, send }) {
  let target = null;

  function ask(memberId) {
    const { room, me } = page.model;
    const member = room?.members.find((m) => m.id === memberId);
    if (!member || room.host !== me || memberId === me) return;
    target = memberId;
    const title = t('handoffTitle', { name: member.name });
    if (typeof els.handoffDialog.showModal === 'function') {
      setText(els.handoffTitle, title);
      setText(els.handoffBody, t('handoffBody', { name: member.name }));
      els.handoffDialog.showModal();
      els.handoffCancel.focus();
    } else if (window.confirm(title)) {
      send('handOff', { member: memberId });
    }
  }

  els.handoffCancel.addEventListener('click', () => els.handoffDialog.close());
  els.handoffConfirm.addEventListener('click', () => {
    const member = target;
    els.handoffDialog.close();
    if (member) send('handOff', { member });
  });
  els.handoffDialog.addEventListener('click', (event) => {
    if (event.target === els.handoffDialog) els.handoffDialog.close();
  });
  els.handoffDialog.addEventListener('close', () => { target = null; });

  return { ask, target: () => target };
}
