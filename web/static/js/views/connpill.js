// The connection pill in the header: what the open session's socket is doing (conn.js's states), counting down to
// the next try while offline.

/** The pill's text for a socket state and its detail ({connecting, attempt, at, reason}) at time now (ms). */
export function pillText(st, detail = {}, now = 0) {
  switch (st) {
    case 'connecting': return 'Connecting…';
    case 'replaying': return 'Loading history…';
    case 'live': return 'Live';
    case 'resyncing': return 'Resyncing…';
    case 'reconnecting': {
      if (detail.connecting || !detail.at) return `Reconnecting…${detail.attempt ? ` (try ${detail.attempt + 1})` : ''}`;
      const s = Math.max(0, Math.ceil((detail.at - now) / 1000));
      return s > 0 ? `Offline · retrying in ${s}s` : 'Reconnecting…';
    }
    case 'closed': return detail.reason ? `Disconnected: ${detail.reason}` : 'Disconnected';
    default: return 'Not connected';
  }
}

/** Draws into the #conn-pill element (its text in #conn-text); set(state, detail) as the socket reports it. */
export function connPill(pill = document.getElementById('conn-pill'), text = document.getElementById('conn-text')) {
  let timer = 0;
  return {
    set(st, detail = {}) {
      clearInterval(timer);
      pill.dataset.state = st;
      const tick = () => { text.textContent = pillText(st, detail, Date.now()); };
      tick();
      // Offline with a retry time: count down to it.
      if (st === 'reconnecting' && !detail.connecting && detail.at) timer = setInterval(tick, 500);
    },
  };
}
