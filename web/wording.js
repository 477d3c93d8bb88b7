// The room model's words (`{ key, values }`, web/roommodel.js) and the server's error codes, in the page's
// language. A value that is itself `{ key }` is translated too: a phase's name, or "Someone".

import { t, hasKey, language } from './i18n.js';

export function say(text) {
  if (typeof text === 'string') return text;
  const values = {};
  for (const [name, value] of Object.entries(text.values ?? {})) {
    values[name] = value && typeof value === 'object' && 'key' in value ? say(value) : value;
  }
  return t(text.key, values);
}

/** How long a member the host removed waits before joining again, in whole minutes rounded up, from the
 *  `retryAfter` seconds of `error removed` or `banned` (docs/PROTOCOL.md §5); null when the error has none. */
export function banMinutes(error) {
  const seconds = error?.retryAfter;
  if ((error?.code !== 'removed' && error?.code !== 'banned') || !Number.isInteger(seconds) || seconds <= 0) return null;
  return Math.ceil(seconds / 60);
}

/** The meaning of an error's code; a code this page does not know reads as the server's trouble. */
export function errorText(error) {
  const code = error?.code;
  // room_limit on a schedule: the server keeps schedules for as many rooms as it may, not a full server.
  if (code === 'room_limit' && error?.field === 'schedules') return t('err_room_limit_schedules');
  const minutes = banMinutes(error);
  if (minutes !== null) return t(`err_${code}_in`, { n: minutes });
  return hasKey(`err_${code}`) ? t(`err_${code}`) : t('err_internal');
}

/** The meaning of an error's code, with the server's own words after it in English (but for a ban's length,
 *  which the page's own words say already). */
export function errorWithDetail(error) {
  const detail = language() === 'en' && error?.message && banMinutes(error) === null;
  return detail ? `${errorText(error)} (${error.message})` : errorText(error);
}
