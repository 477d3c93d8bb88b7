// What the page says to screen readers about the timer, as pure functions tested under node
// (Tests/browser/spoken_model.mjs): the room in one sentence ("Focus, 18 minutes left, ends 10:25, 4 people"),
// and when the time left is said by itself, at the whole minutes the person chose. The countdown itself is
// never put in a live region: it would be read every second.

/** The time left as words: minutes from a minute and a half on, then "1 minute", then seconds. */
export function leftWords(ms) {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  if (seconds >= 90) return { key: 'leftMinutes', values: { n: Math.round(seconds / 60) } };
  if (seconds >= 60) return { key: 'leftMinutes', values: { n: 1 } };
  return { key: 'leftSeconds', values: { n: seconds } };
}

/**
 * The room in one sentence, as words for wording.js: its phase and where the timer stands, the time left,
 * when it ends (`endsText`, the local time, while running) and how many people are here (`present`).
 */
export function summaryWords(room, { remaining, endsText = null, present = null } = {}) {
  let words;
  if (!room || room.phase === 'idle' || room.status === 'idle') {
    words = { key: 'summaryIdle', values: {} };
  } else {
    const phase = { key: `phase_${room.phase}` };
    const left = leftWords(remaining);
    if (room.status === 'running' && endsText) words = { key: 'summaryRunning', values: { phase, left, time: endsText } };
    else if (room.status === 'running') words = { key: 'summaryRunningNoEnd', values: { phase, left } };
    else if (room.status === 'paused') words = { key: 'summaryPaused', values: { phase, left } };
    else words = { key: 'summaryReady', values: { phase, left } };
  }
  if (present === null || present === undefined) return words;
  return { key: 'summaryPeople', values: { summary: words, people: { key: 'people', values: { n: present } } } };
}

/** How often the time left may be said by itself, in minutes; 0 never. */
export const SPEAK_CHOICES = Object.freeze([0, 1, 5, 10, 15]);

/** A stored choice, or never. */
export function speakEveryFrom(text) {
  const n = Number(text);
  return SPEAK_CHOICES.includes(n) ? n : 0;
}

/** The memory of speakStep: the phase looked at, and the whole minute it was in. */
export const NOT_SPOKEN = Object.freeze({ phase: null, minute: null });

/**
 * One look at the room with `remaining` ms left: `{ memory, minutes }`, where `minutes` is the whole minute
 * the time left just reached when it is one to say (a multiple of `every`), else null. Said only when a running
 * phase crosses it while this page watched: never on the first look, after a pause or a jump (time added).
 */
export function speakStep(memory, room, remaining, every) {
  const phase = room ? `${room.id}|${room.phase}|${room.cycle}` : null;
  const running = !!room && room.status === 'running' && room.phase !== 'idle';
  const minute = running ? Math.ceil(remaining / 60000) : null;
  const next = { phase, minute };
  if (!running || !every || memory.phase !== phase || memory.minute === null) return { memory: next, minutes: null };
  // Crossing from "within minute m+1" to "within minute m" means exactly m minutes were left.
  const reached = minute;
  const crossed = memory.minute === reached + 1 && reached >= 1 && reached % every === 0;
  return { memory: next, minutes: crossed ? reached : null };
}
