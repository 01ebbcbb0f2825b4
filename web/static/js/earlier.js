// The messages a long session's snapshot left out: the "Show earlier messages" button of the transcript's first
// note reads the log from its start (GET /v1/sessions/{id}/events, JSON pages), folds the frames with the same
// reduce as the live ones, and puts their rows before the snapshot's (state.js mergeEarlier). Each click reads
// at most EARLIER_FRAMES frames, so a long log costs what the person asks for; the button stays for the rest.

import { initialState, boundaryOf, foldEarlier, mergeEarlier } from './state.js';

export const EARLIER_FRAMES = 5000; // frames read per click
const PAGE = 1000; // frames per request (the events API's largest page)

export class EarlierLoader {
  /** store: the session's store (state.js); fetchPage(after, limit) → an events JSON page. */
  constructor(store, fetchPage) {
    this.store = store;
    this.fetchPage = fetchPage;
    this.start(store.state);
  }

  /** Starts over for a state just made from a snapshot (and forgets a load under way). */
  start(state) {
    this.run = {}; // identifies the load under way; a new start makes its pages stale
    this.boundary = boundaryOf(state);
    this.maxSeq = state.seq;
    this.after = 0; // the seq of the last frame folded
    this.folded = initialState();
    this.gone = null; // the log's first seq, when it no longer starts at 1
    this.busy = false;
  }

  /** Reads the next frames and shows their rows; a failure shows in the note, with Retry. */
  async load() {
    if (this.busy) return;
    const run = this.run;
    this.busy = true;
    this.note('loading');
    let done = false;
    let rows = null;
    try {
      for (let n = 0; n < EARLIER_FRAMES && !done;) {
        const page = await this.fetchPage(this.after, Math.min(PAGE, EARLIER_FRAMES - n));
        if (run !== this.run) return;
        const frames = Array.isArray(page && page.frames) ? page.frames : [];
        const resync = ((page && page.notes) || []).find((x) => x && x.method === '_gateway/resync_required');
        if (!frames.length && resync) {
          const p = resync.params || {};
          // The log was trimmed: start over from what it still holds.
          if (p.reason !== 'log_truncated' || !(p.earliestSeq > this.after + 1)) throw new Error(`the log cannot be read (${p.reason || 'resync'})`);
          this.gone = p.earliestSeq;
          this.after = p.earliestSeq - 1;
          this.folded = initialState();
          continue;
        }
        const res = foldEarlier(this.folded, frames, this.boundary, this.maxSeq);
        this.folded = res.state;
        n += res.used;
        if (res.lastSeq !== null) this.after = res.lastSeq;
        else if (typeof page.lastSeq === 'number' && page.lastSeq > this.after) this.after = page.lastSeq;
        if (res.end) {
          done = true;
          rows = res.rows;
        } else if (!frames.length || this.after >= this.maxSeq) {
          done = true;
          rows = res.state.rows;
        }
        // Without the snapshot's first row the log was trimmed past it: what it holds is shown already.
        if (done && !res.found && this.gone) rows = [];
      }
    } catch (err) {
      if (run !== this.run) return;
      this.busy = false;
      this.note('error', (err && err.message) || String(err));
      return;
    }
    this.busy = false;
    const st = this.store.state;
    if (done) this.store.replace(mergeEarlier(st, rows, this.gone ? { status: 'done', text: this.goneText() } : null));
    else {
      const more = 'Some messages between these and the ones below are not shown yet.';
      this.store.replace(mergeEarlier(st, this.folded.rows, { status: 'idle', text: this.gone ? `${this.goneText()} ${more}` : more }));
    }
  }

  goneText() {
    return `Messages before seq ${this.gone} are no longer kept: the gateway's log of this session starts there.`;
  }

  note(status, error) {
    const row = this.store.state.rows[this.store.state.early];
    this.store.replace(mergeEarlier(this.store.state, null, { status, error, text: row && row.text }));
  }
}
