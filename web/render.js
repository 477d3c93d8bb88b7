// Drawing the room: the dial, the controls, the members, the settings form. Everything other people wrote
// (names, tasks) goes in through textContent or value, never as HTML.

import { t } from './i18n.js';
import { setPosition } from './roommodel.js';
import {
  remainingMs, phaseLengthMs, displaySeconds, formatClock, formatDurationInput, formatDurationShort, formatTotal,
} from './clock.js';

const SVG = 'http://www.w3.org/2000/svg';
/** The longest a phase may be extended to: the server's limit (`welcome.limits`). */
let maxPhaseMs = 8 * 3600 * 1000;

/** Takes the server's limits that the renderers follow: the phase cap. */
export function setRenderLimits({ maxPhaseSeconds }) {
  maxPhaseMs = maxPhaseSeconds * 1000;
}
const RING_RADIUS = 100;
const RING_CENTER = 120;

export const phaseName = (phase) => t(`phase_${phase || 'idle'}`);

/** Sets text only when it changed, so per-frame rendering does not touch the DOM needlessly. */
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

function setDisabled(el, disabled) {
  if (el.disabled !== disabled) el.disabled = disabled;
}

/** The clock-face marks around the ring: 60, with every fifth one longer. */
export function buildRingTicks(group) {
  for (let i = 0; i < 60; i += 1) {
    const major = i % 5 === 0;
    const angle = (i / 60) * Math.PI * 2;
    const outer = 116;
    const inner = major ? 109 : 112;
    const line = document.createElementNS(SVG, 'line');
    line.setAttribute('x1', (RING_CENTER + Math.sin(angle) * inner).toFixed(2));
    line.setAttribute('y1', (RING_CENTER - Math.cos(angle) * inner).toFixed(2));
    line.setAttribute('x2', (RING_CENTER + Math.sin(angle) * outer).toFixed(2));
    line.setAttribute('y2', (RING_CENTER - Math.cos(angle) * outer).toFixed(2));
    line.setAttribute('class', major ? 'tick major' : 'tick');
    group.appendChild(line);
  }
}

/**
 * Draws the time and the ring for this instant. Returns the displayed MM:SS so the caller can use it
 * for the title. Called every animation frame; cheap when nothing changed.
 */
export function renderClock(els, room, clock) {
  const left = remainingMs(room, clock);
  const length = phaseLengthMs(room);
  const text = formatClock(displaySeconds(left));
  setText(els.time, text);
  els.time.dataset.seconds = String(displaySeconds(left));

  // The remaining sector: from the moving hand clockwise round to twelve o'clock.
  const fraction = length > 0 ? Math.min(1, Math.max(0, left / length)) : 0;
  const remaining = fraction * 100;
  const dash = `${remaining.toFixed(3)} 200`;
  if (els.ringProgress.getAttribute('stroke-dasharray') !== dash) {
    els.ringProgress.setAttribute('stroke-dasharray', dash);
    els.ringProgress.setAttribute('stroke-dashoffset', (-(100 - remaining)).toFixed(3));
    // A zero-length dash with round caps would still paint a dot.
    els.ringProgress.setAttribute('visibility', remaining < 0.05 ? 'hidden' : 'visible');
    const angle = (1 - fraction) * Math.PI * 2;
    els.ringKnob.setAttribute('cx', (RING_CENTER + Math.sin(angle) * RING_RADIUS).toFixed(2));
    els.ringKnob.setAttribute('cy', (RING_CENTER - Math.cos(angle) * RING_RADIUS).toFixed(2));
  }
  return text;
}

function localTimeOf(serverEpochMs, clock) {
  const local = new Date(serverEpochMs - clock.offset);
  return local.toLocaleTimeString(document.documentElement.lang || undefined, { hour: '2-digit', minute: '2-digit' });
}

export function renderDialStatus(els, room, clock) {
  let text = '';
  switch (room.status) {
    case 'running': text = typeof room.endsAt === 'number' ? t('statusEndsAt', { time: localTimeOf(room.endsAt, clock) }) : ''; break;
    case 'paused': text = t('statusPaused'); break;
    case 'ready': text = t('statusReady'); break;
    default: text = t('statusIdle');
  }
  setText(els.dialStatus, text);
}

