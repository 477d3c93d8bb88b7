// The page: landing and room views, wired to the connection, the clock and the room model. Each concern is a
// module of its own; this file makes them and carries out what the model (roommodel.js) says should happen.

import { t, setLanguage, initialLanguage } from './i18n.js';
import { load, save, tokenKey } from './storage.js';
import { ServerClock } from './clock.js';
import { RoomConnection } from './connection.js';
import { randomRoomName } from './roomname.js';
import { limitsFromText } from './limits.js';
import { buildRingTicks, renderExtendLabels, setText, setRenderLimits } from './render.js';
import { unlockAudio, playChime, playWarning, notify, warningWanted } from './sound.js';
import { initialState, reduce, joinStarted, left, connectionClosed } from './roommodel.js';
import { say, errorWithDetail, errorText } from './wording.js';
import { ROOM_PATTERN, roomFromLocation } from './address.js';
import { els, statsEls } from './dom.js';
import { createNotices } from './notices.js';
import { createActivity } from './activity.js';
import { createFavicon } from './favicon.js';
import { createHandoff } from './handoff.js';
import { createHosting } from './hosting.js';
import { createRoomView } from './roomview.js';
import { createRoomControls } from './roomcontrols.js';
import { createSettingsForm } from './settingsform.js';
import { createJoinForm } from './joinform.js';
import { createStatsView } from './statsview.js';
import { createScheduleView } from './scheduleview.js';
import { createAPITokenView } from './apitokens.js';
import { createWebhookView } from './webhookview.js';
import { createToolbar } from './toolbar.js';
import { createConnectionBanner } from './connectionbanner.js';
import { wireShortcuts } from './shortcuts.js';
import { createAlertSettings } from './alertsettings.js';
import { registerServiceWorker } from './install.js';
import { warningStep, NO_WARNING } from './alerts.js';
import { remainingMs } from './clock.js';
import { summaryWords, leftWords, speakStep, NOT_SPOKEN, speakEveryFrom } from './spoken.js';
import { wantsWallDisplay, wallDisplayPath, keepScreenAwake } from './walldisplay.js';

/** What the page is showing and how its connection stands; `model` is the room model's state. The server's
 *  limits start as the last ones a server sent (kept), until this one's welcome says otherwise. */
const page = {
  view: 'landing',
  conn: 'idle',
  connInfo: {},
  model: initialState(limitsFromText(load('limits'))),
};

const clock = new ServerClock();
const connection = new RoomConnection({ onMessage: handleMessage, onStatus: handleStatus });

function send(type, fields = {}) {
  if (page.model.observing) return null; // the wall display watches: it presses nothing
  unlockAudio();
  return connection.request({ type, ...fields });
}

const notices = createNotices(els);
const activity = createActivity(els);
const favicon = createFavicon(els.favicon, clock);
const handoff = createHandoff({ els, page, send });
const hosting = createHosting({ els, page, send });
const controls = createRoomControls({
  els, page, send,
  explainHostOnly: () => view.explainHostOnly(),
  renderConnectionControls: () => view.renderConnectionControls(),
});
const view = createRoomView({
  els, page, clock, favicon, handoff, hosting, announce: notices.announce, wireTaskInput: controls.wireTaskInput,
});
const settingsForm = createSettingsForm({ els, page, send, render: view.render });
const joinForm = createJoinForm({ els, page, enterRoom });
const statsView = createStatsView({ els, statsEls, page, connection, notices });
const scheduleView = createScheduleView({ page, connection, notices });
const apiTokenView = createAPITokenView({ page, send });
const webhookView = createWebhookView({ page, connection });
const banner = createConnectionBanner({ els, page });
const alertSettings = createAlertSettings({ els });
const toolbar = createToolbar({
  els, page, notices,
  languageChanged: () => {
    renderStaticLabels();
    alertSettings.render();
    banner.render();
    view.render();
    statsView.render();
    scheduleView.languageChanged();
    controls.checkTask();
    if (page.view === 'landing') joinForm.lookUpNextSession();
  },
});

// MARK: the room model's messages and effects

function handleMessage(message) {
  webhookView.receive(message);
  const { state, effects } = reduce(page.model, message, { now: Date.now() });
  page.model = state;
  for (const effect of effects) carryOut(effect);
  checkWarning();
}

// MARK: the "1 minute left" warning

let warning = NO_WARNING;

/** Looked at on every message and twice a second: the decision is alerts.js's, from the time left. */
function checkWarning() {
  const room = page.view === 'room' ? page.model.room : null;
  const step = warningStep(warning, room, remainingMs(room, clock));
  warning = step.memory;
  if (!step.warn) return;
  const phase = t(`phase_${room.phase}`);
  // Said to screen readers always; the sound and the notification only when asked for.
  notices.announce(t('warnBody', { phase }));
  if (!warningWanted()) return;
  playWarning();
  notify(t('warnTitle'), t('warnBody', { phase }), { tag: 'pomodoro-warning' });
}

