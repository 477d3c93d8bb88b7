// The "Sound and alerts" card: the end sound, its volume, a preview, and the "1 minute left" warning, each
// remembered in this browser (storage.js). The sounds themselves are sound.js's; what they are, alerts.js's.

import { t } from './i18n.js';
import { load, save } from './storage.js';
import { speakEveryFrom } from './spoken.js';
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
    for (const option of els.speakSelect.options) {
      const n = Number(option.value);
      setText(option, n === 0 ? t('speakNever') : t('speakEveryN', { n }));
    }
    els.speakSelect.value = String(speakEveryFrom(load('speakEvery')));
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
    els.speakSelect.addEventListener('change', () => save('speakEvery', speakEveryFrom(els.speakSelect.value)));
    els.warnInput.addEventListener('change', () => {
      setWarningWanted(els.warnInput.checked);
      render();
    });
    render();
  }

  return { wire, render };
}
