// The keyboard: Escape closes the notice; Space anywhere in the room, outside text fields and dialogs,
// starts or pauses the timer.

import { unlockAudio } from './sound.js';

/** Where Space is the element's own: text fields type spaces, check boxes tick. */
function takesSpace(target) {
  if (!(target instanceof Element)) return false;
  return !!target.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"], dialog');
}

export function wireShortcuts({ els, page, notices, toggleTimer }) {
  document.addEventListener('pointerdown', unlockAudio, { passive: true });
  document.addEventListener('keydown', (event) => {
    unlockAudio();
    if (event.key === 'Escape' && notices.isOpen()) notices.hide();
    const isSpace = event.code === 'Space' || event.key === ' ';
    if (!isSpace || event.repeat || event.ctrlKey || event.metaKey || event.altKey) return;
    if (page.view !== 'room' || els.resetDialog.open || els.handoffDialog.open) return;
    if (takesSpace(event.target)) return;
    // Anywhere else, a focused button included, space is the timer's: preventing the default here also
    // keeps the focused button from clicking on key-up, so the timer toggles exactly once.
    event.preventDefault();
    toggleTimer();
  });
}
