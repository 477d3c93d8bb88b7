// The stats panel at work: asking the server for the room's stats (over the socket) and its focus journal
// (over HTTP), drawing the answers (statspanel.js), and the CSV download. The request and its answer are the
// room model's (roommodel.js); the journal and the download are this panel's own.

import { t } from './i18n.js';
import { setText } from './render.js';
import { STATS_DAYS, JOURNAL_LIMIT, statsRequest, historyPath, csvFileName, journalEntries, chartSeries, OTHERS } from './stats.js';
import { renderStats, renderJournal } from './statspanel.js';
import { statsOpened, statsRequested, statsErrorCleared, myName } from './roommodel.js';
import { errorText } from './wording.js';

/** The journal of the room shown, and whether a download is under way. */
const newJournal = () => ({ entries: null, error: null, seq: 0, csvBusy: false });

export function createStatsView({ els, statsEls, page, connection, notices }) {
  let journal = newJournal();

  function setOpen(open) {
    page.model = statsOpened(page.model, open);
    els.statsToggle.setAttribute('aria-expanded', String(open));
    els.statsPanel.hidden = !open;
  }

  function toggle() {
    setOpen(!page.model.stats.open);
    if (!page.model.stats.open) return;
    render();
    refresh();
  }

  /** Another room: its journal is not this one's. */
  function reset() {
    journal = newJournal();
  }

  /** Asks for the room's stats and journal, when the panel is open; once joined, if not yet. What the panel
   *  shows stays up until the answer replaces it. */
  function refresh() {
    const { stats, roomName } = page.model;
    if (!stats.open || page.view !== 'room' || page.conn !== 'joined') return;
    const tz = connection.tz;
    const ref = connection.request(statsRequest(roomName, tz, STATS_DAYS));
    if (ref === null) return; // the socket is gone: joining again asks again
    page.model = statsRequested(page.model, ref, tz);
    render();
    loadJournal();
  }

  function render() {
    const { stats } = page.model;
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
    renderStats(statsEls, stats.data, { myName: myName(page.model) });
    renderJournalPart();
  }

  function renderJournalPart() {
    const entries = journal.entries || [];
    const series = chartSeries(page.model.stats.data);
    const colors = new Map(series.filter((s) => s.key !== OTHERS).map((s) => [s.name, s.color]));
    const hasOthers = series.some((s) => s.key === OTHERS);
    renderJournal(els.statsJournal, entries, {
      colorOf: (name) => (colors.has(name) ? colors.get(name) : (hasOthers ? OTHERS : null)),
    });
    let note = '';
    if (journal.error) note = `${t('statsJournalError')} ${errorText(journal.error)}`;
    else if (journal.entries && entries.length === 0) note = t('statsJournalEmpty');
    setText(els.statsJournalStatus, note);
    els.statsJournalStatus.hidden = !note;
  }

  /** GET on the server's API; a locked room's API wants the member's resume token. */
  function apiFetch(path) {
    const headers = {};
    const token = connection.token;
    if (page.model.room?.locked && token) headers.Authorization = `Bearer ${token}`;
    return fetch(path, { headers, cache: 'no-store' });
  }

  async function loadJournal() {
    const mine = journal;
    const seq = ++mine.seq;
    const room = page.model.roomName;
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
    if (journal !== mine || seq !== mine.seq) return;
    if (entries) mine.entries = entries;
    mine.error = failure;
    if (page.model.stats.data) renderJournalPart();
  }

  /** The focus journal as a CSV file: fetched (with the token a locked room wants) and saved from a blob. */
  async function downloadCSV() {
    const mine = journal;
    const room = page.model.roomName;
    if (mine.csvBusy || !room) return;
    mine.csvBusy = true;
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
      notices.show(t('errorTitle'), `${t('statsDownloadFailed')} ${errorText(error)}`);
    } finally {
      mine.csvBusy = false;
      els.statsCsv.disabled = false;
      setText(els.statsCsvLabel, t('statsDownload'));
    }
  }

  function wire() {
    els.statsToggle.addEventListener('click', toggle);
    els.statsRetry.addEventListener('click', () => {
      page.model = statsErrorCleared(page.model);
      render();
      refresh();
    });
    els.statsCsv.addEventListener('click', downloadCSV);
    // The chart is drawn for its width: a new width draws it again.
    if (typeof ResizeObserver === 'function') {
      let width = 0;
      new ResizeObserver((entries) => {
        const next = Math.round(entries[entries.length - 1].contentRect.width);
        if (next === width) return;
        width = next;
        if (page.model.stats.open && page.model.stats.data) render();
      }).observe(statsEls.chart);
    }
  }

  return { wire, setOpen, reset, refresh, render };
}

/** The { code, message, field } of a refused API request. */
async function apiError(response) {
  try {
    const body = await response.json();
    if (body?.error?.code) return body.error;
  } catch { /* not JSON */ }
  return { code: response.status === 503 ? 'unavailable' : 'internal' };
}
