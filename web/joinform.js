// The landing page's join form: the room, the name and a new room's passcode and host-only choice, checked
// against the server's limits before joining, and the server's refusal said next to the field it is about.

import { t, language } from './i18n.js';
import { setText } from './render.js';
import { randomRoomName } from './roomname.js';
import { joinProblem, overLimit, MAX_ROOM_LENGTH } from './formchecks.js';
import { errorText } from './wording.js';
import { upcoming } from './schedules.js';
import { summaryWords } from './spoken.js';
import { say } from './wording.js';
import { ROOM_PATTERN } from './address.js';

/** How long typing in the room field rests before the room's next session is looked up. */
const LOOKUP_DELAY_MS = 400;

export function createJoinForm({ els, page, enterRoom }) {
  const limits = () => page.model.limits;

  /** Too long a room or name, said with the limit and the count (nothing is cut off as it is typed). */
  function tooLongText(field) {
    if (field === 'room') {
      const n = els.roomInput.value.trim().length;
      return n > MAX_ROOM_LENGTH ? t('roomTooLong', { max: MAX_ROOM_LENGTH, n }) : null;
    }
    if (field === 'name') {
      const over = overLimit('name', els.nameInput.value.trim(), limits());
      return over ? t('nameTooLong', over) : null;
    }
    return null;
  }

  function showError(error, { sentPasscode = false } = {}) {
    let text;
    if (!error?.code && tooLongText(error?.field)) text = tooLongText(error.field);
    else if (error?.code === 'bad_passcode') text = t(sentPasscode ? 'passcodeWrong' : 'passcodeNeeded');
    else if (error?.code === 'rate_limited' && error.field === 'passcode') text = t('passcodeRateLimited');
    else if (error?.code && error.code !== 'bad_request') text = errorText(error); // room_full, removed, banned, …
    else if (error?.field === 'passcode') {
      text = t('passcodeInvalid', { min: limits().minPasscodeLength, max: limits().maxPasscodeLength });
    }
    else if (error?.field === 'room') text = t('roomInvalid');
    else if (error?.field === 'name') text = t('nameInvalid', { max: limits().maxNameLength });
    else text = errorText(error);
    // The server's words add what the code alone cannot say: the bad value.
    if (language() === 'en' && error?.message && error?.code === 'bad_request' && error.field !== 'passcode') {
      text = `${text} (${error.message})`;
    }
    // About the passcode: said right under its field (opened if folded), where the focus goes.
    const el = error?.field === 'passcode' ? els.passcodeError : els.joinError;
    if (el === els.passcodeError) els.accessDetails.open = true;
    el.hidden = false;
    setText(el, text);
  }

  function hideErrors() {
    els.joinError.hidden = true;
    els.passcodeError.hidden = true;
  }

  /** The join is over (welcomed or refused): the button can be pressed again. */
  function ready() {
    els.joinButton.disabled = false;
    setText(els.joinButton, t('join'));
  }

  /** The server refused the join itself: say why, and a passcode's trouble goes straight to its field. */
  function refused(info) {
    showError(info.error, { sentPasscode: info.sentPasscode });
    ready();
    if (info.error?.field === 'passcode') {
      // Locked, or the wrong passcode: its text selected for typing over.
      els.passcodeInput.setAttribute('aria-invalid', 'true');
      els.passcodeInput.focus();
      els.passcodeInput.select();
    }
  }

  let lookupTimer = null;
  let lookedUp = null;

  /** The room typed on the landing card: its next scheduled session under the field, from the schedules
   *  API (nothing for a room without one, a locked room, or a server without a database). */
  function lookUpNextSession() {
    clearTimeout(lookupTimer);
    const room = els.roomInput.value.trim();
    if (!ROOM_PATTERN.test(room)) {
      lookedUp = null;
      els.landingNext.hidden = true;
      els.landingNow.hidden = true;
      return;
    }
    lookupTimer = setTimeout(async () => {
      lookedUp = room;
      let soonest = null;
      try {
        const response = await fetch(`/api/rooms/${encodeURIComponent(room)}/schedules`, { cache: 'no-store' });
        if (response.ok) {
          const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
          soonest = upcoming((await response.json()).schedules, { timeZone, locale: language() })[0] ?? null;
        }
      } catch {
        soonest = null; // offline: nothing to say
      }
      const now = await roomNow(room);
      if (lookedUp !== room || els.roomInput.value.trim() !== room) return; // typed on meanwhile
      els.landingNow.hidden = !now;
      setText(els.landingNow, now ?? '');
      els.landingNext.hidden = !soonest;
      setText(els.landingNext, soonest ? t('schedNext', { name: soonest.name, when: soonest.local }) : '');
    }, LOOKUP_DELAY_MS);
  }

  /** A locked room: how to get in, unless a passcode is typed in already. */
  function lockedText() {
    return t(els.passcodeInput.value ? 'previewLockedFilled' : 'previewLocked');
  }

  /** What is happening in the room, read without joining (GET /api/rooms/{room}): "Focus, 18 minutes left,
   *  ends 10:25, 4 people here", that nobody is in it yet, or that it asks for a passcode. */
  async function roomNow(room) {
    try {
      const response = await fetch(`/api/rooms/${encodeURIComponent(room)}`, { cache: 'no-store' });
      if (response.status === 404) return t('previewNew');
      if (response.status === 401 || response.status === 403) return lockedText();
      if (!response.ok) return null;
      const body = await response.json();
      const snapshot = body.room && typeof body.room === 'object' ? body.room : body;
      if (snapshot.locked) return lockedText();
      const endsText = typeof snapshot.endsAt === 'number'
        ? new Date(snapshot.endsAt).toLocaleTimeString(language(), { hour: '2-digit', minute: '2-digit' }) : null;
      const present = snapshot.presentCount ?? (snapshot.members ?? []).filter((m) => m.present).length;
      if (!present && snapshot.status === 'idle') return t('previewNew');
      return t('previewRoom', { summary: say(summaryWords(snapshot, { remaining: snapshot.remainingMs ?? 0, endsText, present })) });
    } catch {
      return null; // offline: nothing to say
    }
  }

  /** While typing: a room or name past its limit is said at once, under the form. */
  function checkLength(field) {
    const input = field === 'room' ? els.roomInput : els.nameInput;
    const text = tooLongText(field);
    if (text) {
      input.setAttribute('aria-invalid', 'true');
      showError({ field });
    } else if (input.getAttribute('aria-invalid') === 'true') {
      input.removeAttribute('aria-invalid');
      els.joinError.hidden = true;
    }
  }

  function wire(unlockAudio) {
    els.roomInput.addEventListener('input', lookUpNextSession);
    els.roomInput.addEventListener('input', () => checkLength('room'));
    els.nameInput.addEventListener('input', () => checkLength('name'));
    els.joinForm.addEventListener('submit', (event) => {
      event.preventDefault();
      unlockAudio();
      const room = els.roomInput.value.trim();
      const name = els.nameInput.value.trim();
      hideErrors();
      els.roomInput.removeAttribute('aria-invalid');
      els.nameInput.removeAttribute('aria-invalid');
      els.passcodeInput.removeAttribute('aria-invalid');
      // Passcodes are taken as typed: spaces count.
      const passcode = els.passcodeInput.value;
      const problem = joinProblem({ room, name, passcode }, limits());
      if (problem) {
        const input = { room: els.roomInput, name: els.nameInput, passcode: els.passcodeInput }[problem];
        input.setAttribute('aria-invalid', 'true');
        showError({ field: problem });
        input.focus();
        return;
      }
      els.joinButton.disabled = true;
      setText(els.joinButton, t('joining'));
      enterRoom(room, name, { passcode: passcode || null, control: els.hostOnlyInput.checked ? 'host' : null });
    });
    els.passcodeInput.addEventListener('input', () => els.passcodeInput.removeAttribute('aria-invalid'));
    els.showPasscode.addEventListener('click', () => {
      const show = els.passcodeInput.type === 'password';
      els.passcodeInput.type = show ? 'text' : 'password';
      els.showPasscode.setAttribute('aria-pressed', String(show));
    });
    els.randomRoom.addEventListener('click', () => {
      els.roomInput.value = randomRoomName();
      els.roomInput.focus();
      lookUpNextSession();
    });
  }

  return { wire, ready, refused, lookUpNextSession };
}
