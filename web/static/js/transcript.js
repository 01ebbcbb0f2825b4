// The transcript of one session, rendered from the rows of its state (state.js, one row view each: rowview.js).
// A long transcript is virtualised: only the rows near the viewport are in the DOM, their measured heights are
// kept and unmeasured rows are assumed to be as tall as the average, so opening and scrolling cost what the
// viewport shows, not the conversation. The newest row stays in view while it streams, unless the person scrolled up.

import { h } from './dom.js';
import { TerminalView } from './term.js';
import { rowView } from './rowview.js';
import { listWindow } from './vlist.js';
import { initialState } from './state.js';

export { highlight, statusLabel, kindIcon, renderContentBlock, renderDiff, renderToolContent } from './content.js';

const ALL_ROWS = 150; // up to this many rows every row is in the DOM (no virtualisation)
const OVERSCAN = 1200; // pixels of rows rendered above and below the viewport
const FIRST_ESTIMATE = 120; // the height assumed for a row before any was measured
const PIN_SLACK = 80; // within this many pixels of the end, the list follows new rows
const ANCHOR_FLUSHES = 60; // renders an anchor is held for at most while the rows around it are measured

// A row's key without the prefix of rows put before a snapshot's (state.js mergeEarlier): the same message or card
// whether a snapshot showed it or a fold of the log before the snapshot.
function lastingKey(key) {
  return key.startsWith('early:') ? key.slice(6) : key;
}

export class Transcript {
  /**
   * root: the scroll container; handlers: {onReviewPermission(permissionId), meId() → the signed-in principal,
   * onEarlier() → load the messages before a snapshot's}.
   */
  constructor(root, handlers = {}) {
    this.root = root;
    this.handlers = handlers;
    this.list = h('div.entries');
    this.root.appendChild(this.list);
    this.state = initialState();
    this.views = new Map(); // row key → its view, for the rows in the DOM
    this.rowOf = new WeakMap(); // a row's element → its row, for the actions on a message (msgactions.js)
    this.heights = new Map(); // row key → measured height, gap included
    this.measured = { sum: 0, n: 0 };
    this.terminals = new Map(); // terminalId → {view: TerminalView, seen: the state's terminal last written}
    this.pinned = true;
    this.placedTop = null; // the scrollTop the list last set itself
    this.raf = 0;
    this.onScroll = () => {
      // A position the list is about to set wins over one the browser set meanwhile (rows cleared for a new
      // state clamp the position before the anchor is placed).
      if (this.settling || (this.anchor && !this.anchor.placed)) return;
      this.pinned = this.nearBottom();
      this.schedule();
    };
    this.root.addEventListener('scroll', this.onScroll, { passive: true });
    // Rows change height without a new state: a thought opened, an image loaded, the width changed.
    this.onResize = () => this.schedule();
    this.list.addEventListener('toggle', this.onResize, true);
    this.list.addEventListener('load', this.onResize, true);
    this.resizes = typeof ResizeObserver === 'function' ? new ResizeObserver(this.onResize) : null;
    if (this.resizes) this.resizes.observe(this.root);
    this.ctx = {
      terminal: (id) => this.terminal(id),
      onReview: (pid) => this.handlers.onReviewPermission && this.handlers.onReviewPermission(pid),
      meId: () => (this.handlers.meId && this.handlers.meId()) || '',
      onEarlier: () => this.handlers.onEarlier && this.handlers.onEarlier(),
    };
  }

  /** Shows state (the store's). fresh: it does not continue the state shown so far (a snapshot): start over. */
  show(state, fresh = false) {
    if (fresh) this.clearRows();
    else if (!this.anchor && this.earlierChanged(state)) this.anchor = this.readingRow();
    this.state = state;
    this.schedule();
  }

  // Whether state puts rows before the snapshot's or changes the note between them (state.js mergeEarlier).
  earlierChanged(state) {
    const note = state.rows[state.early];
    return state.early !== this.state.early || (note && note.earlier && note !== this.state.rows[this.state.early]);
  }

  // The row the person reads (the first in view below the top, notes aside) and where it is in the viewport:
  // rows put above it (mergeEarlier) must not move it. lasting: only a message or a tool card, whose key a state
  // folded again from the log gives it again (reading()).
  readingRow(lasting = false) {
    if (this.pinned) return null;
    const top = this.root.getBoundingClientRect().top;
    let best = null;
    for (const [key, v] of this.views) {
      if (!v.el.isConnected || v.el.classList.contains('gw-note')) continue;
      const row = lasting && this.rowOf.get(v.el);
      if (lasting && !(row && (row.type === 'message' || row.type === 'tool'))) continue;
      const r = v.el.getBoundingClientRect();
      if (r.bottom <= top) continue;
      if (!best || r.top < best.y) best = { key, y: r.top };
    }
    return best ? { key: best.key, offset: best.y - top, placed: false, flushes: 0 } : null;
  }

