// The server's clock as seen from here, and the remaining time computed from it.
//
// Every server message carries serverTime. A sample `serverTime - localNowAtReceipt` is the clock offset
// minus the message's travel time, so the largest recent sample is the best estimate. Samples expire after
// a while so that a change of the local clock (sleep, NTP) is picked up within seconds.

const SAMPLE_LIFETIME_MS = 15000;

export class ServerClock {
  constructor() {
    this.samples = [];
    this.offset = 0;
    this.known = false;
  }

  observe(serverTime, localNow = Date.now(), monotonicNow = performance.now()) {
    if (typeof serverTime !== 'number' || !Number.isFinite(serverTime)) return;
    this.samples.push({ offset: serverTime - localNow, at: monotonicNow });
    this.samples = this.samples.filter((s, i, all) => i === all.length - 1 || monotonicNow - s.at < SAMPLE_LIFETIME_MS);
    if (this.samples.length > 32) this.samples.splice(0, this.samples.length - 32);
    this.offset = Math.max(...this.samples.map((s) => s.offset));
    this.known = true;
  }

  reset() {
    this.samples = [];
    this.offset = 0;
    this.known = false;
  }

  /** The server's wall clock now, in Unix epoch milliseconds. */
  now() {
    return Date.now() + this.offset;
  }
}

/** The browser's IANA time zone ("Europe/Berlin"), or null when it does not name one. The server counts a
 *  day's focus in this zone. */
export function browserTimeZone() {
  try {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    return typeof zone === 'string' && zone ? zone : null;
  } catch {
    return null;
  }
}

/** Milliseconds left in the room's phase: from endsAt while running, else the snapshot's value. */
export function remainingMs(room, clock) {
  if (!room) return 0;
  if (room.status === 'running' && typeof room.endsAt === 'number') {
    return Math.max(0, room.endsAt - clock.now());
  }
  if (room.status === 'idle') return (room.settings?.focus ?? 0) * 1000;
  return Math.max(0, room.remainingMs ?? 0);
}

/** The length the ring measures against. */
export function phaseLengthMs(room) {
  if (!room) return 0;
  if (room.status === 'idle') return (room.settings?.focus ?? 0) * 1000;
  return room.phaseLengthMs ?? 0;
}

/** Whole seconds shown for a remaining time: 24.3 s reads 0:25 (PROTOCOL.md §7). */
export const displaySeconds = (ms) => Math.max(0, Math.ceil(ms / 1000));

/** MM:SS, or H:MM:SS from an hour up. */
export function formatClock(totalSeconds) {
  const s = Math.max(0, Math.floor(totalSeconds));
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const seconds = s % 60;
  const mm = String(minutes).padStart(2, '0');
  const ss = String(seconds).padStart(2, '0');
  return hours > 0 ? `${hours}:${mm}:${ss}` : `${mm}:${ss}`;
}

/** A settings length in seconds as the form shows it: whole minutes as "25", else "m:ss". */
export function formatDurationInput(seconds) {
  if (seconds % 60 === 0) return String(seconds / 60);
  const m = Math.floor(seconds / 60);
  return `${m}:${String(seconds % 60).padStart(2, '0')}`;
}

/** Short human length for summaries: whole minutes through `minutes(n)` ("25 min"), else "m:ss". */
export function formatDurationShort(seconds, minutes = (n) => `${n} min`) {
  if (seconds % 60 === 0) return minutes(seconds / 60);
  return formatDurationInput(seconds);
}

/** Parses "25", "0.5", "1:30" (m:ss) or "1:05:00" (h:mm:ss) into whole seconds; null when it is not one. */
export function parseDuration(text) {
  const value = String(text).trim().replace(',', '.');
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(parseFloat(value) * 60);
  const parts = value.match(/^(\d+):([0-5]?\d)(?::([0-5]?\d))?$/);
  if (!parts) return null;
  if (parts[3] !== undefined) return Number(parts[1]) * 3600 + Number(parts[2]) * 60 + Number(parts[3]);
  return Number(parts[1]) * 60 + Number(parts[2]);
}

/** Totals of focus time in hours and minutes: the words come from `units` ({min, hour, hourMin}). */
export function formatTotal(seconds, units) {
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return units.min(minutes);
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return m ? units.hourMin(h, m) : units.hour(h);
}
