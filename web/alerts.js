// What the page's alerts decide, as pure functions with the time as an argument (tested under node in
// Tests/browser/alerts_model.mjs): whether the "1 minute left" warning is due, and the end sounds to choose
// from with their notes. No DOM, no audio, no clock here: sound.js plays what these say.

/** How long before the end the warning comes. */
export const WARNING_LEAD_MS = 60 * 1000;

/** The warning's memory: which phase it belongs to, and whether the warning may still go off in it. */
export const NO_WARNING = Object.freeze({ phase: null, armed: false });

/** A phase of one room, told apart from the next one even when they have the same name (focus 1, focus 2). */
function phaseKey(room) {
  return room ? `${room.id}|${room.phase}|${room.cycle}` : null;
}

/**
 * One look at the room at `remaining` milliseconds before its phase ends: returns `{ memory, warn }`.
 *
 * The warning goes off once per phase when a running phase crosses WARNING_LEAD_MS, and only after this page
 * saw more than that left: a phase of a minute or less, or a room joined with under a minute to go, stays
 * quiet. Time added after the warning (+3 min) arms it again, so the new last minute is announced too.
 * A paused or idle room never warns.
 */
export function warningStep(memory, room, remaining, lead = WARNING_LEAD_MS) {
  const key = phaseKey(room);
  let next = memory.phase === key ? memory : { phase: key, armed: false };
  if (!room || room.status !== 'running' || room.phase === 'idle') return { memory: next, warn: false };
  if (remaining > lead) {
    if (!next.armed) next = { ...next, armed: true };
    return { memory: next, warn: false };
  }
  if (next.armed && remaining > 0) return { memory: { ...next, armed: false }, warn: true };
  return { memory: next, warn: false };
}

/** The end sounds, in the order the picker lists them; the first is the default. */
export const SOUNDS = Object.freeze(['bell', 'marimba', 'digital', 'gong']);

/** The volume when nothing is chosen yet, 0 to 100. */
export const DEFAULT_VOLUME = 70;

/** A stored sound name, or the default when the stored one is not (or no longer) a choice. */
export function soundFrom(text) {
  return SOUNDS.includes(text) ? text : SOUNDS[0];
}

/** A stored volume, 0 to 100 in whole steps, or the default. */
export function volumeFrom(text) {
  const n = Number(text);
  if (text === null || text === undefined || text === '' || !Number.isFinite(n)) return DEFAULT_VOLUME;
  return Math.min(100, Math.max(0, Math.round(n)));
}

/** The gain a volume plays at: quadratic, as loudness is heard, so the low half of the slider stays useful. */
export function gainFor(volume) {
  const v = volumeFrom(volume) / 100;
  return v * v;
}

const C5 = 523.25, E5 = 659.25, G5 = 783.99, A4 = 440;

/**
 * The notes of a sound: [{ at (s), frequency (Hz), duration (s), level (0..1) }] plus the sound's voice
 * (how sound.js shapes each note). `event` is what happened: 'focus' or a break completed (falling notes when
 * a focus ends, time to rest; rising when a break ends), or 'warning' (two soft, short notes).
 */
export function notesFor(sound, event) {
  const name = soundFrom(sound);
  if (event === 'warning') {
    const voice = name === 'digital' ? 'square' : name === 'gong' ? 'gong' : name === 'marimba' ? 'marimba' : 'bell';
    return { voice, notes: [{ at: 0, frequency: A4, duration: 0.35, level: 0.5 }, { at: 0.22, frequency: A4, duration: 0.35, level: 0.5 }] };
  }
  const falling = event === 'focus';
  const line = (notes) => (falling ? notes : [...notes].reverse());
  switch (name) {
    case 'marimba':
      return { voice: 'marimba', notes: line([G5, E5, C5, G5 / 2]).map((f, i) => ({ at: i * 0.14, frequency: f, duration: 0.5, level: 0.9 })) };
    case 'digital':
      // Two bursts of three beeps, as a kitchen timer does.
      return {
        voice: 'square',
        notes: [0, 0.12, 0.24, 0.6, 0.72, 0.84].map((at) => ({ at, frequency: falling ? 1760 : 2093, duration: 0.08, level: 0.35 })),
      };
    case 'gong':
      return { voice: 'gong', notes: [{ at: 0, frequency: falling ? 110 : 146.83, duration: 3.2, level: 1 }] };
    case 'bell':
    default:
      return { voice: 'bell', notes: line([G5, E5, C5]).map((f, i) => ({ at: i * 0.18, frequency: f, duration: 1.1, level: 1 })) };
  }
}
