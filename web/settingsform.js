// The room's settings form: checked against the server's limits before it is sent, the note that says when
// saved settings apply, and the server's refusal under the form.

import { t } from './i18n.js';
import { settingsFrom, LENGTH_FIELDS } from './formchecks.js';
import { setText } from './render.js';
import { requestSent, settingsEdited } from './roommodel.js';
import { errorWithDetail } from './wording.js';

const SETTINGS_NOTE_MS = 8000;
const LABELS = { focus: 'focusLen', shortBreak: 'shortLen', longBreak: 'longLen' };

/** A bound of a phase length as the form names it: whole minutes, else seconds. */
function lengthText(seconds) {
  return seconds % 60 === 0 ? `${seconds / 60} ${t('min')}` : `${seconds} ${t('sec')}`;
}

/** This browser's IANA time zone (the server refuses anything else). */
function browserZone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

export function createSettingsForm({ els, page, send, render }) {
  let noteTimer = null;

  function clearNote() {
    clearTimeout(noteTimer);
    setText(els.settingsNote, '');
    delete els.settingsNote.dataset.applies;
  }

  /** The server took the settings: from now, or from the next phase. */
  function saved(appliesFrom) {
    els.saveSettings.disabled = false;
    setText(els.settingsNote, t(appliesFrom === 'nextPhase' ? 'appliesNext' : 'appliesNow'));
    els.settingsNote.dataset.applies = appliesFrom;
    clearTimeout(noteTimer);
    noteTimer = setTimeout(clearNote, SETTINGS_NOTE_MS);
  }

  /** The connection went before the answer came: the button works again once joined, what was typed stays, and
   *  the note says why "Saving…" ended with nothing. */
  function unanswered() {
    clearNote();
    setText(els.settingsNote, t('answerLost'));
  }

  function refused(error) {
    els.saveSettings.disabled = false;
    els.settingsError.hidden = false;
    setText(els.settingsError, errorWithDetail(error));
  }

  /** The form's settings, or the error to show (the offending field is focused). */
  function read() {
    const { limits } = page.model;
    const inputs = { focus: els.setFocus, shortBreak: els.setShort, longBreak: els.setLong, longBreakEvery: els.setEvery,
      aligned: els.setAligned };
    const { settings, problem } = settingsFrom({
      focus: els.setFocus.value, shortBreak: els.setShort.value, longBreak: els.setLong.value,
      longBreakEvery: els.setEvery.value, autoStart: els.setAuto.checked,
      aligned: els.setAligned.checked ? (els.setAligned.dataset.zone || browserZone()) : null,
    }, limits);
    // The fields checked before the first problem are fine; the ones after it are left as they were.
    for (const field of [...LENGTH_FIELDS, 'longBreakEvery', 'aligned']) {
      if (field === problem?.field) break;
      inputs[field].removeAttribute('aria-invalid');
    }
    if (!problem) return { settings };
    const input = inputs[problem.field];
    input.setAttribute('aria-invalid', 'true');
    input.focus();
    if (problem.field === 'longBreakEvery') return { error: t('invalidEvery', { max: limits.maxLongBreakEvery }) };
    if (problem.field === 'aligned') return { error: t('invalidAligned') };
    return {
      error: t('invalidDuration', { field: t(LABELS[problem.field]), min: lengthText(problem.least), max: lengthText(problem.most) }),
    };
  }

  function wire() {
    els.settingsForm.addEventListener('input', () => {
      page.model = settingsEdited(page.model, true);
      clearNote();
    });
    // Closing the form drops unsaved edits, so that it shows the room's settings again when reopened.
    els.settingsDetails.addEventListener('toggle', (event) => {
      if (event.target.open || page.model.configureRef !== null) return;
      page.model = settingsEdited(page.model, false);
      els.settingsError.hidden = true;
      render();
    });
    els.settingsForm.addEventListener('submit', (event) => {
      event.preventDefault();
      els.settingsError.hidden = true;
      const { settings, error } = read();
      if (error) {
        els.settingsError.hidden = false;
        setText(els.settingsError, error);
        return;
      }
      const ref = send('configure', settings);
      if (ref !== null) {
        page.model = requestSent(page.model, 'configure', ref);
        els.saveSettings.disabled = true;
        clearNote();
        setText(els.settingsNote, t('saving'));
      }
    });
  }

  return { wire, clearNote, saved, refused, unanswered };
}
