// The page: landing and room views, wired to the connection, the clock and the renderers.

import { t, setLanguage, initialLanguage, language, hasKey } from './i18n.js';
import { load, save, tokenKey } from './storage.js';
import { ServerClock, parseDuration } from './clock.js';
import { RoomConnection } from './connection.js';
import { randomRoomName } from './roomname.js';
import { limitsFromText, limitsFrom, minSettingSeconds } from './limits.js';
import {
  buildRingTicks, renderClock, renderDialStatus, renderPhase, renderControls, renderExtendLabels, renderMembers,
  renderSettings, renderRoomStats, titleFor, iconStep, progressIcon, phaseName, setText, mayControl, setRenderLimits,
} from './render.js';
import {
  STATS_DAYS, JOURNAL_LIMIT, statsRequest, historyPath, csvFileName, journalEntries, chartSeries, OTHERS,
} from './stats.js';
import { renderStats, renderJournal } from './statspanel.js';
import {
  unlockAudio, playChime, soundEnabled, setSoundEnabled, notificationsSupported, notificationsWanted,
  setNotificationsWanted, requestNotifications, notify,
} from './sound.js';

const ROOM_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const ACTIVITY_LIMIT = 8;
const NOTICE_MS = 10000;
const SETTINGS_NOTE_MS = 8000;

const $ = (id) => document.getElementById(id);
const els = {
  roomBar: $('room-bar'), roomTitle: $('room-title'), invite: $('btn-invite'), inviteLabel: $('invite-label'),
  connPill: $('conn-pill'), connText: $('conn-text'), sound: $('btn-sound'), notify: $('btn-notify'),
  lang: $('lang-select'),
  banner: $('conn-banner'), bannerText: $('conn-banner-text'), retry: $('btn-retry'), useHere: $('btn-use-here'),
  landing: $('landing'), joinForm: $('join-form'), roomInput: $('room-input'), nameInput: $('name-input'),
  randomRoom: $('btn-random-room'), joinError: $('join-error'), joinButton: $('btn-join'),
  accessDetails: $('access-details'), passcodeInput: $('passcode-input'), passcodeError: $('passcode-error'),
  showPasscode: $('btn-show-passcode'), hostOnlyInput: $('host-only-input'),
  roomLock: $('room-lock'), hostNote: $('host-note'), hostNoteText: $('host-note-text'), kbdHint: $('kbd-hint'),
  hostTools: $('host-tools'), hostOnlyToggle: $('host-only-toggle'), settingsFields: $('settings-fields'),
  settingsHostNote: $('settings-host-note'),
  handoffDialog: $('handoff-dialog'), handoffTitle: $('handoff-title'), handoffBody: $('handoff-body'),
  handoffCancel: $('btn-handoff-cancel'), handoffConfirm: $('btn-handoff-confirm'),
  room: $('room'), phaseLabel: $('phase-label'), cycleText: $('cycle-text'), cycleDots: $('cycle-dots'),
  ringTicks: $('ring-ticks'), ringProgress: $('ring-progress'), ringKnob: $('ring-knob'),
  time: $('time'), dialStatus: $('dial-status'),
  toggle: $('btn-toggle'), toggleLabel: $('toggle-label'), skip: $('btn-skip'), reset: $('btn-reset'),
  extendButtons: [...document.querySelectorAll('[data-extend]')],
  members: $('members'), membersCount: $('members-count'), membersMore: $('members-more'), away: $('btn-away'), awayLabel: $('away-label'),
  roomStats: $('room-stats'),
  settingsForm: $('settings-form'), settingsSummary: $('settings-summary'), setFocus: $('set-focus'),
  setShort: $('set-short'), setLong: $('set-long'), setEvery: $('set-every'), setAuto: $('set-auto'),
  settingsError: $('settings-error'), settingsNote: $('settings-note'), pendingNote: $('pending-note'),
  saveSettings: $('btn-save-settings'),
  activity: $('activity'), activityEmpty: $('activity-empty'), leave: $('btn-leave'),
  notice: $('notice'), noticeTitle: $('notice-title'), noticeText: $('notice-text'), noticeClose: $('btn-notice-close'),
  announcer: $('announcer'), favicon: $('favicon'),
  resetDialog: $('reset-dialog'), resetCancel: $('btn-reset-cancel'), resetConfirm: $('btn-reset-confirm'),
  statsToggle: $('btn-stats'), statsPanel: $('stats-panel'), statsStatus: $('stats-status'),
  statsStatusRow: $('stats-status-row'),
  statsRetry: $('btn-stats-retry'), statsCsv: $('btn-stats-csv'), statsCsvLabel: $('stats-csv-label'),
  statsJournal: $('stats-journal'), statsJournalStatus: $('stats-journal-status'),
};

/** What renderStats draws into. */
const statsEls = {
  empty: $('stats-empty'), content: $('stats-content'),
  sessions: $('stat-sessions'), focus: $('stat-focus'), interruptions: $('stat-interruptions'),
  streak: $('stat-streak'), longest: $('stat-longest'),
  chart: $('stats-chart'), chartTitle: $('stats-chart-title'), chartEmpty: $('stats-chart-empty'),
  legend: $('stats-legend'), chartTable: $('stats-chart-table'), membersBody: $('stats-members-body'),
};

