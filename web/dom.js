// The page's elements by id, looked up once: what the views draw into and the controls they wire.

export const $ = (id) => document.getElementById(id);

export const els = {
  roomBar: $('room-bar'), roomTitle: $('room-title'), invite: $('btn-invite'), inviteLabel: $('invite-label'),
  wallDisplay: $('btn-tv'),
  connPill: $('conn-pill'), connText: $('conn-text'), sound: $('btn-sound'), notify: $('btn-notify'),
  lang: $('lang-select'),
  banner: $('conn-banner'), bannerText: $('conn-banner-text'), retry: $('btn-retry'), useHere: $('btn-use-here'),
  landing: $('landing'), joinForm: $('join-form'), roomInput: $('room-input'), landingNext: $('landing-next'), nameInput: $('name-input'),
  randomRoom: $('btn-random-room'), joinError: $('join-error'), joinButton: $('btn-join'),
  accessDetails: $('access-details'), passcodeInput: $('passcode-input'), passcodeError: $('passcode-error'),
  showPasscode: $('btn-show-passcode'), hostOnlyInput: $('host-only-input'),
  roomLock: $('room-lock'), hostNote: $('host-note'), hostNoteText: $('host-note-text'), kbdHint: $('kbd-hint'),
  hostTools: $('host-tools'), hostOnlyToggle: $('host-only-toggle'),
  hostPasscodeForm: $('host-passcode-form'), hostPasscodeInput: $('host-passcode-input'),
  removePasscode: $('btn-remove-passcode'), settingsFields: $('settings-fields'),
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
  settingsDetails: $('settings-details'),
  settingsForm: $('settings-form'), settingsSummary: $('settings-summary'), setFocus: $('set-focus'),
  setShort: $('set-short'), setLong: $('set-long'), setEvery: $('set-every'), setAuto: $('set-auto'), setAligned: $('set-aligned'),
  settingsError: $('settings-error'), settingsNote: $('settings-note'), pendingNote: $('pending-note'),
  saveSettings: $('btn-save-settings'),
  activity: $('activity'), activityEmpty: $('activity-empty'), leave: $('btn-leave'),
  notice: $('notice'), noticeTitle: $('notice-title'), noticeText: $('notice-text'), noticeClose: $('btn-notice-close'),
  announcer: $('announcer'), favicon: $('favicon'),
  keysDialog: $('keys-dialog'), keysList: $('keys-list'), keysClose: $('btn-keys-close'), kbdHelp: $('btn-keys'),
  alertsSummary: $('alerts-summary'), soundSelect: $('sound-select'), preview: $('btn-preview'),
  volumeInput: $('volume-input'), volumeValue: $('volume-value'), warnInput: $('warn-input'), speakSelect: $('speak-select'),
  resetDialog: $('reset-dialog'), resetCancel: $('btn-reset-cancel'), resetConfirm: $('btn-reset-confirm'),
  statsToggle: $('btn-stats'), statsPanel: $('stats-panel'), statsStatus: $('stats-status'),
  statsStatusRow: $('stats-status-row'),
  statsRetry: $('btn-stats-retry'), statsCsv: $('btn-stats-csv'), statsCsvLabel: $('stats-csv-label'),
  statsJournal: $('stats-journal'), statsJournalStatus: $('stats-journal-status'),
};

/** What renderStats (statspanel.js) draws into. */
export const statsEls = {
  empty: $('stats-empty'), content: $('stats-content'),
  sessions: $('stat-sessions'), focus: $('stat-focus'), interruptions: $('stat-interruptions'),
  streak: $('stat-streak'), longest: $('stat-longest'),
  chart: $('stats-chart'), chartTitle: $('stats-chart-title'), chartEmpty: $('stats-chart-empty'),
  legend: $('stats-legend'), chartTable: $('stats-chart-table'), membersBody: $('stats-members-body'),
};
