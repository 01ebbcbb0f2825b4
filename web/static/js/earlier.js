// The messages a long session's snapshot left out: the "Show earlier messages" button of the transcript's first
// note reads the log from its start (GET /v1/sessions/{id}/events, JSON pages), folds the frames with the same
// reduce as the live ones, and puts their rows before the snapshot's (state.js mergeEarlier). Each click reads
// at most EARLIER_FRAMES frames, so a long log costs what the person asks for; the button stays for the rest.
// Past the snapshot's first row it reads on (at most as many frames again) until the earlier cards are final,
// and a resync folds again what the person had loaded, so the rows before a snapshot read as a replay from seq 1.

import { initialState, boundaryOf, foldEarlier, mergeEarlier } from './state.js';

export const EARLIER_FRAMES = 5000; // frames read per click
const PAGE = 1000; // frames per request (the events API's largest page)

export class EarlierLoader {
  /**
   * store: the session's store (state.js); fetchPage(after, limit) → an events JSON page; perClick: frames read
   * per click (EARLIER_FRAMES).
   */
  constructor(store, fetchPage, { perClick = EARLIER_FRAMES } = {}) {
    this.store = store;
    this.fetchPage = fetchPage;
    this.perClick = perClick;
    this.start(store.state);
  }

  /** Starts over for a state just made from a snapshot (and forgets a load under way). */
  start(state) {
    this.run = {}; // identifies the load under way; a new start makes its pages stale
    this.boundary = boundaryOf(state);
    this.maxSeq = state.seq;
    this.after = 0; // the seq of the last frame folded
    this.cut = -1; // the index of the snapshot's first row in folded, once made
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
    let got;
    try {
      got = await this.read(run, this.perClick, Infinity);
    } catch (err) {
      if (run !== this.run) return;
      this.busy = false;
      this.note('error', (err && err.message) || String(err));
      return;
    }
    if (!got) return;
    this.busy = false;
    this.store.replace(this.merged(this.store.state, got));
  }

  /**
   * What a state shows of the log before its snapshot, for a resync to show again: {whole: true} when it shows
   * the log from its start (replayed whole, or every earlier row loaded), {to: seq} when rows up to seq were
   * loaded, null when none were.
   */
  kept(state) {
    const note = state.rows[state.early];
    if (!(note && note.type === 'note' && note.noteKind === 'truncated')) return state.rows.length ? { whole: true } : null;
    if (note.earlier && note.earlier.status === 'done') return { whole: true };
    return state.early > 0 && this.after > 0 ? { to: this.after } : null;
  }

  /**
   * Starts over for state (just made from a later snapshot) and folds the log again as far as kept (kept() of
   * the state it replaces) says, however many frames that takes. Returns state with those rows before the
   * snapshot's, or with the failure in its note (Retry goes on).
   */
  async refold(state, kept) {
    this.start(state);
    const note = state.rows[state.early];
    if (!kept || !(note && note.type === 'note' && note.noteKind === 'truncated')) return state; // nothing left out
    const run = this.run;
    this.busy = true;
    let got;
    try {
      got = await this.read(run, Infinity, kept.whole ? Infinity : kept.to);
    } catch (err) {
      if (run === this.run) this.busy = false;
      return mergeEarlier(state, null, { status: 'error', error: (err && err.message) || String(err), text: state.rows[state.early] && state.rows[state.early].text });
    }
    if (run !== this.run) return state;
    this.busy = false;
    return this.merged(state, got);
  }

  // Reads pages from this.after until the snapshot's first row and the rows before it are final, past `most`
  // frames (plus a read-ahead of as many once that row is made), or past seq `to`. Returns {done, rows}, or
  // null when a new start made this run stale.
  //
  // The read-ahead is bounded because a card can stay open up to the snapshot's seq: a tool call of the turn
  // still running at the snapshot (its end comes live), or one waiting for a permission answer. Reading on for
  // it could fetch the whole snapshot window (tens of thousands of frames) in one click. Past the bound the
  // rows are shown, the note says a card may not be final yet, and the next click reads on; the frames after
  // the snapshot reach such a card all the same (mergeEarlier), and a continued entry of the snapshot gives it
  // its state at the snapshot's seq when it was updated inside the window.
  async read(run, most, to) {
    let done = false;
    let rows = null;
    const ahead = most; // frames read past `most` once the snapshot's first row is made
    for (let n = 0; !done && (n < most || (this.cut >= 0 && n < most + ahead)) && this.after < to;) {
      const want = Math.min(PAGE, (this.cut >= 0 ? most + ahead : most) - n, to - this.after);
      const page = await this.fetchPage(this.after, want);
      if (run !== this.run) return null;
      const frames = Array.isArray(page && page.frames) ? page.frames : [];
      const resync = ((page && page.notes) || []).find((x) => x && x.method === '_gateway/resync_required');
      if (!frames.length && resync) {
        const p = resync.params || {};
        // The log was trimmed: start over from what it still holds.
        if (p.reason !== 'log_truncated' || !(p.earliestSeq > this.after + 1)) throw new Error(`the log cannot be read (${p.reason || 'resync'})`);
        this.gone = p.earliestSeq;
        this.after = p.earliestSeq - 1;
        this.cut = -1;
        this.folded = initialState();
        continue;
      }
      const res = foldEarlier(this.folded, frames, this.boundary, this.maxSeq, this.cut);
      this.folded = res.state;
      this.cut = res.cut;
      n += res.used;
      if (res.lastSeq !== null) this.after = res.lastSeq;
      else if (typeof page.lastSeq === 'number' && page.lastSeq > this.after) this.after = page.lastSeq;
      if (res.end) {
        done = true;
        rows = res.rows;
      } else if (!frames.length || this.after >= this.maxSeq) {
        done = true;
        rows = this.cut >= 0 ? res.state.rows.slice(0, this.cut) : res.state.rows;
      }
      // Without the snapshot's first row the log was trimmed past it: what it holds is shown already.
      if (done && !res.found && this.gone) rows = [];
    }
    return { done, rows };
  }

  // state with the rows read so far before its snapshot's, and the note that says what is left.
  merged(state, { done, rows }) {
    if (done) return mergeEarlier(state, rows, this.gone ? { status: 'done', text: this.goneText() } : null, this.folded);
    const more = this.cut >= 0
      ? 'Some cards above may not show their final state yet: later messages, not read yet, may change them.'
      : 'Some messages between these and the ones below are not shown yet.';
    const part = this.cut >= 0 ? this.folded.rows.slice(0, this.cut) : this.folded.rows;
    return mergeEarlier(state, part, { status: 'idle', text: this.gone ? `${this.goneText()} ${more}` : more }, this.folded);
  }

  goneText() {
    return `Messages before seq ${this.gone} are no longer kept: the gateway's log of this session starts there.`;
  }

  note(status, error) {
    const row = this.store.state.rows[this.store.state.early];
    this.store.replace(mergeEarlier(this.store.state, null, { status, error, text: row && row.text }));
  }
}