const state = {
  view: 'landing',
  roomName: null,
  room: null,
  seq: -1,
  me: null,
  conn: 'idle',
  connInfo: {},
  names: new Map(),
  settingsDirty: false,
  configureRef: null,
  controlRef: null,
  /** What this join asked of a new room ({ passcode, control }), until its welcome says whether it applied. */
  asked: null,
  handoffTarget: null,
  lastTitle: '',
  stats: newStatsState(false),
};

/** The stats panel: open or not, the request in flight, the last reply, the journal. */
function newStatsState(open) {
  return {
    open, ref: null, loading: false, data: null, error: null,
    journal: null, journalError: null, journalSeq: 0, csvBusy: false,
  };
}

const clock = new ServerClock();
/** The server's limits: the last ones a server sent (kept), until this one's welcome says otherwise. */
let limits = limitsFromText(load('limits'));
const connection = new RoomConnection({ onMessage: handleMessage, onStatus: handleStatus });

// MARK: views

function showView(view) {
  state.view = view;
  document.body.dataset.view = view;
  els.landing.hidden = view !== 'landing';
  els.room.hidden = view !== 'room';
  els.roomBar.hidden = view !== 'room';
  if (view === 'landing') {
    document.title = t('appName');
    state.lastTitle = '';
    updateFavicon(null);
  }
}

