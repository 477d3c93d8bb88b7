// The tab's icon: the plain tomato outside a room or while idle, else the phase's progress in its colours. The
// browser's theme colour (the installed app's title bar, a phone's status bar) follows the phase's accent too.

import { iconStep, progressIcon } from './render.js';

const PLAIN_ICON = '/favicon.svg';

export function createFavicon(link, clock) {
  let key = '';
  let colors = null;

  /** The phase's colours, read from the stylesheet once per phase or colour scheme. */
  function refreshColors() {
    const style = getComputedStyle(document.body);
    colors = {
      accent: style.getPropertyValue('--accent').trim() || '#d8433b',
      track: style.getPropertyValue('--soft').trim() || '#fbe0dc',
    };
    key = '';
    document.querySelector('meta[name="theme-color"]')?.setAttribute('content', colors.accent);
  }

  function update(room) {
    let next = 'plain';
    if (room && room.status !== 'idle') {
      next = `${room.phase}|${room.status}|${iconStep(room, clock)}|${colors?.accent}`;
    }
    if (next === key) return;
    key = next;
    const href = next === 'plain' ? PLAIN_ICON
      : progressIcon(iconStep(room, clock), room.status === 'paused', colors.accent, colors.track);
    link.setAttribute('href', href);
  }

  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', refreshColors);
  return { update, refreshColors, hasColors: () => colors !== null };
}