  /** The row the person reads, to keep in place across a state that starts over (a resync); null at the end. */
  reading() {
    return this.readingRow(true);
  }

  /** Puts the row read (reading()) back where it was in the viewport once the state shown now is drawn. */
  hold(reading) {
    const key = lastingKey(reading.key);
    if (!this.state.rows.some((r) => lastingKey(r.key) === key)) {
      this.scrollToEnd();
      return;
    }
    this.pinned = false;
    this.anchor = { ...reading, placed: false, flushes: 0 };
    this.schedule();
  }

  // The scrollTop that puts the anchor's row where it was, from the heights known (estimates for the rest).
  anchorTop(rows, est) {
    const a = this.anchor;
    a.placed = true;
    const key = lastingKey(a.key);
    let y = 0;
    let i = 0;
    for (; i < rows.length && lastingKey(rows[i].key) !== key; i++) y += this.heights.get(rows[i].key) ?? est;
    if (i === rows.length) return null;
    a.key = rows[i].key; // a row the snapshot showed may be an earlier row now
    return Math.max(0, this.listOffset() + y - a.offset);
  }

  clearRows() {
    for (const v of this.views.values()) v.el.remove();
    this.views.clear();
    this.heights.clear();
    this.measured = { sum: 0, n: 0 };
    for (const t of this.terminals.values()) t.view.el.remove();
    this.terminals.clear();
  }

  /** Stops rendering and removes the transcript from the page. */
  dispose() {
    if (this.raf) cancelAnimationFrame(this.raf);
    this.raf = 0;
    this.root.removeEventListener('scroll', this.onScroll);
    if (this.resizes) this.resizes.disconnect();
    this.clearRows();
    this.list.remove();
  }

  nearBottom() {
    const r = this.root;
    return r.scrollHeight - r.scrollTop - r.clientHeight < PIN_SLACK;
  }

  scrollToEnd() {
    this.pinned = true;
    this.flush();
    this.root.scrollTop = this.root.scrollHeight;
    this.placedTop = this.root.scrollTop;
  }

  schedule() {
    if (!this.raf) this.raf = requestAnimationFrame(() => { this.raf = 0; this.flush(); });
  }

  /** Renders now (also called by the rAF). */
  flush() {
    if (this.raf) cancelAnimationFrame(this.raf);
    this.raf = 0;
    this.syncTerminals();
    // A scroll whose event has not come yet (it comes before the next frame's callbacks) unpins as well: the
    // position moved from where the list put it and is no longer near the end.
    if (this.pinned && this.placedTop !== null && Math.abs(this.root.scrollTop - this.placedTop) > 1 && !this.nearBottom()) this.pinned = false;
    const rows = this.state.rows;
    const root = this.root;
    const gap = this.gap();
    const est = this.measured.n ? this.measured.sum / this.measured.n : FIRST_ESTIMATE;
    // The anchor holds until the rows around it are measured, unless the person scrolls meanwhile.
    if (this.anchor && this.anchor.placed && Math.abs(root.scrollTop - this.placedTop) > 1) this.anchor = null;
    const anchored = this.anchor && !this.anchor.placed ? this.anchorTop(rows, est) : null;
    let win;
    let unmeasured = 0; // rows above the window whose height is the estimate
    if (rows.length <= ALL_ROWS) {
      win = { first: 0, end: rows.length, before: 0, after: 0 };
    } else {
      const hs = new Array(rows.length);
      for (let i = 0; i < rows.length; i++) hs[i] = this.heights.get(rows[i].key);
      const top = (anchored ?? root.scrollTop) - this.listOffset();
      win = listWindow(hs, est, top, root.clientHeight, OVERSCAN, this.pinned);
      for (let i = 0; i < win.first; i++) if (hs[i] === undefined) unmeasured++;
    }
    // Views of rows that left the window go; their terminals stay (this.terminals).
    const keep = new Set();
    for (let i = win.first; i < win.end; i++) keep.add(rows[i].key);
    for (const [key, v] of this.views) {
      if (!keep.has(key)) {
        v.el.remove();
        this.views.delete(key);
      }
    }
    let prev = null;
    const shown = [];
    for (let i = win.first; i < win.end; i++) {
      const row = rows[i];
      let v = this.views.get(row.key);
      if (!v) {
        v = rowView(row, this.ctx);
        this.views.set(row.key, v);
      }
      v.update(row, this.state);
      this.rowOf.set(v.el, row);
      const at = prev ? prev.nextSibling : this.list.firstChild;
      if (at !== v.el) this.list.insertBefore(v.el, at);
      prev = v.el;
      shown.push([row.key, v.el, i]);
    }
    while (prev && prev.nextSibling) prev.nextSibling.remove();
    if (!prev) while (this.list.firstChild) this.list.firstChild.remove();
    this.list.style.paddingTop = win.before ? `${win.before}px` : '';
    this.list.style.paddingBottom = win.after ? `${win.after}px` : '';
    if (anchored !== null) {
      this.settling = true;
      root.scrollTop = anchored;
      this.settling = false;
      this.placedTop = root.scrollTop;
    }
    this.measure(shown, gap, est, unmeasured);
    if (this.anchor) this.holdAnchor();
  }