/** The room named by the address: /r/team-alpha or /#team-alpha. */
function roomFromLocation() {
  const path = window.location.pathname.match(/^\/r\/([^/]+)\/?$/);
  const raw = path ? path[1] : window.location.hash.replace(/^#\/?/, '');
  let name = '';
  try { name = decodeURIComponent(raw); } catch { name = raw; }
  return ROOM_PATTERN.test(name) ? name : '';
}

function inviteURL() {
  return `${window.location.origin}/r/${encodeURIComponent(state.roomName)}`;
}

/** Goes into the room. `access` ({ passcode, control }) is kept in memory by the connection only. */
function enterRoom(room, name, access = {}) {
  state.roomName = room;
  state.asked = access.passcode || access.control ? { ...access } : null;
  state.controlRef = null;
  state.room = null;
  state.seq = -1;
  state.me = null;
  state.settingsDirty = false;
  state.names.clear();
  state.stats = newStatsState(state.stats.open);
  renderStatsPanel();
  els.activity.textContent = '';
  els.activityEmpty.hidden = false;
  els.members.textContent = '';
  save('name', name);
  save('lastRoom', room);
  setText(els.roomTitle, room);
  if (window.location.pathname !== `/r/${room}`) history.replaceState(null, '', `/r/${encodeURIComponent(room)}`);
  showView('room');
  connection.join(room, name, access);
  render();
}

function leaveRoom() {
  connection.leave();
  setStatsOpen(false);
  const room = state.roomName;
  state.room = null;
  state.roomName = null;
  history.replaceState(null, '', '/');
  els.roomInput.value = room || '';
  els.passcodeInput.value = '';
  showView('landing');
  els.nameInput.focus();
}

// MARK: connection

function handleStatus(status, info) {
  state.conn = status;
  state.connInfo = info;
  if (status === 'refused') {
    showView('landing');
    history.replaceState(null, '', '/');
    showJoinError(info.error, { sentPasscode: info.sentPasscode });
    els.joinButton.disabled = false;
    setText(els.joinButton, t('join'));
    if (info.error?.field === 'passcode') {
      // Locked, or the wrong passcode: straight to the field, its text selected for typing over.
      els.passcodeInput.setAttribute('aria-invalid', 'true');
      els.passcodeInput.focus();
      els.passcodeInput.select();
    }
  }
  renderConnection();
  render();
  // Joined (again): the open panel catches up, since sessions may have ended while we were away.
  if (status === 'joined') refreshStats();
}

function showJoinError(error, { sentPasscode = false } = {}) {
  let text;
  if (error?.code === 'bad_passcode') text = t(sentPasscode ? 'passcodeWrong' : 'passcodeNeeded');
  else if (error?.code === 'rate_limited' && error.field === 'passcode') text = t('passcodeRateLimited');
  else if (error?.code && error.code !== 'bad_request') text = errorText(error); // room_full, room_limit, …
  else if (error?.field === 'passcode') text = t('passcodeInvalid');
  else if (error?.field === 'room') text = t('roomInvalid');
  else if (error?.field === 'name') text = t('nameInvalid');
  else text = errorText(error);
  if (language() === 'en' && error?.message && error.code === 'bad_request' && error.field !== 'passcode') {
    text = `${text} (${error.message})`;
  }
  // About the passcode: said right under its field (opened if folded), where the focus goes.
  const el = error?.field === 'passcode' ? els.passcodeError : els.joinError;
  if (el === els.passcodeError) els.accessDetails.open = true;
  el.hidden = false;
  setText(el, text);
}

function hideJoinErrors() {
  els.joinError.hidden = true;
  els.passcodeError.hidden = true;
}

function renderConnection() {
  const status = state.view === 'room' ? state.conn : 'idle';
  document.body.dataset.conn = status;
  const label = {
    connecting: t('connConnecting'), joined: t('connOnline'), reconnecting: t('connReconnecting'),
    replaced: t('connReplaced'),
  }[status] || '';
  els.connPill.hidden = !label;
  setText(els.connText, label);

  const showBanner = status === 'reconnecting' || status === 'replaced';
  els.banner.hidden = !showBanner;
  els.banner.dataset.kind = status;
  els.retry.hidden = status !== 'reconnecting';
  els.useHere.hidden = status !== 'replaced';
  if (status === 'replaced') setText(els.bannerText, t('bannerReplaced'));
  else if (status === 'reconnecting') updateReconnectCountdown();
}

function updateReconnectCountdown() {
  if (state.conn !== 'reconnecting') return;
  const retryAt = state.connInfo.retryAt;
  const seconds = retryAt ? Math.ceil((retryAt - Date.now()) / 1000) : 0;
  setText(els.bannerText, seconds >= 1 ? t('bannerReconnectingIn', { s: seconds }) : t('bannerReconnecting'));
}

function handleMessage(message) {
  const serverTime = message.type === 'state' ? message.room?.serverTime : message.serverTime;
  if (typeof serverTime === 'number') clock.observe(serverTime);

  switch (message.type) {
    case 'welcome':
      if (message.limits) {
        limits = limitsFrom(message.limits);
        save('limits', JSON.stringify(limits));
        applyLimits();
      }
      state.me = message.you.id;
      state.seq = -1;
      applySnapshot(message.room, true);
      els.joinButton.disabled = false;
      setText(els.joinButton, t('join'));
      noteUnappliedAccess(message.room);
      break;
    case 'state':
      applySnapshot(message.room, false);
      break;
    case 'tick':
      applyTick(message);
      break;
    case 'event':
      handleEvent(message);
      break;
    case 'ok':
      handleOk(message);
      break;
    case 'error':
      handleError(message);
      break;
    case 'stats':
      handleStats(message);
      break;
    default:
      break; // pong, and message types from later versions
  }
}

/** A passcode or host-only choice only shapes a new room: joining one that already existed, say so. */
function noteUnappliedAccess(room) {
  const asked = state.asked;
  state.asked = null;
  if (!asked || !room) return;
  const passcodeIgnored = !!asked.passcode && room.locked === false;
  const controlIgnored = asked.control === 'host' && room.control !== 'host';
  if (passcodeIgnored || controlIgnored) showNoticeText('', t('accessNotApplied'));
}

function applySnapshot(room, fresh) {
  if (!room || typeof room !== 'object') return;
  if (!fresh && typeof room.seq === 'number' && room.seq < state.seq) return;
  state.seq = room.seq;
  state.room = room;
  for (const member of room.members) state.names.set(member.id, member.name);
  render();
}

function applyTick(tick) {
  const room = state.room;
  if (!room || tick.room !== room.id || tick.seq < state.seq) return;
  room.remainingMs = tick.remainingMs;
  if (typeof tick.endsAt === 'number') room.endsAt = tick.endsAt;
  room.phase = tick.phase;
  room.cycle = tick.cycle;
  frame();
}

function nameOf(id) {
  return state.names.get(id) || t('someone');
}

function handleEvent(event) {
  const who = nameOf(event.member ?? event.by);
  const isMe = (event.member ?? event.by) === state.me;
  switch (event.kind) {
    case 'phaseCompleted': {
      const completed = phaseName(event.completed);
      const next = phaseName(event.next);
      addActivity(t('evCompleted', { phase: completed }), event.completed);
      announce(t(event.autoStarted ? 'announceStarted' : 'announceNext', { completed, next }));
      playChime(event.completed);
      if (event.completed === 'focus') notify(t('notifyFocusDone'), t('notifyBodyBreak', { phase: next }));
      else notify(t('notifyBreakDone'), t('notifyBodyFocus'));
      // The server stores a session before it announces it, so asking now shows it.
      if (event.completed === 'focus') refreshStats();
      break;
    }
    case 'memberJoined':
      if (event.name) state.names.set(event.member, event.name);
      if (!isMe) addActivity(t('evJoined', { name: nameOf(event.member) }));
      break;
    case 'memberReturned':
      if (!isMe) addActivity(t('evReturned', { name: who }));
      break;
    case 'memberAway':
      if (!isMe || event.reason === 'away') addActivity(t(event.reason === 'away' ? 'evAway' : 'evDisconnected', { name: who }));
      break;
    case 'memberBack':
      addActivity(t('evBack', { name: who }));
      break;
    case 'memberLeft':
      addActivity(t(event.reason === 'expired' ? 'evExpired' : 'evLeft', { name: who }));
      break;
    case 'control': {
      const key = {
        start: 'evStart', pause: 'evPause', resume: 'evResume', skip: 'evSkip', reset: 'evReset',
        configure: 'evConfigure',
      }[event.action];
      // Another member's settings make our own "saved" note old news.
      if (event.action === 'configure' && !isMe) clearSettingsNote();
      if (event.action === 'extend') {
        const minutes = Math.round((Math.abs(event.seconds) / 60) * 10) / 10;
        addActivity(t(event.seconds >= 0 ? 'evExtend' : 'evShorten', { name: who, n: minutes }));
      } else if (key) {
        addActivity(t(key, { name: who }));
      }
      break;
    }
    case 'hostChanged':
      if (event.member) {
        addActivity(t('evHostChanged', { name: nameOf(event.member) }));
        if (event.member === state.me) announce(t('announceHostYou'));
      } else {
        addActivity(t('evHostNone'));
      }
      break;
    case 'controlModeChanged':
      addActivity(t(event.mode === 'host' ? 'evModeHost' : 'evModeAnyone', { name: nameOf(event.by) }));
      break;
    default:
      break; // event kinds from later versions
  }
}

function handleOk(ok) {
  if (ok.command === 'control' && ok.ref === state.controlRef) {
    // The switch already shows the new mode; the state that confirms it may come before or after this.
    state.controlRef = null;
    renderConnectionControls();
  }
  if (ok.command === 'configure' && ok.ref === state.configureRef) {
    state.configureRef = null;
    state.settingsDirty = false;
    els.saveSettings.disabled = false;
    setText(els.settingsNote, t(ok.appliesFrom === 'nextPhase' ? 'appliesNext' : 'appliesNow'));
    els.settingsNote.dataset.applies = ok.appliesFrom || 'now';
    clearTimeout(settingsNoteTimer);
    settingsNoteTimer = setTimeout(clearSettingsNote, SETTINGS_NOTE_MS);
    render();
  }
}

let settingsNoteTimer = null;

function clearSettingsNote() {
  clearTimeout(settingsNoteTimer);
  setText(els.settingsNote, '');
  delete els.settingsNote.dataset.applies;
}

function errorText(error) {
  const code = error?.code;
  return hasKey(`err_${code}`) ? t(`err_${code}`) : t('err_internal');
}

function handleError(error) {
  if (error.ref !== undefined && error.ref === state.stats.ref) {
    handleStatsError(error);
    return;
  }
  if (error.ref !== undefined && error.ref === state.configureRef) {
    state.configureRef = null;
    els.saveSettings.disabled = false;
    els.settingsError.hidden = false;
    setText(els.settingsError, language() === 'en' && error.message ? `${errorText(error)} (${error.message})` : errorText(error));
    return;
  }
  if (error.code === 'replaced') return; // the connection reports it as a state
  if (error.ref !== undefined && error.ref === state.controlRef) {
    state.controlRef = null; // the switch goes back to what the room says
    render();
  }
  showNotice(error);
}

// MARK: stats

function setStatsOpen(open) {
  state.stats.open = open;
  els.statsToggle.setAttribute('aria-expanded', String(open));
  els.statsPanel.hidden = !open;
}

function toggleStats() {
  setStatsOpen(!state.stats.open);
  if (!state.stats.open) return;
  renderStatsPanel();
  refreshStats();
}

/** Asks for the room's stats and journal, when the panel is open; once joined, if not yet. What the panel
 *  shows stays up until the answer replaces it. */
function refreshStats() {
  const stats = state.stats;
  if (!stats.open || state.view !== 'room' || state.conn !== 'joined') return;
  const ref = connection.request(statsRequest(state.roomName, connection.tz, STATS_DAYS));
  if (ref === null) return; // the socket is gone: joining again asks again
  stats.ref = ref;
  stats.loading = true;
  renderStatsPanel();
  loadJournal();
}

function handleStats(message) {
  const stats = state.stats;
  // Only the answer to the latest request: an older one would show older numbers.
  if (message.ref === undefined || message.ref !== stats.ref) return;
  stats.ref = null;
  stats.loading = false;
  stats.error = null;
  stats.data = message;
  renderStatsPanel();
}

function handleStatsError(error) {
  const stats = state.stats;
  stats.ref = null;
  stats.loading = false;
  if (error.field === 'tz' && connection.tz) {
    // A zone the server does not know: ask again without it, in the server's default (UTC).
    connection.tz = null;
    refreshStats();
    return;
  }
  stats.error = error;
  renderStatsPanel();
}

function myName() {
  return state.room?.members.find((m) => m.id === state.me)?.name ?? '';
}

function renderStatsPanel() {
  const stats = state.stats;
  if (!stats.open) return;
  els.statsPanel.setAttribute('aria-busy', String(stats.loading));
  let status = '';
  if (stats.error) status = `${t('statsError')} ${errorText(stats.error)}`;
  else if (!stats.data) status = t('statsLoading');
  setText(els.statsStatus, status);
  els.statsStatus.hidden = !status;
  els.statsRetry.hidden = !stats.error;
  els.statsStatusRow.hidden = !status;
  setText(statsEls.chartTitle, t('statsChartTitle', { days: stats.data?.days ?? STATS_DAYS }));
  if (!stats.data) {
    statsEls.empty.hidden = true;
    statsEls.content.hidden = true;
    return;
  }
  setText(statsEls.chartEmpty, t('statsChartEmpty', { days: stats.data.days ?? STATS_DAYS }));
  renderStats(statsEls, stats.data, { myName: myName() });
  renderJournalPart();
}

function renderJournalPart() {
  const stats = state.stats;
  const entries = stats.journal || [];
  const series = chartSeries(stats.data);
  const colors = new Map(series.filter((s) => s.key !== OTHERS).map((s) => [s.name, s.color]));
  const hasOthers = series.some((s) => s.key === OTHERS);
  renderJournal(els.statsJournal, entries, {
    colorOf: (name) => (colors.has(name) ? colors.get(name) : (hasOthers ? OTHERS : null)),
  });
  let note = '';
  if (stats.journalError) note = `${t('statsJournalError')} ${errorText(stats.journalError)}`;
  else if (stats.journal && entries.length === 0) note = t('statsJournalEmpty');
  setText(els.statsJournalStatus, note);
  els.statsJournalStatus.hidden = !note;
}

/** GET on the server's API; a locked room's API wants the member's resume token. */
function apiFetch(path) {
  const headers = {};
  const token = connection.token;
  if (state.room?.locked && token) headers.Authorization = `Bearer ${token}`;
  return fetch(path, { headers, cache: 'no-store' });
}

/** The { code, message, field } of a refused API request. */
async function apiError(response) {
  try {
    const body = await response.json();
    if (body?.error?.code) return body.error;
  } catch { /* not JSON */ }
  return { code: response.status === 503 ? 'unavailable' : 'internal' };
}

async function loadJournal() {
  const stats = state.stats;
  const seq = ++stats.journalSeq;
  const room = state.roomName;
  let entries = null;
  let failure = null;
  try {
    const response = await apiFetch(historyPath(room, { limit: JOURNAL_LIMIT }));
    if (!response.ok) failure = await apiError(response);
    else entries = journalEntries(await response.json(), JOURNAL_LIMIT);
  } catch {
    failure = { code: 'internal' };
  }
  // A later request, or another room, makes this answer old news.
  if (state.stats !== stats || seq !== stats.journalSeq) return;
  if (entries) stats.journal = entries;
  stats.journalError = failure;
  if (stats.data) renderJournalPart();
}

/** The focus journal as a CSV file: fetched (with the token a locked room wants) and saved from a blob. */
async function downloadCSV() {
  const stats = state.stats;
  const room = state.roomName;
  if (stats.csvBusy || !room) return;
  stats.csvBusy = true;
  els.statsCsv.disabled = true;
  els.statsCsv.dataset.state = 'busy';
  setText(els.statsCsvLabel, t('statsDownloading'));
  try {
    const response = await apiFetch(historyPath(room, { format: 'csv', tz: connection.tz }));
    if (!response.ok) throw await apiError(response);
    const blob = await response.blob();
    const url = URL.createObjectURL(blob);
    const link = document.createElement('a');
    link.href = url;
    link.download = csvFileName(room, response.headers.get('Content-Disposition'));
    link.hidden = true;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    els.statsCsv.dataset.state = 'done';
  } catch (error) {
    els.statsCsv.dataset.state = 'failed';
    showNoticeText(t('errorTitle'), `${t('statsDownloadFailed')} ${errorText(error)}`);
  } finally {
    stats.csvBusy = false;
    els.statsCsv.disabled = false;
    setText(els.statsCsvLabel, t('statsDownload'));
  }
}

// MARK: notices, announcements, activity

let noticeTimer = null;

/** A refused request as a small notice: the translated meaning of its code, plus the server's own words
 *  in English. */
function showNotice(error) {
  const detail = language() === 'en' && error.message ? ` (${error.message})` : '';
  showNoticeText(t('errorTitle'), `${errorText(error)}${detail}`);
}

function showNoticeText(title, text) {
  setText(els.noticeTitle, title);
  setText(els.noticeText, text);
  els.notice.hidden = false;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(hideNotice, NOTICE_MS);
}

function hideNotice() {
  clearTimeout(noticeTimer);
  els.notice.hidden = true;
}

function announce(text) {
  // Clearing first makes screen readers repeat an identical message.
  els.announcer.textContent = '';
  setTimeout(() => { els.announcer.textContent = text; }, 50);
}

function addActivity(text, phase) {
  const li = document.createElement('li');
  const time = document.createElement('time');
  const now = new Date();
  time.dateTime = now.toISOString();
  time.textContent = now.toLocaleTimeString(language(), { hour: '2-digit', minute: '2-digit' });
  const body = document.createElement('span');
  body.textContent = text;
  if (phase) li.dataset.phase = phase;
  li.append(time, body);
  els.activity.prepend(li);
  while (els.activity.children.length > ACTIVITY_LIMIT) els.activity.lastChild.remove();
  els.activityEmpty.hidden = true;
}

// MARK: rendering

function render() {
  renderConnectionControls();
  const room = state.room;
  if (state.view !== 'room' || !room) return;
  const phaseBefore = document.body.dataset.phase;
  renderPhase(els, room);
  if (!iconColors || phaseBefore !== room.phase) refreshIconColors();
  renderDialStatus(els, room, clock);
  renderMembers(els.members, room.members, state.me, room.host, { wireTaskInput, makeHost: askHandOff });
  renderMemberCounts(room);
  renderAccess(room);
  const me = room.members.find((m) => m.id === state.me);
  const away = !!me && me.connected && !me.present;
  els.away.setAttribute('aria-pressed', String(away));
  setText(els.awayLabel, t(away ? 'imBack' : 'stepAway'));
  renderSettings(els, room, state.settingsDirty);
  renderRoomStats(els.roomStats, room.stats);
  frame();
}

/**
 * The headline counts cover the whole room; a big room lists only its first members (PROTOCOL.md, "Big
 * rooms"), and says how many more there are under the list.
 */
function renderMemberCounts(room) {
  const total = room.memberCount ?? room.members.length;
  const present = room.presentCount ?? room.members.filter((m) => m.present).length;
  const count = (n) => n.toLocaleString(language());
  setText(els.membersCount, count(total));
  const title = t('presentOfMembers', { present: count(present), n: count(total) });
  if (els.membersCount.title !== title) els.membersCount.title = title;
  const more = total - room.members.length;
  if (els.membersMore.hidden === more > 0) els.membersMore.hidden = !(more > 0);
  setText(els.membersMore, more > 0 ? t('moreMembers', { n: count(more), present: count(present) }) : '');
}

function renderConnectionControls() {
  const joined = state.conn === 'joined';
  const allowed = mayControl(state.room, state.me);
  renderControls(els, state.room, joined, allowed);
  els.away.disabled = !joined;
  els.saveSettings.disabled = !joined || !allowed || state.configureRef !== null;
  if (els.settingsFields.disabled !== !allowed) els.settingsFields.disabled = !allowed;
  els.hostOnlyToggle.disabled = !joined || state.controlRef !== null;
}

/** The lock by the room's name, who hosts, and what that means for me. */
function renderAccess(room) {
  els.roomLock.hidden = !room.locked;
  const iHost = !!state.me && room.host === state.me;
  const allowed = mayControl(room, state.me);
  els.hostNote.hidden = allowed;
  els.settingsHostNote.hidden = allowed;
  if (!allowed) {
    setText(els.hostNoteText, hostNoteText(room));
    setText(els.settingsHostNote, hostNoteText(room));
  }
  els.kbdHint.hidden = !allowed;
  els.hostTools.hidden = !iHost;
  if (state.controlRef === null) els.hostOnlyToggle.checked = room.control === 'host';
  // A confirmation that no longer fits the room goes away.
  if (!allowed && els.resetDialog.open) els.resetDialog.close();
  if (els.handoffDialog.open && (!iHost || !room.members.some((m) => m.id === state.handoffTarget))) {
    els.handoffDialog.close();
  }
}

function hostNoteText(room) {
  const host = room.members.find((m) => m.id === room.host);
  return host ? t('hostNote', { name: host.name }) : t('hostNoteNobody');
}

/** Space or a click from someone who may not: the note says why, to the eye and to screen readers. */
function explainHostOnly() {
  if (!state.room || els.hostNote.hidden) return;
  announce(hostNoteText(state.room));
  delete els.hostNote.dataset.flash;
  void els.hostNote.offsetWidth; // restarts the animation
  els.hostNote.dataset.flash = 'true';
}

function askHandOff(memberId) {
  const room = state.room;
  const member = room?.members.find((m) => m.id === memberId);
  if (!member || room.host !== state.me || memberId === state.me) return;
  state.handoffTarget = memberId;
  const title = t('handoffTitle', { name: member.name });
  if (typeof els.handoffDialog.showModal === 'function') {
    setText(els.handoffTitle, title);
    setText(els.handoffBody, t('handoffBody', { name: member.name }));
    els.handoffDialog.showModal();
    els.handoffCancel.focus();
  } else if (window.confirm(title)) {
    send('handOff', { member: memberId });
  }
}

/** One frame of the clock: the digits, the ring and the title, from endsAt and the clock offset. */
function frame() {
  const room = state.room;
  if (state.view !== 'room' || !room) return;
  const text = renderClock(els, room, clock);
  const title = titleFor(room, text);
  if (title !== state.lastTitle) {
    state.lastTitle = title;
    document.title = title;
  }
  updateFavicon(room);
}

const PLAIN_ICON = '/favicon.svg';
let iconKey = '';
let iconColors = null;

/** The phase's colours for the tab icon, read from the stylesheet once per phase or colour scheme. */
function refreshIconColors() {
  const style = getComputedStyle(document.body);
  iconColors = {
    accent: style.getPropertyValue('--accent').trim() || '#d8433b',
    track: style.getPropertyValue('--soft').trim() || '#fbe0dc',
  };
  iconKey = '';
}

function updateFavicon(room) {
  let key = 'plain';
  if (room && room.status !== 'idle') {
    key = `${room.phase}|${room.status}|${iconStep(room, clock)}|${iconColors?.accent}`;
  }
  if (key === iconKey) return;
  iconKey = key;
  const href = key === 'plain' ? PLAIN_ICON
    : progressIcon(iconStep(room, clock), room.status === 'paused', iconColors.accent, iconColors.track);
  els.favicon.setAttribute('href', href);
}

function animationLoop() {
  frame();
  requestAnimationFrame(animationLoop);
}

// MARK: commands

function send(type, fields = {}) {
  unlockAudio();
  return connection.request({ type, ...fields });
}

function toggleTimer() {
  if (state.conn === 'joined' && !mayControl(state.room, state.me)) { explainHostOnly(); return; }
  if (els.toggle.disabled) return;
  send(els.toggle.dataset.action || 'start');
}

function wireTaskInput(input) {
  const commit = () => {
    input.dataset.editing = 'false';
    const text = input.value.trim();
    if (text !== (input.dataset.saved ?? '')) send('task', { text });
  };
  input.addEventListener('focus', () => { input.dataset.editing = 'true'; });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') { event.preventDefault(); input.blur(); }
    if (event.key === 'Escape') {
      input.value = input.dataset.saved ?? '';
      input.blur();
    }
  });
  input.addEventListener('blur', commit);
}

