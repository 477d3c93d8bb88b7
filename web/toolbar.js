// The room bar's own buttons: the language, the chime, notifications, and copying the invite link.

import { t, setLanguage, language } from './i18n.js';
import { setText } from './render.js';
import { inviteURL } from './address.js';
import {
  unlockAudio, playChime, soundEnabled, setSoundEnabled, notificationsSupported, notificationsWanted,
  setNotificationsWanted, requestNotifications,
} from './sound.js';

export function createToolbar({ els, page, notices, languageChanged }) {
  let inviteTimer = null;

  function renderNotifyButton() {
    const on = Notification.permission === 'granted' && notificationsWanted();
    els.notify.setAttribute('aria-pressed', String(on));
  }

  /** Sound on or off (the button, and the `m` key): a chime says it is on again. */
  function toggleSound() {
    const on = !soundEnabled();
    setSoundEnabled(on);
    els.sound.setAttribute('aria-pressed', String(on));
    if (on) { unlockAudio(); playChime('shortBreak'); }
    notices.announce(t(on ? 'soundOn' : 'soundOff'));
  }

  async function copyInvite() {
    const url = inviteURL(page.model.roomName);
    let copied = false;
    try {
      if (navigator.clipboard && window.isSecureContext) {
        await navigator.clipboard.writeText(url);
        copied = true;
      }
    } catch {
      copied = false;
    }
    if (!copied) {
      const scratch = document.createElement('textarea');
      scratch.value = url;
      scratch.setAttribute('readonly', '');
      scratch.className = 'clipboard-scratch';
      document.body.append(scratch);
      scratch.select();
      try { copied = document.execCommand('copy'); } catch { copied = false; }
      scratch.remove();
    }
    if (copied) {
      setText(els.inviteLabel, t('copied'));
      els.invite.dataset.copied = 'true';
      clearTimeout(inviteTimer);
      inviteTimer = setTimeout(() => {
        setText(els.inviteLabel, t('copyInvite'));
        delete els.invite.dataset.copied;
      }, 2000);
    } else {
      notices.show('', t('copyManual', { url }));
    }
  }

  function wire() {
    els.lang.value = language();
    els.lang.addEventListener('change', () => {
      setLanguage(els.lang.value, { remember: true });
      languageChanged();
    });

    els.invite.addEventListener('click', copyInvite);

    els.sound.addEventListener('click', toggleSound);
    els.sound.setAttribute('aria-pressed', String(soundEnabled()));

    if (notificationsSupported()) {
      els.notify.hidden = false;
      renderNotifyButton();
      els.notify.addEventListener('click', async () => {
        if (Notification.permission === 'denied') {
          notices.show('', t('notifyBlocked'));
          return;
        }
        if (Notification.permission === 'default') {
          const result = await requestNotifications();
          setNotificationsWanted(result === 'granted');
        } else {
          setNotificationsWanted(!notificationsWanted());
        }
        renderNotifyButton();
      });
    }
  }

  return { wire, toggleSound };
}
