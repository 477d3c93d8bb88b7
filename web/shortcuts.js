// The keyboard: pomo's keys in the room (web/keys.js), `?` for the list of them, Escape closes the notice.
// Never while typing in a field or inside a dialog: there, keys are the field's own.

import { unlockAudio } from './sound.js';
import { commandForKey, KEY_HELP } from './keys.js';
import { mayControl } from './render.js';
import { applyTranslations } from './i18n.js';

/** Where keys are the element's own: text fields type, selects choose, dialogs have their buttons. */
function isTyping(target) {
  if (!(target instanceof Element)) return false;
  if (target.closest('dialog, textarea, select, [contenteditable=""], [contenteditable="true"]')) return true;
  const input = target.closest('input');
  // Check boxes and switches take Space but no letters; text-like fields take everything.
  return !!input && !['checkbox', 'radio', 'button', 'submit', 'reset', 'range', 'color', 'file'].includes(input.type);
}

export function wireShortcuts({ els, page, notices, send, toggleTimer, explainHostOnly, toggleSound, sayTimeLeft }) {
  function openHelp() {
    if (els.keysDialog.open) { els.keysDialog.close(); return; }
    if (typeof els.keysDialog.showModal === 'function') els.keysDialog.showModal();
    els.keysClose.focus();
  }

  /** A control for the host only, pressed by someone else: the host note says why, as a click would. */
  function controlled(run) {
    const { room, me } = page.model;
    if (page.conn === 'joined' && !mayControl(room, me)) { explainHostOnly(); return; }
    run();
  }

  function carryOut({ command, minutes }) {
    switch (command) {
      case 'toggle': toggleTimer(); break;
      case 'skip': controlled(() => { if (!els.skip.disabled) els.skip.click(); }); break;
      case 'reset': controlled(() => { if (!els.reset.disabled) els.reset.click(); }); break;
      case 'extend': controlled(() => {
        const button = els.extendButtons.find((b) => Number(b.dataset.extend) === minutes * 60);
        if (button) {
          if (!button.disabled) button.click();
        } else if (minutes < 0 && !els.extendButtons[0].disabled) {
          // The page has no button for less time; pomo's `-` has a key only.
          send('extend', { seconds: minutes * 60 });
        }
      }); break;
      case 'task': {
        const task = document.getElementById('my-task');
        if (task) { task.focus(); task.select(); }
        break;
      }
      case 'away': if (!els.away.disabled) els.away.click(); break;
      case 'sound': toggleSound(); break;
      case 'timeLeft': sayTimeLeft(); break;
      case 'help': openHelp(); break;
      default: break;
    }
  }

  document.addEventListener('pointerdown', unlockAudio, { passive: true });
  document.addEventListener('keydown', (event) => {
    unlockAudio();
    if (event.key === 'Escape' && notices.isOpen()) notices.hide();
    if (event.repeat || page.view !== 'room') return;
    const open = els.resetDialog.open || els.handoffDialog.open || els.keysDialog.open;
    if (open) {
      if (event.key === '?' && els.keysDialog.open) { event.preventDefault(); els.keysDialog.close(); }
      return;
    }
    if (isTyping(event.target)) return;
    const command = commandForKey(event);
    if (!command) return;
    // Anywhere else, a focused button included, the key is the page's: preventing the default here also
    // keeps a focused button from clicking on Space's key-up, so the timer toggles exactly once, and keeps
    // `t` from typing itself into the task field it focuses.
    event.preventDefault();
    carryOut(command);
  });

  els.keysClose.addEventListener('click', () => els.keysDialog.close());
  els.keysDialog.addEventListener('click', (event) => { if (event.target === els.keysDialog) els.keysDialog.close(); });
  els.kbdHelp.addEventListener('click', openHelp);
  buildHelp(els.keysList);
}

/** The help's list: each key as <kbd>, its words translated (again on every change of language). */
function buildHelp(list) {
  list.textContent = '';
  for (const { keys, words } of KEY_HELP) {
    const term = document.createElement('dt');
    keys.forEach((key, i) => {
      if (i > 0) term.append(' ');
      const kbd = document.createElement('kbd');
      kbd.textContent = key;
      if (key === 'Space') kbd.dataset.i18n = 'spaceKey';
      if (key === 'Esc') kbd.dataset.i18n = 'escKey';
      term.append(kbd);
    });
    const meaning = document.createElement('dd');
    meaning.dataset.i18n = words;
    // dt and dd straight in the dl: older screen readers (and axe) lose the pairs inside wrappers.
    list.append(term, meaning);
  }
  applyTranslations(list);
}