/** A bound of a phase length as the settings form names it: whole minutes, else seconds. */
function lengthText(seconds) {
  return seconds % 60 === 0 ? `${seconds / 60} ${t('min')}` : `${seconds} ${t('sec')}`;
}

/** The server's limits onto the fields that have a length of their own. */
function applyLimits() {
  els.nameInput.maxLength = limits.maxNameLength;
  els.setEvery.max = String(limits.maxLongBreakEvery);
  setRenderLimits(limits);
}

function readSettings() {
  const fields = [
    [els.setFocus, 'focusLen'], [els.setShort, 'shortLen'], [els.setLong, 'longLen'],
  ];
  const seconds = [];
  for (const [input, label] of fields) {
    const value = parseDuration(input.value);
    const least = minSettingSeconds(limits, label === 'focusLen' ? 'focus' : 'break');
    if (value === null || value < least || value > limits.maxSettingSeconds) {
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return {
        error: t('invalidDuration', { field: t(label), min: lengthText(least), max: lengthText(limits.maxSettingSeconds) }),
      };
    }
    input.removeAttribute('aria-invalid');
    seconds.push(value);
  }
  const every = Number(els.setEvery.value);
  if (!Number.isInteger(every) || every < 1 || every > limits.maxLongBreakEvery) {
    els.setEvery.setAttribute('aria-invalid', 'true');
    els.setEvery.focus();
    return { error: t('invalidEvery') };
  }
  els.setEvery.removeAttribute('aria-invalid');
  return {
    settings: {
      focus: seconds[0], shortBreak: seconds[1], longBreak: seconds[2], longBreakEvery: every,
      autoStart: els.setAuto.checked,
    },
  };
}

