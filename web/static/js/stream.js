// MarkdownStream: a message's Markdown parsed while it streams in, at a cost per chunk that does not grow with the
// message (the transcript parses on every animation frame while an answer streams).

import { inlineSegment, appendMerged } from './inline.js';
import {
  splitLines, decidedLines, paraEnd, parseBlocks, parseList, isFenceClose, fenceLine, isTableRow, parseRow,
  paragraphsIn, trimEnd, isBlockStart, FENCE, QUOTE, BLANK,
} from './blocks.js';

/**
 * Parses a message while it streams in, so the cost per chunk does not grow with the message: text goes in with
 * push, and only the unfinished end is parsed again. A top-level block is final once the block after it has begun
 * on a line that, with the line after it, is complete: what ends a block is decided by at most those two lines, and
 * the block parser keeps no state across blocks, so no later text can change it. The last block is not parsed
 * whole either: a paragraph keeps its inline segments (inline.js) that no later text can change, and its lines
 * known to stay in it leave the tail; a fence keeps its complete lines, a table its complete rows, a list its
 * finished items, a quote its finished inner blocks. So a block of a megabyte costs per chunk what its end costs.
 */
export class MarkdownStream {
  // depth: how deep in block quotes the text is (a quote's text streams through a stream of its own).
  constructor(depth = 0) {
    this.depth = depth; // Static after construction.
    this.tail = ''; // Owned by the stream: the text of the blocks that may still change (after para's).
    this.col = 0; // the column the tail starts at: inside a line when para.mid
    // The last block when it is a paragraph whose first lines have left the tail: {done, fixed, seam, src, mid,
    // empty}: its nodes (see reopen), its text after its final segments, whether the tail starts inside one of its
    // lines, and whether it has no text yet.
    this.para = null;
    this.cur = null; // the last block when it is a fence, table, list or quote that goes on: {kind, ...}
  }

  /**
   * Appends text; returns {done, open}: the blocks that became final with it, and the blocks after them. The open
   * blocks share arrays with the stream, which the next push changes: render or copy them before pushing again.
   */
  push(text) {
    this.tail += String(text ?? '');
    const done = [];
    for (;;) {
      const open = this.para ? this.pushPara(done) : this.cur ? this[this.cur.kind](done) : this.pushBlocks(done);
      if (open) return { done, open };
    }
  }

  // The tail in lines. A CR at the end may be the first half of a CR LF: it stays in the tail, unread, until the
  // next push; with a line end there the lines would be the same, with one empty line more.
  split(midLine = false) {
    const cr = this.tail.endsWith('\r') ? '\r' : '';
    const tail = cr ? this.tail.slice(0, -1) : this.tail;
    const { lines, offsets } = splitLines(tail, this.col);
    return { cr, tail, lines, offsets, last: lines.length - 1, decided: decidedLines(lines, midLine) };
  }

  // Keeps the tail from line j on.
  keep(t, j) {
    this.tail = t.tail.slice(t.offsets[j]) + t.cr;
    this.col = 0;
  }

  // Goes on with an unclosed fenced code block; its complete lines leave the tail.
  fence(done) {
    const c = this.cur;
    const t = this.split();
    for (let j = 0; j <= t.last; j++) {
      const l = t.lines[j];
      if (isFenceClose(l, c.fence)) {
        const block = { type: 'code', lang: c.lang, text: c.text, closed: true };
        if (j === t.last) {
          this.keep(t, j);
          return [block]; // may still become a line of code
        }
        done.push(block);
        this.keep(t, j + 1);
        this.cur = null;
        return null;
      }
      if (j === t.last) break;
      c.text = c.lines ? c.text + '\n' + fenceLine(l, c.indent) : fenceLine(l, c.indent);
      c.lines++;
    }
    this.keep(t, t.last);
    const end = fenceLine(t.lines[t.last], c.indent) + (t.cr ? '\n' : '');
    return [{ type: 'code', lang: c.lang, text: c.lines ? c.text + '\n' + end : end, closed: false }];
  }

  // Goes on with a table; its complete rows leave the tail.
  table(done) {
    const c = this.cur;
    const t = this.split();
    const rows = reopen(c, c.rows);
    for (let j = 0; j <= t.last; j++) {
      const l = t.lines[j];
      if (!isTableRow(l)) {
        const block = { type: 'table', align: c.align, head: c.head, rows };
        this.keep(t, j);
        if (j === t.last) return [block, ...parseBlocks(t.lines.slice(j), this.depth, null)];
        done.push(block);
        this.cur = null;
        return null;
      }
      rows.push(parseRow(l, c.head.length));
      if (j < t.last) fix(c, rows);
    }
    this.keep(t, t.last);
    return [{ type: 'table', align: c.align, head: c.head, rows }];
  }

