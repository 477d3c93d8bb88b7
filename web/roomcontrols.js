// The room's controls: the timer's buttons (reset behind a confirmation), extend, away, the host-only switch
// and each member's task field. Each sends a command; what the room becomes comes back as a snapshot.

import { t } from './i18n.js';
import { mayControl, setText } from './render.js';
import { requestSent, taskSent } from './roommodel.js';
import { overLimit } from './formchecks.js';

export function createRoomControls({ els, page, send, explainHostOnly, renderConnectionControls }) {
  /** Start, pause or resume, as the toggle says; from someone who may not, the host note says why. */
  function toggleTimer() {
    const { room, me } = page.model;
    if (page.conn === 'joined' && !mayControl(room, me)) { explainHostOnly(); return; }
    if (els.toggle.disabled) return;
    send(els.toggle.dataset.action || 'start');
  }

  /** The task field against the server's limit, counted as the server counts (formchecks.js): past it, the
   *  note under the field says the limit and the count and the field is marked; nothing is cut off. Returns
   *  whether the text may be sent. */
  function checkTask(input = document.getElementById('my-task'), note = document.getElementById('my-task-error')) {
    if (!input) return true;
    const over = overLimit('task', input.value.trim(), page.model.limits);
    if (over) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
    if (note) {
      note.hidden = !over;
      setText(note, over ? t('taskTooLong', over) : '');
    }
    return !over;
  }

  /** A member's task field: Enter or leaving it saves, Escape puts back the saved text. A task past the limit
   *  is not sent: it stays as typed (the room's snapshots do not overwrite it) until shortened or Escape. */
  function wireTaskInput(input, note) {
    const commit = () => {
      if (!checkTask(input, note)) return;
      input.dataset.editing = 'false';
      const text = input.value.trim();
      if (text === (input.dataset.saved ?? '')) return;
      const ref = send('task', { text });
      if (ref !== null) page.model = taskSent(page.model, text, ref);
    };
    input.addEventListener('focus', () => { input.dataset.editing = 'true'; });
    input.addEventListener('input', () => checkTask(input, note));
    input.addEventListener('keydown', (event) => {
      // Enter on a task past the limit keeps the focus in the field, where the note says why.
      if (event.key === 'Enter') {
        event.preventDefault();
        if (checkTask(input, note)) input.blur();
      }
      if (event.key === 'Escape') {
        input.value = input.dataset.saved ?? '';
        checkTask(input, note);
        input.blur();
      }
    });
    input.addEventListener('blur', commit);
  }

  function wire() {
    els.toggle.addEventListener('click', toggleTimer);
    els.skip.addEventListener('click', () => send('skip'));
    els.reset.addEventListener('click', () => {
      if (typeof els.resetDialog.showModal === 'function') {
        els.resetDialog.showModal();
        els.resetCancel.focus();
      } else if (window.confirm(t('resetTitle'))) {
        send('reset');
      }
    });
    els.resetCancel.addEventListener('click', () => els.resetDialog.close());
    els.resetConfirm.addEventListener('click', () => { els.resetDialog.close(); send('reset'); });
    els.resetDialog.addEventListener('click', (event) => { if (event.target === els.resetDialog) els.resetDialog.close(); });

    els.hostOnlyToggle.addEventListener('change', () => {
      els.hostOnlyToggle.setAttribute('aria-checked', String(els.hostOnlyToggle.checked));
      const ref = send('control', { mode: els.hostOnlyToggle.checked ? 'host' : 'anyone' });
      if (ref === null) {
        els.hostOnlyToggle.checked = page.model.room?.control === 'host';
        return;
      }
      page.model = requestSent(page.model, 'control', ref);
      renderConnectionControls();
    });
    for (const button of els.extendButtons) {
      button.addEventListener('click', () => send('extend', { seconds: Number(button.dataset.extend) }));
    }
    els.away.addEventListener('click', () => send('presence', { away: els.away.getAttribute('aria-pressed') !== 'true' }));
  }

  return { wire, toggleTimer, wireTaskInput, checkTask };
}
