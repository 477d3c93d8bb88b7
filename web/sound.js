// The end-of-phase sounds, made with the Web Audio API (no audio files), and the notifications, shown through
// the service worker's registration so they also appear with the tab in the background (and on Android).

import { load, save } from './storage.js';
import { soundFrom, volumeFrom, gainFor, notesFor } from './alerts.js';

let context = null;

/** Browsers only let audio start after a user gesture: call this from one (click, key). */
export function unlockAudio() {
  const AudioContextClass = window.AudioContext || window.webkitAudioContext;
  if (!AudioContextClass) return;
  try {
    if (!context) context = new AudioContextClass();
    if (context.state === 'suspended') context.resume().catch(() => {});
  } catch {
    context = null;
  }
}

export function soundEnabled() { return load('sound', 'on') !== 'off'; }
export function setSoundEnabled(on) { save('sound', on ? 'on' : 'off'); }

/** The chosen end sound, its volume (0 to 100) and the "1 minute left" warning, remembered per browser. */
export function chosenSound() { return soundFrom(load('soundName')); }
export function setChosenSound(name) { save('soundName', soundFrom(name)); }
export function chosenVolume() { return volumeFrom(load('volume')); }
export function setChosenVolume(volume) { save('volume', volumeFrom(volume)); }
export function warningWanted() { return load('warn', 'off') === 'on'; }
export function setWarningWanted(on) { save('warn', on ? 'on' : 'off'); }

/** One note in a voice: a bell (sine with soft partials), a marimba (quick decay), a square beep or a gong
 *  (low, with inharmonic partials and a long tail), each with an exponential decay. */
function note(ctx, out, voice, { at, frequency, duration, level }) {
  const gain = ctx.createGain();
  const attack = voice === 'gong' ? 0.04 : 0.01;
  gain.gain.setValueAtTime(0.0001, at);
  gain.gain.exponentialRampToValueAtTime(Math.max(0.0002, level), at + attack);
  gain.gain.exponentialRampToValueAtTime(0.0001, at + duration);
  gain.connect(out);
  const partials = {
    bell: [[1, 1], [2, 0.25], [3, 0.08]],
    marimba: [[1, 1], [4, 0.12], [10, 0.03]],
    square: [[1, 1]],
    gong: [[1, 1], [1.48, 0.5], [2.16, 0.35], [2.9, 0.2], [4.1, 0.1]],
  }[voice] ?? [[1, 1]];
  for (const [multiple, share] of partials) {
    const osc = ctx.createOscillator();
    const partGain = ctx.createGain();
    osc.type = voice === 'square' ? 'square' : 'sine';
    osc.frequency.setValueAtTime(frequency * multiple, at);
    partGain.gain.value = share;
    osc.connect(partGain).connect(gain);
    osc.start(at);
    osc.stop(at + duration + 0.05);
  }
}

/** Plays a sound for `event` ('focus' or a break completed, or 'warning') at a volume; true when it played. */
export function playSound(sound, event, volume) {
  unlockAudio();
  if (!context || context.state !== 'running') return false;
  const master = context.createGain();
  master.gain.value = 0.25 * gainFor(volume);
  master.connect(context.destination);
  const start = context.currentTime + 0.02;
  const { voice, notes } = notesFor(sound, event);
  for (const n of notes) note(context, master, voice, { ...n, at: start + n.at });
  return true;
}

/**
 * Plays the chosen sound for a completed phase: falling notes when a focus ends (time to rest),
 * rising notes when a break ends (time to work).
 */
export function playChime(completedPhase) {
  if (!soundEnabled()) return;
  buzz();
  playSound(chosenSound(), completedPhase, chosenVolume());
}

/** The "1 minute left" sound: two short notes in the chosen sound's voice. */
export function playWarning() {
  if (!soundEnabled()) return;
  playSound(chosenSound(), 'warning', chosenVolume());
}

/** A short buzz on phones, with the sound (the same switch). */
export function buzz() {
  if (!soundEnabled() || typeof navigator.vibrate !== 'function') return;
  try { navigator.vibrate([180, 90, 180]); } catch { /* not allowed without a gesture: fine */ }
}

export function notificationsSupported() {
  return 'Notification' in window && window.isSecureContext;
}

export function notificationsWanted() { return load('notify', 'on') !== 'off'; }
export function setNotificationsWanted(on) { save('notify', on ? 'on' : 'off'); }

export async function requestNotifications() {
  if (!notificationsSupported()) return 'unsupported';
  if (Notification.permission === 'default') {
    try { return await Notification.requestPermission(); } catch { return Notification.permission; }
  }
  return Notification.permission;
}

/**
 * Shows a notification when permitted and wanted, and only when the page is not already in view. It goes
 * through the service worker's registration (web/sw.js), which shows it with the tab in the background and
 * focuses the room's tab on a click; without a worker, the page's own Notification is the fallback.
 */
export async function notify(title, body, { tag = 'pomodoro-phase' } = {}) {
  if (!notificationsSupported() || Notification.permission !== 'granted' || !notificationsWanted()) return;
  if (document.visibilityState === 'visible' && document.hasFocus()) return;
  const options = { body, tag, renotify: true, icon: '/icons/icon-192.png', badge: '/icons/icon-192.png', data: { url: location.href } };
  try {
    const registration = await readyRegistration();
    if (registration) {
      await registration.showNotification(title, options);
      return;
    }
  } catch {
    // Falls back to the page's own notification below.
  }
  try {
    const n = new Notification(title, options);
    n.onclick = () => { window.focus(); n.close(); };
  } catch {
    // Some platforms (Android Chrome) allow notifications only from a service worker; the sound remains.
  }
}

/** The service worker's registration once it is active, or null when there is none (not within a moment). */
async function readyRegistration() {
  if (!('serviceWorker' in navigator)) return null;
  const registration = await navigator.serviceWorker.getRegistration('/');
  if (!registration) return null;
  if (registration.active) return registration;
  return Promise.race([navigator.serviceWorker.ready, new Promise((resolve) => setTimeout(() => resolve(null), 3000))]);
}