  // Goes on with a list; its items that no later line can change leave the tail.
  list(done) {
    const c = this.cur;
    const t = this.split();
    const res = parseList(t.lines, 0, this.depth);
    const items = res.node.items;
    const all = reopen(c, c.items);
    const node = { ...res.node, start: c.start, loose: c.loose || res.node.loose, items: all };
    if (res.next < t.lines.length && t.decided(res.next)) {
      all.push(...items);
      done.push(node);
      this.keep(t, res.next);
      this.cur = null;
      return null;
    }
    let m = 0;
    while (m + 1 < items.length && t.decided(res.starts[m + 1])) {
      all.push(items[m]);
      if (res.blankAfter[m] || paragraphsIn(items[m]) > 1) c.loose = true;
      m++;
    }
    fix(c, all);
    for (let k = m; k < items.length; k++) all.push(items[k]);
    if (m > 0) this.keep(t, res.starts[m]);
    return [node, ...parseBlocks(t.lines.slice(res.next), this.depth, null)];
  }

  // Goes on with a block quote: the text inside it streams through a stream of its own (c.inner), fed the lines
  // known to be in the quote; a last line that may yet turn out not to be is tried and taken back.
  quote(done) {
    const c = this.cur;
    const t = this.split(c.mid);
    let feed = '';
    let lastBlank = c.lastBlank;
    let any = c.any;
    let lazy = null; // the last line's text, when it is in the quote for now only
    let j = 0;
    for (; j <= t.last; j++) {
      const l = t.lines[j];
      let text;
      let cont = false;
      const q = j === 0 && c.mid ? null : QUOTE.exec(l);
      if (j === 0 && c.mid) {
        text = c.dropSpace && l[0] === ' ' ? l.slice(1) : l;
        cont = true;
      } else if (q) text = q[1];
      else if (!BLANK.test(l) && !isBlockStart(l) && any && !lastBlank) {
        if (j === t.last) { lazy = l; j++; break; }
        text = l;
      } else break;
      feed += (cont || !any ? '' : '\n') + text;
      lastBlank = cont ? lastBlank && BLANK.test(text) : BLANK.test(text);
      any = true;
    }
    const end = j; // the first line not in the quote
    const r = c.inner.push(feed);
    const children = reopen(c, c.done);
    children.push(...r.done);
    fix(c, children);
    c.any = any;
    c.lastBlank = lastBlank;
    if (end < t.last) {
      // A complete line that is not in the quote ends it.
      children.push(...r.open);
      done.push({ type: 'blockquote', children });
      this.keep(t, end);
      this.cur = null;
      return null;
    }
    let after = [];
    if (end === t.last) {
      // The last line is not in the quote, for now.
      children.push(...r.open);
      after = parseBlocks(t.lines.slice(end), this.depth, null);
      this.keep(t, t.last);
      c.mid = false;
    } else if (lazy !== null) {
      // Blocks from the try are copied: taking it back changes the arrays the stream reuses.
      const mark = c.inner.snapshot();
      const p = c.inner.push('\n' + lazy);
      for (const b of p.done) children.push(detach(b));
      for (const b of p.open) children.push(detach(b));
      c.inner.restore(mark);
      this.keep(t, t.last);
      c.mid = false;
    } else {
      children.push(...r.open);
      // Every line went in, the last one as far as it has come.
      const l = t.lines[t.last];
      c.dropSpace = t.last === 0 && c.mid ? c.dropSpace && l === '' : /^ {0,3}>$/.test(l);
      this.col = (t.last === 0 ? this.col : 0) + l.length;
      this.tail = t.cr;
      c.mid = true;
    }
    return [{ type: 'blockquote', children }, ...after];
  }

  // What push changes, to take a push back with restore (a quote tries a line that may not be in it).
  snapshot() {
    const snap = { tail: this.tail, col: this.col, para: this.para, cur: this.cur, fields: null, n: 0, last: null, inner: null };
    const o = this.para || this.cur;
    if (o) {
      snap.fields = { ...o };
      const arr = this.para ? o.done : o.rows || o.items || o.done;
      if (arr) { snap.n = arr.length; snap.last = arr[arr.length - 1]; }
      if (o.inner) snap.inner = o.inner.snapshot();
    }
    return snap;
  }

  restore(snap) {
    this.tail = snap.tail;
    this.col = snap.col;
    this.para = snap.para;
    this.cur = snap.cur;
    const o = this.para || this.cur;
    if (!o) return;
    Object.assign(o, snap.fields);
    const arr = this.para ? o.done : o.rows || o.items || o.done;
    if (arr) {
      arr.length = snap.n;
      if (snap.n) arr[snap.n - 1] = snap.last;
    }
    if (o.inner) o.inner.restore(snap.inner);
  }

