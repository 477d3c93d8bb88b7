// The forms' checks against the server's limits (limits.js), made before anything is sent, so that the page
// says what is wrong next to the field instead of waiting for the server's refusal. Pure: tested under node
// (Tests/browser/form_checks.mjs); joinform.js, settingsform.js and the task field (roomcontrols.js) show what
// they find.

import { parseDuration } from './clock.js';
import { minSettingSeconds } from './limits.js';
import { ROOM_PATTERN } from './address.js';

/** User-perceived characters, as the server counts a passcode. */
export function characterCount(text) {
  if (typeof Intl !== 'undefined' && typeof Intl.Segmenter === 'function') {
    let n = 0;
    for (const _ of new Intl.Segmenter().segment(text)) n += 1; // eslint-disable-line no-unused-vars
    return n;
  }
  return [...text].length;
}

/** The longest room id (docs/PROTOCOL.md §9), in characters (all of them ASCII). */
export const MAX_ROOM_LENGTH = 64;

/** A name or a task (`field`), trimmed, past the server's limit for it: more user-perceived characters than
 *  the limit, or more than four bytes of UTF-8 for each of them (docs/PROTOCOL.md §9). Returns what the field
 *  says instead of cutting the text, { max, n } (n: its characters), or null when it fits. */
export function overLimit(field, text, limits) {
  const max = field === 'task' ? limits.maxTaskLength : limits.maxNameLength;
  const n = characterCount(text);
  return n > max || new TextEncoder().encode(text).length > 4 * max ? { max, n } : null;
}

/** The field a join is wrong about ('room', 'name' or 'passcode'), or null. `room` and `name` come trimmed;
 *  a passcode is taken as typed (spaces count), and none at all is fine. */
export function joinProblem({ room, name, passcode = '' }, limits) {
  if (!ROOM_PATTERN.test(room)) return 'room';
  if (!name || overLimit('name', name, limits)) return 'name';
  const length = characterCount(passcode);
  if (passcode && (length < limits.minPasscodeLength || length > limits.maxPasscodeLength)) return 'passcode';
  return null;
}

/** The phase lengths in the order the form checks them. */
export const LENGTH_FIELDS = Object.freeze(['focus', 'shortBreak', 'longBreak']);

/**
 * The settings form's texts ({ focus, shortBreak, longBreak, longBreakEvery, autoStart }) as the settings to
 * send, or the first field out of bounds: { problem: { field, least, most } } for a length (in seconds),
 * { problem: { field: 'longBreakEvery' } } for the count. `aligned`, a time zone, runs the room on that zone's
 * clock; { problem: { field: 'aligned' } } when focus plus short break does not fit the hour.
 */
export function settingsFrom(form, limits) {
  const settings = {};
  for (const field of LENGTH_FIELDS) {
    const value = parseDuration(form[field]);
    const least = minSettingSeconds(limits, field === 'focus' ? 'focus' : 'break');
    if (value === null || value < least || value > limits.maxSettingSeconds) {
      return { problem: { field, least, most: limits.maxSettingSeconds } };
    }
    settings[field] = value;
  }
  const every = Number(form.longBreakEvery);
  if (!Number.isInteger(every) || every < 1 || every > limits.maxLongBreakEvery) {
    return { problem: { field: 'longBreakEvery' } };
  }
  const result = { ...settings, longBreakEvery: every, autoStart: !!form.autoStart };
  if (form.aligned) {
    // On the clock: one focus and one short break must fill the hour exactly, or whole hours the day.
    const cycle = settings.focus + settings.shortBreak;
    if (!(3600 % cycle === 0 || (cycle % 3600 === 0 && 86400 % cycle === 0))) return { problem: { field: 'aligned' } };
    result.aligned = form.aligned;
  }
  return { settings: result };
}
