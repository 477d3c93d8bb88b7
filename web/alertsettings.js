// The "Sound and alerts" card: the end sound, its volume, a preview, and the "1 minute left" warning, each
// remembered in this browser (storage.js). The sounds themselves are sound.js's; what they are, alerts.js's.

import { t } from './i18n.js';
import { setText } from './render.js';
import {
  chosenSound, setChosenSound, chosenVolume, setChosenVolume, warningWanted, setWarningWanted, playSound,
  unlockAudio,
} from './sound.js';

export function createAlertSettings({ els }) {
  function render() {
    els.soundSelect.value = chosenSound();
    els.volumeInput.value = String(chosenVolume());
    setText(els.volumeValue, `${chosenVolume()}%`);
    els.warnInput.checked = warningWanted();
    const parts = [t(`sound_${chosenSound()}`), `${chosenVolume()}%`];
    if (warningWanted()) parts.push(t('warnShort'));
    setText(els.alertsSummary, parts.join(' · '));
  }

  function preview() {
    unlockAudio();
    playSound(chosenSound(), 'focus', chosenVolume());
  }

  function wire() {
    els.soundSelect.addEventListener('change', () => {
      setChosenSound(els.soundSelect.value);
      render();
      preview();
    });
    els.volumeInput.addEventListener('input', () => {
      setChosenVolume(els.volumeInput.value);
      render();
    });
    els.volumeInput.addEventListener('change', preview);
    els.preview.addEventListener('click', preview);
    els.warnInput.addEventListener('change', () => {
      setWarningWanted(els.warnInput.checked);
      render();
    });
    render();
  }

  return { wire, render };
}