  // Parses the tail as blocks; returns the open ones, or null when a paragraph was opened to go on with.
  pushBlocks(done) {
    const { lines, offsets } = splitLines(this.tail, this.col);
    const decided = decidedLines(lines, false);
    const starts = [];
    const ends = [];
    const blocks = parseBlocks(lines, this.depth, starts, ends);
    let cut = 0;
    for (let b = blocks.length - 1; b >= 1; b--) {
      if (decided(starts[b])) { cut = b; break; }
    }
    done.push(...blocks.slice(0, cut));
    const last = blocks.length - 1;
    if (last === cut && last >= 0 && decided(starts[last]) && ends[last] === lines.length) {
      // The last block runs to the end: it goes on in a form that keeps what no later text can change.
      const b = blocks[last];
      const j = starts[last];
      let from = j;
      if (b.type === 'paragraph') this.para = { done: [], fixed: 0, seam: null, src: '', mid: false, empty: true };
      else if (b.type === 'code' && !b.closed) {
        const m = FENCE.exec(lines[j]);
        this.cur = { kind: 'fence', fence: m[2], indent: m[1].length, lang: b.lang, text: '', lines: 0 };
        from = j + 1;
      } else if (b.type === 'table') {
        this.cur = { kind: 'table', align: b.align, head: b.head, rows: [], fixed: 0, seam: null };
        from = j + 2;
      } else if (b.type === 'list') this.cur = { kind: 'list', start: b.start, loose: false, items: [], fixed: 0, seam: null };
      else if (b.type === 'blockquote') {
        this.cur = {
          kind: 'quote', inner: new MarkdownStream(this.depth + 1), done: [], fixed: 0, seam: null, any: false,
          lastBlank: false, mid: false, dropSpace: false,
        };
      }
      if (this.para || this.cur) {
        this.tail = this.tail.slice(offsets[from]);
        this.col = 0;
        return null;
      }
    }
    if (cut > 0) this.tail = this.tail.slice(offsets[starts[cut]]);
    return blocks.slice(cut);
  }

  // Goes on with the open paragraph; returns the open blocks, or null when the paragraph ended.
  pushPara(done) {
    const para = this.para;
    const nodes = reopen(para, para.done);
    // A CR at the end may be the first half of a CR LF: it stays in the tail, unread, until the next push.
    const cr = this.tail.endsWith('\r') ? '\r' : '';
    const tail = cr ? this.tail.slice(0, -1) : this.tail;
    const { lines, offsets } = splitLines(tail, this.col);
    const last = lines.length - 1;
    const decided = decidedLines(lines, para.mid);
    const from = para.mid ? 1 : 0;
    const end = Math.max(from, paraEnd(lines, from)); // lines before end go on with the paragraph
    let src = para.src;
    let known = src.length; // how much of src is the paragraph's whatever follows
    let knownLines = 0;
    for (let j = 0; j < end; j++) {
      if (j === 0 && para.mid) src += lines[0];
      else src += (para.empty && j === 0 ? '' : '\n') + lines[j].trimStart();
      if ((j === 0 && para.mid) || decided(j)) { known = src.length; knownLines = j + 1; }
    }
    const text = trimEnd(src);
    if (end < lines.length && decided(end)) {
      // The paragraph ended: all of it is final.
      for (let s = 0; s < text.length;) {
        const seg = inlineSegment(text, s);
        appendMerged(nodes, seg.nodes);
        s = seg.end;
      }
      done.push({ type: 'paragraph', children: nodes });
      this.tail = tail.slice(offsets[end]) + cr;
      this.col = 0;
      this.para = null;
      return null;
    }
    // Segments decided by known text are final; the rest is parsed again next time.
    const stable = Math.min(known, text.length);
    let finalEnd = 0;
    for (let s = 0; s < text.length;) {
      const seg = inlineSegment(text, s);
      appendMerged(nodes, seg.nodes);
      if (s === finalEnd && seg.decidedBy < stable) {
        fix(para, nodes);
        finalEnd = seg.end;
      }
      s = seg.end;
    }
    if (knownLines > 0) {
      if (knownLines - 1 === last) {
        this.col = (last === 0 ? this.col : 0) + lines[last].length;
        this.tail = cr;
        para.mid = true;
      } else {
        this.tail = tail.slice(offsets[knownLines]) + cr;
        this.col = 0;
        para.mid = false;
      }
      para.empty = false;
    }
    para.src = src.slice(finalEnd, known);
    return [{ type: 'paragraph', children: nodes }, ...parseBlocks(lines.slice(end), this.depth, null)];
  }
}

// The array of an open block's paragraph nodes, rows, items or quoted blocks holds its final entries (the first
// v.fixed) and then its open ones, which each push replaces in place: an open block costs no copy of what is final,
// and is valid until the next push.
function reopen(v, arr) {
  arr.length = v.fixed;
  if (v.fixed) arr[v.fixed - 1] = v.seam; // appendMerged may have joined open text to it
  return arr;
}

// The entries of arr so far are final.
function fix(v, arr) {
  v.fixed = arr.length;
  v.seam = arr[arr.length - 1];
}

// A copy of an open block that shares no array a stream reuses.
function detach(b) {
  const c = { ...b };
  if (b.children) c.children = b.type === 'blockquote' ? b.children.map(detach) : b.children.slice();
  if (b.items) c.items = b.items.slice();
  if (b.rows) c.rows = b.rows.slice();
  return c;
}
