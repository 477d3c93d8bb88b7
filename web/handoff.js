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
    if (!member) return;
    send('handOff', { member });
    // The Make host button the focus would go back to leaves with the role: the focus goes to the new host's
    // row instead, which says who hosts now, rather than to the page's body.
    const row = els.members.querySelector(`li[data-member-id="${CSS.escape(member)}"]`);
    if (row) {
      row.tabIndex = -1;
      row.focus();
    }
  });
  els.handoffDialog.addEventListener('click', (event) => {
    if (event.target === els.handoffDialog) els.handoffDialog.close();
  });
  els.handoffDialog.addEventListener('close', () => { target = null; });

  return { ask, target: () => target };
}
