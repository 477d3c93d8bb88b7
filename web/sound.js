// The end-of-phase chime, made with the Web Audio API (no audio files), and the browser notification.

import { load, save } from './storage.js';

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

/** One soft bell note: a sine with a quieter octave partial and an exponential decay. */
function bell(ctx, frequency, start, duration, level) {
  const gain = ctx.createGain();
  gain.gain.setValueAtTime(0.0001, start);
  gain.gain.exponentialRampToValueAtTime(level, start + 0.015);
  gain.gain.exponentialRampToValueAtTime(0.0001, start + duration);
  gain.connect(ctx.destination);
  for (const [multiple, share] of [[1, 1], [2, 0.25], [3, 0.08]]) {
    const osc = ctx.createOscillator();
    const partGain = ctx.createGain();
    osc.type = 'sine';
    osc.frequency.setValueAtTime(frequency * multiple, start);
    partGain.gain.value = share;
    osc.connect(partGain).connect(gain);
    osc.start(start);
    osc.stop(start + duration + 0.05);
  }
}

/**
 * Plays the chime for a completed phase: falling notes when a focus ends (time to rest),
 * rising notes when a break ends (time to work).
 */
export function playChime(completedPhase) {
  if (!soundEnabled()) return;
  buzz();
  unlockAudio();
  if (!context || context.state !== 'running') return;
  const now = context.currentTime + 0.02;
  const notes = completedPhase === 'focus' ? [784, 659.25, 523.25] : [523.25, 659.25, 784];
  notes.forEach((frequency, i) => bell(context, frequency, now + i * 0.18, 1.1, 0.22));
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

/** Shows a notification when permitted and wanted, and only when the page is not already in view. */
export function notify(title, body) {
  if (!notificationsSupported() || Notification.permission !== 'granted' || !notificationsWanted()) return;
  if (document.visibilityState === 'visible' && document.hasFocus()) return;
  try {
    const n = new Notification(title, { body, tag: 'pomodoro-phase', icon: '/favicon.svg' });
    n.onclick = () => { window.focus(); n.close(); };
  } catch {
    // Some platforms (Android Chrome) allow notifications only from a service worker; the sound remains.
  }
}