export function renderPhase(els, room) {
  document.body.dataset.phase = room.phase;
  document.body.dataset.status = room.status;
  setText(els.phaseLabel, phaseName(room.phase));
  const { name, n, total, dots: states } = setPosition(room);
  let text;
  if (name === null) text = t('cycle', { n, total });
  else if (total === null) text = t('cycleScheduledOpen', { name, n });
  else text = t('cycleScheduled', { name, n, total });
  setText(els.cycleText, text);
  const dots = els.cycleDots;
  while (dots.children.length > states.length) dots.lastChild.remove();
  while (dots.children.length < states.length) dots.appendChild(document.createElement('span'));
  [...dots.children].forEach((dot, i) => {
    if (dot.dataset.state !== states[i]) dot.dataset.state = states[i];
  });
}

/** Whether this member may press the timer's controls: anyone may, unless the room is in host mode
 *  (PROTOCOL.md §4) and someone else hosts it. */
export function mayControl(room, meId) {
  return !room || room.control !== 'host' || (!!meId && room.host === meId);
}

/** Enables exactly the controls that make sense now (PROTOCOL.md §6), only while joined, and only for
 *  whoever may press them. */
export function renderControls(els, room, joined, allowed = true) {
  const status = room?.status ?? 'idle';
  const action = status === 'running' ? 'pause' : status === 'paused' ? 'resume' : 'start';
  const may = joined && allowed;
  els.toggle.dataset.action = action;
  setText(els.toggleLabel, t(action));
  setDisabled(els.toggle, !may || !room);
  setDisabled(els.skip, !may || status === 'idle');
  setDisabled(els.reset, !may || !room || (status === 'idle' && room.cycle === 1));
  for (const button of els.extendButtons) {
    const seconds = Number(button.dataset.extend);
    const tooLong = room && room.phaseLengthMs + seconds * 1000 > maxPhaseMs;
    // An aligned room keeps to the clock: the server refuses to extend it.
    setDisabled(button, !may || status === 'idle' || !!tooLong || !!room?.settings?.aligned);
  }
}

export function renderExtendLabels(els) {
  for (const button of els.extendButtons) {
    const n = Number(button.dataset.extend) / 60;
    button.textContent = t('extendLabel', { n });
    button.setAttribute('aria-label', t('extendAria', { n }));
  }
}

const ICON_STEPS = 48;

/** Which of ICON_STEPS pictures of the ring is due now: the tab icon is redrawn only when this changes. */
export function iconStep(room, clock) {
  const length = phaseLengthMs(room);
  const fraction = length > 0 ? Math.min(1, Math.max(0, remainingMs(room, clock) / length)) : 0;
  return Math.ceil(fraction * ICON_STEPS);
}

/**
 * The tab's icon as a small ring of the time left, with a dot while running and two bars while paused,
 * so the phase reads from the tab strip too.
 */
export function progressIcon(step, paused, accent, track) {
  const remaining = (step / ICON_STEPS) * 100;
  const centre = paused
    ? `<path d="M12.5 11v10M19.5 11v10" stroke="${accent}" stroke-width="3.2" stroke-linecap="round"/>`
    : `<circle cx="16" cy="16" r="5.5" fill="${accent}"/>`;
  const svg = `<svg xmlns="${SVG}" viewBox="0 0 32 32">`
    + `<circle cx="16" cy="16" r="12.5" fill="none" stroke="${track}" stroke-width="5"/>`
    + (step > 0 ? `<circle cx="16" cy="16" r="12.5" fill="none" stroke="${accent}" stroke-width="5" pathLength="100" `
      + `stroke-dasharray="${remaining.toFixed(2)} 200" stroke-dashoffset="${(-(100 - remaining)).toFixed(2)}" `
      + 'transform="rotate(-90 16 16)"/>' : '')
    + `${centre}</svg>`;
  return `data:image/svg+xml,${encodeURIComponent(svg)}`;
}

/** The title reads from another tab: "12:34 · Focus", with a pause sign while paused. */
export function titleFor(room, clockText) {
  if (!room) return t('appName');
  const phase = phaseName(room.phase);
  switch (room.status) {
    case 'running': return `${clockText} · ${phase}`;
    case 'paused': return `⏸ ${clockText} · ${phase}`;
    case 'ready': return `${clockText} · ${phase} · ${t('statusReady')}`;
    default: return `${room.id} · ${t('appName')}`;
  }
}

// MARK: members

function hueFor(id) {
  let hash = 0;
  for (const ch of id) hash = (hash * 31 + ch.codePointAt(0)) >>> 0;
  return hash % 360;
}

function initials(name) {
  const letters = [...name.trim()];
  return (letters[0] || '?').toUpperCase();
}

function crownIcon(className) {
  const crown = document.createElementNS(SVG, 'svg');
  crown.setAttribute('viewBox', '0 0 16 16');
  crown.setAttribute('aria-hidden', 'true');
  crown.setAttribute('class', className);
  const path = document.createElementNS(SVG, 'path');
  path.setAttribute('d', 'M2.5 5.5l3 2.5L8 3.5l2.5 4.5 3-2.5-1 6.5h-9z');
  crown.append(path);
  return crown;
}