// MARK: the time left, said to screen readers

let spoken = NOT_SPOKEN;

/** The room in one sentence as it stands now: "Focus, 18 minutes left, ends 10:25, 4 people here". */
function roomSummary({ people = true } = {}) {
  const room = page.model.room;
  if (!room) return '';
  const endsText = room.status === 'running' && typeof room.endsAt === 'number'
    ? new Date(room.endsAt - clock.offset).toLocaleTimeString(document.documentElement.lang || undefined, { hour: '2-digit', minute: '2-digit' })
    : null;
  const present = people ? (room.presentCount ?? room.members.filter((m) => m.present).length) : null;
  return say(summaryWords(room, { remaining: remainingMs(room, clock), endsText, present }));
}

/** `L`: the room's time left, said when asked. */
function sayTimeLeft() {
  if (page.model.room) notices.announce(roomSummary());
}

/** At the whole minutes the person chose (Sound and alerts), the time left is said by itself. */
function checkSpoken() {
  const room = page.view === 'room' ? page.model.room : null;
  const step = speakStep(spoken, room, remainingMs(room, clock), speakEveryFrom(load('speakEvery')));
  spoken = step.memory;
  if (step.minutes === null) return;
  notices.announce(t('announceLeft', { phase: t(`phase_${room.phase}`), left: say(leftWords(step.minutes * 60000)) }));
}

function carryOut(effect) {
  switch (effect.type) {
    case 'serverTime': clock.observe(effect.serverTime); break;
    case 'limits':
      save('limits', JSON.stringify(effect.limits));
      applyLimits();
      break;
    case 'render': view.render(); scheduleView.render(); apiTokenView.render(); webhookView.render(); break;
    case 'schedules': scheduleView.render(); break;
    case 'scheduleSaved': scheduleView.saved(); break;
    case 'scheduleError': scheduleView.refused(effect.error); break;
    case 'scheduleUnanswered': scheduleView.unanswered(); break;
    case 'taskRefused': {
      // The field shows the task the server holds (the one everyone else sees); the notice says why.
      const input = document.getElementById('my-task');
      if (input && input.dataset.editing !== 'true') input.value = input.dataset.saved ?? '';
      break;
    }
    case 'apiTokens': apiTokenView.render(); break;
    case 'frame': view.frame(); break;
    case 'welcomed': joinForm.ready(); break;
    case 'notice':
      notices.show(effect.title ? say(effect.title) : '', effect.error ? errorWithDetail(effect.error) : say(effect.text));
      break;
    case 'feed': activity.add(say(effect.text), { phase: effect.phase, at: effect.at }); break;
    case 'announce':
      if (effect.summary) notices.announce(() => t('announceControl', { event: say(effect.text), summary: roomSummary({ people: false }) }));
      else notices.announce(say(effect.text));
      break;
    case 'chime': playChime(effect.phase); break;
    case 'notify': notify(say(effect.title), say(effect.body)); break;
    case 'refreshStats': statsView.refresh(); break;
    case 'statsPanel': statsView.render(); break;
    case 'dropTimeZone': connection.tz = null; break;
    case 'controls': view.renderConnectionControls(); break;
    case 'settingsNoteCleared': settingsForm.clearNote(); break;
    case 'settingsSaved': settingsForm.saved(effect.appliesFrom); break;
    case 'settingsError': settingsForm.refused(effect.error); break;
    case 'settingsUnanswered': settingsForm.unanswered(); break;
    default: break;
  }
}

/** The server's limits onto the fields that follow them (the name and the task are checked as typed, not cut
 *  by a maxlength, which would count UTF-16 units and cut an emoji in half). */
function applyLimits() {
  const { limits } = page.model;
  els.setEvery.max = String(limits.maxLongBreakEvery);
  setRenderLimits(limits);
  controls.checkTask();
}

// MARK: views and the connection

function showView(name) {
  page.view = name;
  document.body.dataset.view = name;
  els.landing.hidden = name !== 'landing';
  els.room.hidden = name !== 'room';
  els.roomBar.hidden = name !== 'room';
  if (name === 'landing') {
    view.clearTitle();
    joinForm.lookUpNextSession();
  }
}

/** The room's name in the bar, whole in its tooltip where the bar has to cut it short. */
function showRoomName(room) {
  setText(els.roomTitle, room);
  els.roomTitle.title = room;
}

