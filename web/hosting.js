// The host's tools beside the controls: the room's passcode (set a new one, or remove it) and removing a
// member, who may not join again for a while (PROTOCOL.md §4, "The host's tools"). The server checks that
// only the host may; the page offers them to the host alone.

import { t } from './i18n.js';
import { characterCount } from './formchecks.js';

export function createHosting({ els, page, send }) {
  const iHost = () => !!page.model.me && page.model.room?.host === page.model.me;

  /** Asks before removing `memberId`: the ban makes it more than a click to undo. */
  function remove(memberId) {
    const { room, me } = page.model;
    const member = room?.members.find((m) => m.id === memberId);
    if (!member || !iHost() || memberId === me) return;
    if (window.confirm(t('removeConfirm', { name: member.name }))) send('kick', { member: memberId });
  }

  els.hostPasscodeForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const input = els.hostPasscodeInput;
    const { minPasscodeLength = 4, maxPasscodeLength = 64 } = page.model.limits ?? {};
    const passcode = input.value;
    // Counted as the server counts it (user-perceived characters); the words say the bound that was missed.
    const length = characterCount(passcode);
    const problem = length < minPasscodeLength ? t('passcodeTooShort', { min: minPasscodeLength })
      : length > maxPasscodeLength ? t('passcodeTooLong', { max: maxPasscodeLength }) : null;
    if (!iHost() || problem) {
      input.setCustomValidity(problem ?? '');
      input.reportValidity();
      return;
    }
    input.setCustomValidity('');
    if (send('passcode', { passcode }) !== null) input.value = '';
  });
  els.hostPasscodeInput.addEventListener('input', () => els.hostPasscodeInput.setCustomValidity(''));
  els.removePasscode.addEventListener('click', () => {
    if (iHost()) send('passcode', { passcode: null });
  });

  return { remove };
}