  // Moves the position by what still separates the anchor's row from where it was (rows above it in view, such as
  // the note, changed height; estimates gave way to measures), until no more rows are measured.
  holdAnchor() {
    const a = this.anchor;
    if (!this.raf || ++a.flushes > ANCHOR_FLUSHES) this.anchor = null;
    const v = this.views.get(a.key);
    if (!v) return;
    const d = v.el.getBoundingClientRect().top - this.root.getBoundingClientRect().top - a.offset;
    if (Math.abs(d) < 0.5) return;
    this.settling = true;
    this.root.scrollTop += d;
    this.settling = false;
    this.placedTop = this.root.scrollTop;
  }

  // Measures the rows in the DOM. When rows above the viewport turned out taller or shorter than assumed, the
  // scroll position moves by as much, so what the person reads stays put; so it does when the estimate the rows
  // above the window are assumed at changes with what was measured. A pinned list goes to its end.
  measure(shown, gap, est, unmeasured) {
    const root = this.root;
    const top = root.scrollTop - this.listOffset();
    let shift = 0;
    let changed = false;
    for (let k = 0; k < shown.length; k++) {
      const [key, el] = shown[k];
      const next = k + 1 < shown.length ? shown[k + 1][1] : null;
      const hgt = next ? next.offsetTop - el.offsetTop : el.offsetHeight + gap;
      const old = this.heights.get(key);
      if (old === hgt) continue;
      if (old === undefined) { this.measured.sum += hgt; this.measured.n++; } else this.measured.sum += hgt - old;
      this.heights.set(key, hgt);
      changed = true;
      if (el.offsetTop - this.list.offsetTop + hgt <= top) shift += hgt - (old ?? est);
    }
    if (changed && unmeasured) {
      // The room above the window is re-estimated now, not a frame later, so nothing jumps in between.
      const moved = unmeasured * (this.measured.sum / this.measured.n - est);
      this.list.style.paddingTop = `${Math.max(0, (parseFloat(this.list.style.paddingTop) || 0) + moved)}px`;
      shift += moved;
    }
    this.settling = true;
    if (this.pinned) root.scrollTop = root.scrollHeight;
    else if (shift) root.scrollTop += shift;
    this.settling = false;
    this.placedTop = root.scrollTop;
    // Heights first measured may leave the viewport short of rows: render again next frame with them.
    if (changed && this.state.rows.length > ALL_ROWS) this.schedule();
  }

  // The list's offset from the top of the scroll container's content.
  listOffset() {
    return this.list.getBoundingClientRect().top - this.root.getBoundingClientRect().top + this.root.scrollTop;
  }

  gap() {
    if (this.gapPx === undefined) this.gapPx = parseFloat(getComputedStyle(this.list).rowGap) || 0;
    return this.gapPx;
  }

  // --- terminals -----------------------------------------------------------------------------------------------

  /** The TerminalView of a terminal id, made when a card first shows it and filled from the state. */
  terminal(id) {
    const key = String(id || '');
    let t = this.terminals.get(key);
    if (!t) {
      t = { view: new TerminalView(key), seen: null };
      this.terminals.set(key, t);
      this.writeTerminal(key, t);
    }
    return t.view;
  }

  syncTerminals() {
    for (const [id, t] of this.terminals) this.writeTerminal(id, t);
  }

  // Writes what the state's terminal gained since the view last saw it (the state keeps its latest output).
  writeTerminal(id, t) {
    const st = this.state.terminals[id];
    if (!st || st === t.seen) return;
    const before = t.seen ? t.seen.total : 0;
    const delta = st.total - before;
    if (delta > 0) t.view.write(delta >= st.data.length ? st.data : st.data.slice(st.data.length - delta));
    if (st.exit && (!t.seen || t.seen.exit !== st.exit)) t.view.setExit(st.exit.exitCode, st.exit.signal);
    t.seen = st;
  }
}