function makeMemberRow(hooks) {
  const li = document.createElement('li');
  li.className = 'member';
  const avatar = document.createElement('span');
  avatar.className = 'avatar';
  avatar.setAttribute('aria-hidden', 'true');
  const main = document.createElement('div');
  main.className = 'member-main';
  const line = document.createElement('div');
  line.className = 'member-line';
  const name = document.createElement('span');
  name.className = 'member-name';
  const you = document.createElement('span');
  you.className = 'you-tag';
  const host = document.createElement('span');
  host.className = 'host-tag';
  const crown = crownIcon('host-icon');
  const hostText = document.createElement('span');
  hostText.className = 'host-text';
  host.append(crown, hostText);
  const presence = document.createElement('span');
  presence.className = 'presence';
  const dot = document.createElement('span');
  dot.className = 'presence-dot';
  dot.setAttribute('aria-hidden', 'true');
  const presenceText = document.createElement('span');
  presenceText.className = 'presence-text';
  presence.append(dot, presenceText);
  line.append(name, you, host, presence);
  const task = document.createElement('div');
  task.className = 'member-task';
  main.append(line, task);
  const done = document.createElement('span');
  done.className = 'done';
  const doneIcon = document.createElementNS(SVG, 'svg');
  doneIcon.setAttribute('viewBox', '0 0 16 16');
  doneIcon.setAttribute('aria-hidden', 'true');
  doneIcon.setAttribute('class', 'done-icon');
  const fruit = document.createElementNS(SVG, 'circle');
  fruit.setAttribute('cx', '8'); fruit.setAttribute('cy', '9'); fruit.setAttribute('r', '6');
  const leaf = document.createElementNS(SVG, 'path');
  leaf.setAttribute('d', 'M8 3.5c-.8-1.3-2-1.6-3-1.3 1 .2 1.7.7 2.1 1.6L5.8 4.7l1.6.1L8 6l.6-1.2 1.6-.1-1.3-.9c.4-.9 1.1-1.4 2.1-1.6-1-.3-2.2 0-3 1.3z');
  leaf.setAttribute('class', 'done-leaf');
  doneIcon.append(fruit, leaf);
  const doneCount = document.createElement('span');
  doneCount.className = 'done-count';
  done.append(doneIcon, doneCount);
  const makeHost = document.createElement('button');
  makeHost.type = 'button';
  makeHost.className = 'btn chip make-host';
  makeHost.hidden = true;
  const makeHostText = document.createElement('span');
  makeHostText.className = 'make-host-text';
  makeHost.append(crownIcon('make-host-icon'), makeHostText);
  makeHost.addEventListener('click', () => hooks.makeHost?.(li.dataset.memberId));
  const remove = document.createElement('button');
  remove.type = 'button';
  remove.className = 'btn chip remove-member';
  remove.hidden = true;
  remove.addEventListener('click', () => hooks.removeMember?.(li.dataset.memberId));
  li.append(avatar, main, makeHost, remove, done);
  return li;
}

/**
 * Renders the member list keyed by member id, reusing rows so that your own task field keeps its focus
 * and whatever you are typing while states arrive. The host wears a badge; when I am the host, everyone
 * else gets a "Make host" button.
 */
