// The room as drawn: phase, dial, controls, members, access notes and settings from the model's room, and
// the clock's frames (digits, ring, tab title and icon) in between.

import { t, language } from './i18n.js';
import {
  renderClock, renderDialStatus, renderPhase, renderControls, renderMembers, renderSettings, renderRoomStats,
  titleFor, setText, mayControl,
} from './render.js';
import { myMember, shownMembers } from './roommodel.js';

export function createRoomView({ els, page, clock, favicon, handoff, hosting, announce, wireTaskInput }) {
  let lastTitle = '';

  function render() {
    renderConnectionControls();
    const { room, me, settingsDirty } = page.model;
    if (page.view !== 'room' || !room) return;
    const phaseBefore = document.body.dataset.phase;
    renderPhase(els, room);
    if (!favicon.hasColors() || phaseBefore !== room.phase) favicon.refreshColors();
    renderDialStatus(els, room, clock);
    // A big room's list may leave me out: the server tells me myself, and my row comes first.
    const shown = shownMembers(page.model);
    renderMembers(els.members, shown, me, room.host, { wireTaskInput, makeHost: handoff.ask, removeMember: hosting.remove });
    renderMemberCounts(room, shown.length);
    renderEmptyRoom(room, me);
    renderAccess(room);
    const mine = myMember(page.model);
    const away = !!mine && mine.connected && !mine.present;
    els.away.setAttribute('aria-pressed', String(away));
    setText(els.awayLabel, t(away ? 'imBack' : 'stepAway'));
    renderSettings(els, room, settingsDirty);
    renderRoomStats(els.roomStats, room.stats);
    frame();
  }

  /** One frame of the clock: the digits, the ring and the title, from endsAt and the clock offset. */
  function frame() {
    const { room } = page.model;
    if (page.view !== 'room' || !room) return;
    const text = renderClock(els, room, clock);
    const title = titleFor(room, text);
    if (title !== lastTitle) {
      lastTitle = title;
      document.title = title;
    }
    favicon.update(room);
  }

  /** Out of the room: the page's own title and icon. */
  function clearTitle() {
    document.title = t('appName');
    lastTitle = '';
    favicon.update(null);
  }

  /**
   * The headline counts cover the whole room; a big room lists only its first members (PROTOCOL.md, "Big
   * rooms"), and says how many more there are under the list.
   */
  function renderMemberCounts(room, shown) {
    const total = room.memberCount ?? room.members.length;
    const present = room.presentCount ?? room.members.filter((m) => m.present).length;
    const count = (n) => n.toLocaleString(language());
    setText(els.membersCount, count(total));
    const title = t('presentOfMembers', { present: count(present), n: count(total) });
    if (els.membersCount.title !== title) els.membersCount.title = title;
    const more = total - shown;
    if (els.membersMore.hidden === more > 0) els.membersMore.hidden = !(more > 0);
    setText(els.membersMore, more > 0 ? t('moreMembers', { n: count(more), present: count(present) }) : '');
  }

  /** Alone in the room: one sentence says what the room is for and what to do. */
  function renderEmptyRoom(room, me) {
    const alone = !!me && (room.memberCount ?? room.members.length) === 1 && room.members[0]?.id === me;
    if (els.emptyRoom.hidden === alone) els.emptyRoom.hidden = !alone;
    setText(els.emptyRoom, alone ? t('emptyRoom') : '');
  }

  function renderConnectionControls() {
    const { room, me, configureRef, controlRef } = page.model;
    const joined = page.conn === 'joined';
    const allowed = mayControl(room, me);
    renderControls(els, room, joined, allowed);
    els.away.disabled = !joined;
    els.saveSettings.disabled = !joined || !allowed || configureRef !== null;
    if (els.settingsFields.disabled !== !allowed) els.settingsFields.disabled = !allowed;
    els.hostOnlyToggle.disabled = !joined || controlRef !== null;
  }

  /** The lock by the room's name, who hosts, and what that means for me. */
  function renderAccess(room) {
    const { me, controlRef } = page.model;
    els.roomLock.hidden = !room.locked;
    const iHost = !!me && room.host === me;
    const allowed = mayControl(room, me);
    els.hostNote.hidden = allowed;
    els.settingsHostNote.hidden = allowed;
    if (!allowed) {
      setText(els.hostNoteText, hostNoteText(room));
      setText(els.settingsHostNote, hostNoteText(room));
    }
    els.kbdHint.hidden = !allowed;
    els.hostTools.hidden = !iHost;
    els.removePasscode.hidden = !room.locked;
    if (controlRef === null) els.hostOnlyToggle.checked = room.control === 'host';
    // role="switch" on a check box: its state is said through aria-checked, kept in step with it.
    els.hostOnlyToggle.setAttribute('aria-checked', String(els.hostOnlyToggle.checked));
    // A confirmation that no longer fits the room goes away.
    if (!allowed && els.resetDialog.open) els.resetDialog.close();
    if (els.handoffDialog.open && (!iHost || !room.members.some((m) => m.id === handoff.target()))) {
      els.handoffDialog.close();
    }
  }

  /** Space or a click from someone who may not: the note says why, to the eye and to screen readers. */
  function explainHostOnly() {
    const { room } = page.model;
    if (!room || els.hostNote.hidden) return;
    announce(hostNoteText(room));
    delete els.hostNote.dataset.flash;
    void els.hostNote.offsetWidth; // restarts the animation
    els.hostNote.dataset.flash = 'true';
  }

  return { render, frame, clearTitle, renderConnectionControls, explainHostOnly };
}

function hostNoteText(room) {
  const host = room.members.find((m) => m.id === room.host);
  return host ? t('hostNote', { name: host.name }) : t('hostNoteNobody');
}