/** Goes into the room. `access` ({ passcode, control }) is kept in memory by the connection only. */
function enterRoom(room, name, access = {}) {
  page.model = joinStarted(page.model, room, access);
  statsView.reset();
  statsView.render();
  settingsForm.clearNote(); // a "Saving…" from a room left while it waited is not this room's
  activity.clear();
  els.members.textContent = '';
  save('name', name);
  save('lastRoom', room);
  showRoomName(room);
  els.wallDisplay.href = wallDisplayPath(room);
  if (window.location.pathname !== `/r/${room}`) history.replaceState(null, '', `/r/${encodeURIComponent(room)}`);
  showView('room');
  connection.join(room, name, access);
  view.render();
}

/** The wall display: the room observed (nobody in it sees this page), large, with no controls. */
function enterWallDisplay(room) {
  document.body.dataset.tv = 'on';
  page.model = joinStarted(page.model, room, {});
  showRoomName(room);
  showView('room');
  connection.observe(room);
  keepScreenAwake();
  view.render();
}

function leaveRoom() {
  connection.leave();
  statsView.setOpen(false);
  const room = page.model.roomName;
  page.model = left(page.model);
  history.replaceState(null, '', '/');
  els.roomInput.value = room || '';
  els.passcodeInput.value = '';
  showView('landing');
  els.nameInput.focus();
}

function handleStatus(status, info) {
  page.conn = status;
  page.connInfo = info;
  // Lost, or a new connection under way, in the room: what the old socket carried is answered on none. (Leaving
  // the room, or being refused, goes to the landing, and the next room starts with nothing awaited.)
  if (['connecting', 'reconnecting', 'replaced'].includes(status)) {
    const closed = connectionClosed(page.model);
    page.model = closed.state;
    for (const effect of closed.effects) carryOut(effect);
  }
  if (status === 'refused') {
    delete document.body.dataset.tv;
    showView('landing');
    history.replaceState(null, '', '/');
    joinForm.refused(info);
    // Removed by the host: said politely too, since the page changed under the person.
    if (info.error?.code === 'removed') notices.announce(errorText(info.error));
  }
  banner.render();
  view.render();
  webhookView.render();
  // Joined (again): the open panel catches up, since sessions may have ended while we were away.
  if (status === 'joined') {
    // The Join button that had the focus went with the landing: the focus goes to the timer's button (the
    // next thing to do), not back to the top of the page. A focus elsewhere is left where it is.
    const lost = !document.activeElement || document.activeElement === document.body;
    if (lost && !page.model.observing && !els.toggle.disabled) els.toggle.focus();
    statsView.refresh();
    scheduleView.refresh();
  }
}

function renderStaticLabels() {
  renderExtendLabels(els);
  setText(els.inviteLabel, t('copyInvite'));
}

// MARK: start

function wire() {
  buildRingTicks(els.ringTicks);
  applyLimits();
  toolbar.wire();
  joinForm.wire(unlockAudio);
  statsView.wire();
  scheduleView.wire();
  webhookView.wire();
  controls.wire();
  settingsForm.wire();
  alertSettings.wire();
  wireShortcuts({
    els, page, notices, send, toggleTimer: controls.toggleTimer,
    explainHostOnly: () => view.explainHostOnly(), toggleSound: toolbar.toggleSound, sayTimeLeft,
  });

  els.leave.addEventListener('click', leaveRoom);
  els.retry.addEventListener('click', () => connection.retryNow());
  els.useHere.addEventListener('click', () => connection.rejoin(load('name', '')));
  window.addEventListener('hashchange', () => {
    if (page.view === 'landing') {
      const room = roomFromLocation();
      if (room) els.roomInput.value = room;
    }
  });

  setInterval(() => {
    view.frame(); // keeps the title right while the tab is hidden and animation frames pause
    banner.countdown();
    checkWarning();
    checkSpoken();
  }, 500);
  const animationLoop = () => {
    view.frame();
    requestAnimationFrame(animationLoop);
  };
  requestAnimationFrame(animationLoop);
}

function start() {
  registerServiceWorker();
  setLanguage(initialLanguage());
  wire();
  renderStaticLabels();

  const room = roomFromLocation();
  const name = load('name', '');
  // The address's room, else the room this browser was last in, else a fresh name for a new room.
  const lastRoom = load('lastRoom', '');
  els.roomInput.value = room || (ROOM_PATTERN.test(lastRoom) ? lastRoom : randomRoomName());
  els.nameInput.value = name;
  showView('landing');
  banner.render();

  if (room && wantsWallDisplay()) {
    enterWallDisplay(room);
    return;
  }
  // A reload (or a return) to a room this browser is a member of goes straight back in.
  if (room && name && load(tokenKey(room))) {
    enterRoom(room, name);
    return;
  }
  (room && !name ? els.nameInput : room ? els.joinButton : els.nameInput).focus();
}

start();
