// The small notice (a refused request, a hint) that closes by itself, and the screen reader's announcements.

import { setText } from './render.js';

const NOTICE_MS = 10000;

export function createNotices(els) {
  let timer = null;

  function show(title, text) {
    setText(els.noticeTitle, title);
    setText(els.noticeText, text);
    els.notice.hidden = false;
    clearTimeout(timer);
    timer = setTimeout(hide, NOTICE_MS);
  }

  function hide() {
    clearTimeout(timer);
    els.notice.hidden = true;
  }

  /** Says `text` (or what the function gives when the moment comes: the room once its state is drawn)
   *  through the polite live region. Clearing first makes screen readers repeat an identical message. */
  function announce(text) {
    els.announcer.textContent = '';
    setTimeout(() => { els.announcer.textContent = typeof text === 'function' ? text() : text; }, 50);
  }

  els.noticeClose.addEventListener('click', hide);
  return { show, hide, announce, isOpen: () => !els.notice.hidden };
}
