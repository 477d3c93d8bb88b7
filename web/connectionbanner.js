// The connection as the room bar shows it: the pill (connecting, online, …) and the banner while the page
// reconnects (with its countdown) or after another tab took the room over.

import { t } from './i18n.js';
import { setText } from './render.js';

export function createConnectionBanner({ els, page }) {
  function render() {
    const status = page.view === 'room' ? page.conn : 'idle';
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
    else if (status === 'reconnecting') countdown();
  }

  /** The seconds to the next try, while reconnecting. */
  function countdown() {
    if (page.conn !== 'reconnecting') return;
    const retryAt = page.connInfo.retryAt;
    const seconds = retryAt ? Math.ceil((retryAt - Date.now()) / 1000) : 0;
    // A close with 1012: the server said it is restarting, and the page tries again every second or two.
    const restart = !!page.connInfo.restart;
    if (seconds >= 1) setText(els.bannerText, t(restart ? 'bannerRestartingIn' : 'bannerReconnectingIn', { s: seconds }));
    else setText(els.bannerText, t(restart ? 'bannerRestarting' : 'bannerReconnecting'));
  }

  return { render, countdown };
}
