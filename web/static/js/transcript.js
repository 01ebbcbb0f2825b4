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

export class Transcript {
  /**
   * root: the scroll container; handlers: {onReviewPermission(permissionId), meId() → the signed-in principal}.
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
      if (this.settling) return;
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
    };
  }

  /** Shows state (the store's). fresh: it does not continue the state shown so far (a snapshot): start over. */
  show(state, fresh = false) {
    if (fresh) this.clearRows();
    this.state = state;
    this.schedule();
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
    let win;
    if (rows.length <= ALL_ROWS) {
      win = { first: 0, end: rows.length, before: 0, after: 0 };
    } else {
      const hs = new Array(rows.length);
      for (let i = 0; i < rows.length; i++) hs[i] = this.heights.get(rows[i].key);
      const top = root.scrollTop - this.listOffset();
      win = listWindow(hs, est, top, root.clientHeight, OVERSCAN, this.pinned);
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
    this.measure(shown, gap, est);
  }

  // Measures the rows in the DOM. When rows above the viewport turned out taller or shorter than assumed, the
  // scroll position moves by as much, so what the person reads stays put; a pinned list goes to its end.
  measure(shown, gap, est) {
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