// MARK: wiring

function wire() {
  buildRingTicks(els.ringTicks);
  applyLimits();

  els.lang.value = language();
  els.lang.addEventListener('change', () => {
    setLanguage(els.lang.value, { remember: true });
    renderStaticLabels();
    renderConnection();
    render();
    renderStatsPanel();
  });

  els.joinForm.addEventListener('submit', (event) => {
    event.preventDefault();
    unlockAudio();
    const room = els.roomInput.value.trim();
    const name = els.nameInput.value.trim();
    hideJoinErrors();
    els.roomInput.removeAttribute('aria-invalid');
    els.nameInput.removeAttribute('aria-invalid');
    els.passcodeInput.removeAttribute('aria-invalid');
    if (!ROOM_PATTERN.test(room)) {
      els.roomInput.setAttribute('aria-invalid', 'true');
      showJoinError({ field: 'room' });
      els.roomInput.focus();
      return;
    }
    if (!name || [...name].length > limits.maxNameLength) {
      els.nameInput.setAttribute('aria-invalid', 'true');
      showJoinError({ field: 'name' });
      els.nameInput.focus();
      return;
    }
    // Passcodes are taken as typed: spaces count.
    const passcode = els.passcodeInput.value;
    const length = characterCount(passcode);
    if (passcode && (length < limits.minPasscodeLength || length > limits.maxPasscodeLength)) {
      els.passcodeInput.setAttribute('aria-invalid', 'true');
      showJoinError({ field: 'passcode' });
      els.passcodeInput.focus();
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
  els.randomRoom.addEventListener('click', () => { els.roomInput.value = randomRoomName(); els.roomInput.focus(); });

  els.invite.addEventListener('click', copyInvite);
  els.statsToggle.addEventListener('click', toggleStats);
  els.statsRetry.addEventListener('click', () => {
    state.stats.error = null;
    renderStatsPanel();
    refreshStats();
  });
  els.statsCsv.addEventListener('click', downloadCSV);
  // The chart is drawn for its width: a new width draws it again.
  if (typeof ResizeObserver === 'function') {
    let width = 0;
    new ResizeObserver((entries) => {
      const next = Math.round(entries[entries.length - 1].contentRect.width);
      if (next === width) return;
      width = next;
      if (state.stats.open && state.stats.data) renderStatsPanel();
    }).observe(statsEls.chart);
  }
  els.leave.addEventListener('click', leaveRoom);
  els.retry.addEventListener('click', () => connection.retryNow());
  els.useHere.addEventListener('click', () => connection.rejoin(load('name', '')));

  els.toggle.addEventListener('click', toggleTimer);
  els.skip.addEventListener('click', () => send('skip'));
  els.reset.addEventListener('click', () => {
    if (typeof els.resetDialog.showModal === 'function') {
      els.resetDialog.showModal();
      els.resetCancel.focus();
    } else if (window.confirm(t('resetTitle'))) {
      send('reset');
    }
  });
  els.resetCancel.addEventListener('click', () => els.resetDialog.close());
  els.resetConfirm.addEventListener('click', () => { els.resetDialog.close(); send('reset'); });
  els.resetDialog.addEventListener('click', (event) => { if (event.target === els.resetDialog) els.resetDialog.close(); });

  els.hostOnlyToggle.addEventListener('change', () => {
    const ref = send('control', { mode: els.hostOnlyToggle.checked ? 'host' : 'anyone' });
    if (ref === null) {
      els.hostOnlyToggle.checked = state.room?.control === 'host';
      return;
    }
    state.controlRef = ref;
    renderConnectionControls();
  });
  els.handoffCancel.addEventListener('click', () => els.handoffDialog.close());
  els.handoffConfirm.addEventListener('click', () => {
    const member = state.handoffTarget;
    els.handoffDialog.close();
    if (member) send('handOff', { member });
  });
  els.handoffDialog.addEventListener('click', (event) => {
    if (event.target === els.handoffDialog) els.handoffDialog.close();
  });
  els.handoffDialog.addEventListener('close', () => { state.handoffTarget = null; });
  for (const button of els.extendButtons) {
    button.addEventListener('click', () => send('extend', { seconds: Number(button.dataset.extend) }));
  }
  els.away.addEventListener('click', () => send('presence', { away: els.away.getAttribute('aria-pressed') !== 'true' }));

  els.settingsForm.addEventListener('input', () => {
    state.settingsDirty = true;
    clearSettingsNote();
  });
  // Closing the form drops unsaved edits, so that it shows the room's settings again when reopened.
  $('settings-details').addEventListener('toggle', (event) => {
    if (event.target.open || state.configureRef !== null) return;
    state.settingsDirty = false;
    els.settingsError.hidden = true;
    render();
  });
  els.settingsForm.addEventListener('submit', (event) => {
    event.preventDefault();
    els.settingsError.hidden = true;
    const { settings, error } = readSettings();
    if (error) {
      els.settingsError.hidden = false;
      setText(els.settingsError, error);
      return;
    }
    const ref = send('configure', settings);
    if (ref !== null) {
      state.configureRef = ref;
      els.saveSettings.disabled = true;
      clearSettingsNote();
      setText(els.settingsNote, t('saving'));
    }
  });

  els.sound.addEventListener('click', () => {
    const on = !soundEnabled();
    setSoundEnabled(on);
    els.sound.setAttribute('aria-pressed', String(on));
    if (on) { unlockAudio(); playChime('shortBreak'); }
  });
  els.sound.setAttribute('aria-pressed', String(soundEnabled()));

  if (notificationsSupported()) {
    els.notify.hidden = false;
    renderNotifyButton();
    els.notify.addEventListener('click', async () => {
      if (Notification.permission === 'denied') {
        showNoticeText('', t('notifyBlocked'));
        return;
      }
      if (Notification.permission === 'default') {
        const result = await requestNotifications();
        setNotificationsWanted(result === 'granted');
      } else {
        setNotificationsWanted(!notificationsWanted());
      }
      renderNotifyButton();
    });
  }

  els.noticeClose.addEventListener('click', hideNotice);

  document.addEventListener('pointerdown', unlockAudio, { passive: true });
  document.addEventListener('keydown', (event) => {
    unlockAudio();
    if (event.key === 'Escape' && !els.notice.hidden) hideNotice();
    const isSpace = event.code === 'Space' || event.key === ' ';
    if (!isSpace || event.repeat || event.ctrlKey || event.metaKey || event.altKey) return;
    if (state.view !== 'room' || els.resetDialog.open || els.handoffDialog.open) return;
    if (takesSpace(event.target)) return; // text fields type spaces, check boxes tick
    // Anywhere else, a focused button included, space is the timer's: preventing the default here also
    // keeps the focused button from clicking on key-up, so the timer toggles exactly once.
    event.preventDefault();
    toggleTimer();
  });

  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', refreshIconColors);

  window.addEventListener('hashchange', () => {
    if (state.view === 'landing') {
      const room = roomFromLocation();
      if (room) els.roomInput.value = room;
    }
  });

  setInterval(() => {
    frame(); // keeps the title right while the tab is hidden and animation frames pause
    updateReconnectCountdown();
  }, 500);
  requestAnimationFrame(animationLoop);
}

/** User-perceived characters, as the server counts them. */
function characterCount(text) {
  if (typeof Intl !== 'undefined' && typeof Intl.Segmenter === 'function') {
    let n = 0;
    for (const _ of new Intl.Segmenter().segment(text)) n += 1; // eslint-disable-line no-unused-vars
    return n;
  }
  return [...text].length;
}

function takesSpace(target) {
  if (!(target instanceof Element)) return false;
  return !!target.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"], dialog');
}

function renderNotifyButton() {
  const on = Notification.permission === 'granted' && notificationsWanted();
  els.notify.setAttribute('aria-pressed', String(on));
}

function renderStaticLabels() {
  renderExtendLabels(els);
  setText(els.inviteLabel, t('copyInvite'));
}

let inviteTimer = null;

async function copyInvite() {
  const url = inviteURL();
  let copied = false;
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(url);
      copied = true;
    }
  } catch {
    copied = false;
  }
  if (!copied) {
    const scratch = document.createElement('textarea');
    scratch.value = url;
    scratch.setAttribute('readonly', '');
    scratch.className = 'clipboard-scratch';
    document.body.append(scratch);
    scratch.select();
    try { copied = document.execCommand('copy'); } catch { copied = false; }
    scratch.remove();
  }
  if (copied) {
    setText(els.inviteLabel, t('copied'));
    els.invite.dataset.copied = 'true';
    clearTimeout(inviteTimer);
    inviteTimer = setTimeout(() => {
      setText(els.inviteLabel, t('copyInvite'));
      delete els.invite.dataset.copied;
    }, 2000);
  } else {
    showNoticeText('', t('copyManual', { url }));
  }
}

function start() {
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
  renderConnection();

  // A reload (or a return) to a room this browser is a member of goes straight back in.
  if (room && name && load(tokenKey(room))) {
    enterRoom(room, name);
    return;
  }
  (room && !name ? els.nameInput : room ? els.joinButton : els.nameInput).focus();
}

start();