export function renderMembers(list, members, meId, hostId, hooks) {
  const iHost = !!meId && hostId === meId;
  const rows = new Map([...list.children].map((li) => [li.dataset.memberId, li]));
  const wanted = new Set(members.map((m) => m.id));
  for (const [id, li] of rows) if (!wanted.has(id)) li.remove();

  members.forEach((member, index) => {
    let li = rows.get(member.id);
    if (!li) {
      li = makeMemberRow(hooks);
      li.dataset.memberId = member.id;
      li.querySelector('.avatar').style.setProperty('--hue', String(hueFor(member.id)));
    }
    const isMe = member.id === meId;
    const state = !member.connected ? 'offline' : member.present ? 'present' : 'away';
    li.dataset.state = state;
    li.classList.toggle('is-me', isMe);
    setText(li.querySelector('.avatar'), initials(member.name));
    setText(li.querySelector('.member-name'), member.name);
    setText(li.querySelector('.you-tag'), isMe ? t('you') : '');
    const isHost = member.id === hostId;
    li.classList.toggle('is-host', isHost);
    setText(li.querySelector('.host-text'), isHost ? t('hostBadge') : '');
    const makeHost = li.querySelector('.make-host');
    const offer = iHost && !isMe;
    if (makeHost.hidden === offer) makeHost.hidden = !offer;
    if (offer) {
      setText(makeHost.querySelector('.make-host-text'), t('makeHost'));
      const label = t('makeHostAria', { name: member.name });
      if (makeHost.getAttribute('aria-label') !== label) {
        makeHost.setAttribute('aria-label', label);
        makeHost.setAttribute('title', label);
      }
    }
    const remove = li.querySelector('.remove-member');
    if (remove.hidden === offer) remove.hidden = !offer;
    if (offer) {
      setText(remove, t('removeMember'));
      const label = t('removeMemberAria', { name: member.name });
      if (remove.getAttribute('aria-label') !== label) remove.setAttribute('aria-label', label);
    }
    setText(li.querySelector('.presence-text'), t(state === 'offline' ? 'offline' : state));

    const taskBox = li.querySelector('.member-task');
    if (isMe) {
      let input = taskBox.querySelector('input');
      if (!input) {
        taskBox.textContent = '';
        input = document.createElement('input');
        input.type = 'text';
        input.className = 'task-input';
        input.autocomplete = 'off';
        input.id = 'my-task';
        // No maxlength (it would cut the text silently, in UTF-16 units): a task past the limit is said here.
        const note = document.createElement('p');
        note.className = 'form-error task-error';
        note.id = 'my-task-error';
        note.setAttribute('role', 'alert');
        note.hidden = true;
        input.setAttribute('aria-describedby', note.id);
        hooks.wireTaskInput(input, note);
        taskBox.append(input, note);
      }
      input.placeholder = t('taskPlaceholder');
      input.setAttribute('aria-label', t('taskLabel'));
      if (document.activeElement !== input && input.dataset.editing !== 'true' && input.value !== member.task) {
        input.value = member.task;
      }
      input.dataset.saved = member.task;
    } else {
      if (taskBox.querySelector('input')) taskBox.textContent = '';
      taskBox.classList.toggle('is-empty', !member.task);
      setText(taskBox, member.task || t('noTask'));
    }

    const count = member.stats?.focusCompleted ?? 0;
    const done = li.querySelector('.done');
    done.classList.toggle('is-zero', count === 0);
    setText(li.querySelector('.done-count'), String(count));
    const label = t('focusDone', { n: count });
    if (done.getAttribute('aria-label') !== label) {
      done.setAttribute('aria-label', label);
      done.setAttribute('title', label);
      done.setAttribute('role', 'img');
    }

    if (list.children[index] !== li) list.insertBefore(li, list.children[index] || null);
  });
}

// MARK: settings

const minutesText = (n) => t('durMin', { n });

export function settingsSummary(s) {
  const parts = t('summary', {
    focus: formatDurationShort(s.focus, minutesText),
    short: formatDurationShort(s.shortBreak, minutesText),
    long: formatDurationShort(s.longBreak, minutesText),
    every: s.longBreakEvery,
  });
  const auto = s.autoStart ? `${parts} · ${t('autoOn')}` : parts;
  return s.aligned ? `${auto} · ${t('alignedOn', { zone: s.aligned })}` : auto;
}

export function fillSettingsForm(els, s) {
  els.setFocus.value = formatDurationInput(s.focus);
  els.setShort.value = formatDurationInput(s.shortBreak);
  els.setLong.value = formatDurationInput(s.longBreak);
  els.setEvery.value = String(s.longBreakEvery);
  els.setAuto.checked = !!s.autoStart;
  els.setAligned.checked = !!s.aligned;
  // An aligned room keeps its zone when saved again; a new one takes this browser's.
  if (s.aligned) els.setAligned.dataset.zone = s.aligned;
  else delete els.setAligned.dataset.zone;
}

export function renderSettings(els, room, dirty) {
  setText(els.settingsSummary, settingsSummary(room.settings));
  const shown = room.pendingSettings || room.settings;
  if (!dirty) fillSettingsForm(els, shown);
  if (room.pendingSettings) {
    els.pendingNote.hidden = false;
    setText(els.pendingNote, t('pending', { summary: settingsSummary(room.pendingSettings) }));
  } else {
    els.pendingNote.hidden = true;
  }
}

export function renderRoomStats(el, stats) {
  const units = {
    min: minutesText,
    hour: (h) => t('durHour', { h }),
    hourMin: (h, m) => t('durHourMin', { h, m }),
  };
  setText(el, t('roomStats', { n: stats.focusCompleted, time: formatTotal(stats.focusSeconds, units) }));
}
