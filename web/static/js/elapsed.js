// Elapsed-time display: an agent that starts slowly or a turn that runs silently for a minute should look busy,
// not stuck. One Ticker per place on screen; it re-renders while it runs and stops its timer when told to.

/** "1.4 s" under a minute when tenths are asked for, otherwise "0:07", "12:05", "1:02:03". */
export function fmtElapsed(ms, { tenths = false } = {}) {
  const t = Math.max(0, Number.isFinite(ms) ? ms : 0);
  if (tenths && t < 60000) return `${(Math.floor(t / 100) / 10).toFixed(1)} s`;
  const s = Math.floor(t / 1000);
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const secs = String(s % 60).padStart(2, '0');
  return hours ? `${hours}:${String(minutes).padStart(2, '0')}:${secs}` : `${minutes}:${secs}`;
}

/**
 * Calls render(elapsedMs) now and then every `every` ms from start(since) until stop(). start() with the same
 * `since` while running changes nothing, so callers may call it on every render.
 */
export class Ticker {
  constructor(render, every = 1000) {
    this.render = render; // Static after construction.
    this.every = every; // Static after construction.
    this.since = null;
    this.timer = 0;
  }

  start(since) {
    if (this.timer && this.since === since) return;
    this.stop();
    this.since = since;
    const tick = () => this.render(Date.now() - this.since);
    tick();
    this.timer = setInterval(tick, this.every);
  }

  stop() {
    clearInterval(this.timer);
    this.timer = 0;
    this.since = null;
  }

  get running() {
    return this.timer !== 0;
  }
}
