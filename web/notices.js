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

  function announce(text) {
    // Clearing first makes screen readers repeat an identical message.
    els.announcer.textContent = '';
    setTimeout(() => { els.announcer.textContent = text; }, 50);
  }

  els.noticeClose.addEventListener('click', hide);
  return { show, hide, announce, isOpen: () => !els.notice.hidden };
}
