// A small Markdown subset, parsed into a plain tree (no DOM, so it is testable in node) and then built into DOM
// nodes with createElement/textContent. Agent text never reaches innerHTML.
//
// Blocks: paragraphs, ATX headings, fenced code blocks (``` or ~~~, an unterminated fence runs to the end, which is
// what a streaming message looks like), bullet and ordered lists (nested by indentation), block quotes, thematic
// breaks, GitHub-style tables. Inlines: emphasis and strong (* and _), ~~strikethrough~~, inline code, links and
// autolinks with http(s) URLs only, hard breaks, backslash escapes. Anything else is text. Agent text is untrusted
// and can be megabytes, so every pass is linear in it (inlines: inline.js); MarkdownStream parses a streaming
// message's unfinished end only, also inside a long paragraph.

import { safeHref } from './href.js';
import { parseInline, parseWork, inlineSegment, appendMerged } from './inline.js';

export { safeHref, parseInline, parseWork };

const FENCE = /^( {0,3})(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(?:([ \t]+)(.*))?$/;
const BLANK = /^[ \t]*$/;
// A longer line never heads a table, so a streaming line past this length is known to be paragraph text.
const TABLE_LINE_MAX = 1000;

// col: the column the line starts at (a streamed line may be handled in pieces).
function expandTabs(line, col = 0) {
  if (line.indexOf('\t') < 0) return line;
  let out = '';
  for (const ch of line) {
    if (ch === '\t') out += ' '.repeat(4 - ((col + out.length) % 4));
    else out += ch;
  }
  return out;
}

// Trailing spaces and tabs off, in one pass from the end (a regex would try every run of spaces in a long text).
function trimEnd(s) {
  let e = s.length;
  while (e > 0 && (s[e - 1] === ' ' || s[e - 1] === '\t')) e--;
  return e === s.length ? s : s.slice(0, e);
}

function indentOf(line) {
  let n = 0;
  while (n < line.length && line[n] === ' ') n++;
  return n;
}

function isBlockStart(line) {
  return FENCE.test(line) || HEADING.test(line) || HR.test(line) || QUOTE.test(line) || isListItem(line);
}

function isListItem(line) {
  return ITEM.test(line);
}

/** Parses Markdown text into an array of block nodes. */
export function parse(text) {
  return parseBlocks(splitLines(String(text ?? '')).lines, 0, null);
}

// Lines with CR LF and CR normalised, tabs expanded, and the offset in text where each starts; the first line
// starts at column col.
function splitLines(text, col = 0) {
  parseWork.lines += text.length;
  const lines = [];
  const offsets = [];
  const eol = /\r\n?|\n/g;
  let start = 0;
  for (let m = eol.exec(text); m; m = eol.exec(text)) {
    lines.push(expandTabs(text.slice(start, m.index), start === 0 ? col : 0));
    offsets.push(start);
    start = m.index + m[0].length;
  }
  lines.push(expandTabs(text.slice(start), start === 0 ? col : 0));
  offsets.push(start);
  return { lines, offsets };
}

/**
 * Parses a message while it streams in, so the cost per chunk does not grow with the message: text goes in with
 * push, and only the unfinished end is parsed again. A top-level block is final once the block after it has begun
 * on a line that, with the line after it, is complete: what ends a block is decided by at most those two lines, and
 * the block parser keeps no state across blocks, so no later text can change it. A paragraph still open keeps its
 * inline segments (inline.js) that no later text can change, and its lines that are known to stay in it leave the
 * tail, so a paragraph of a megabyte costs per chunk what its last segments cost.
 */
export class MarkdownStream {
  // depth: how deep in block quotes the text is (a quote's text streams through a stream of its own).
  constructor(depth = 0) {
    this.depth = depth; // Static after construction.
    this.tail = ''; // Owned by the stream: the text of the blocks that may still change (after para's).
    this.col = 0; // the column the tail starts at: inside a line when para.mid
    // The last block when it is a paragraph whose first lines have left the tail: {done, src, mid, empty}: the
    // nodes of its final segments, its text after them, whether the tail starts inside one of its lines, and
    // whether it has no text yet.
    this.para = null;
    this.cur = null; // the last block when it is a fence, table, list or quote that goes on: {kind, ...}
  }

  /**
   * Appends text; returns {done, open}: the blocks that became final with it, and the blocks after them.
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
    let row = null;
    for (let j = 0; j <= t.last; j++) {
      const l = t.lines[j];
      if (!isTableRow(l)) {
        const block = { type: 'table', align: c.align, head: c.head, rows: c.rows.slice() };
        this.keep(t, j);
        if (j === t.last) return [block, ...parseBlocks(t.lines.slice(j), this.depth, null)];
        done.push(block);
        this.cur = null;
        return null;
      }
      if (j === t.last) row = parseRow(l, c.head.length);
      else c.rows.push(parseRow(l, c.head.length));
    }
    this.keep(t, t.last);
    return [{ type: 'table', align: c.align, head: c.head, rows: row ? [...c.rows, row] : c.rows.slice() }];
  }

  // Goes on with a list; its items that no later line can change leave the tail.
  list(done) {
    const c = this.cur;
    const t = this.split();
    const res = parseList(t.lines, 0, this.depth);
    const items = res.node.items;
    const node = () => ({ ...res.node, start: c.start, loose: c.loose || res.node.loose, items: [...c.items, ...items] });
    if (res.next < t.lines.length && t.decided(res.next)) {
      done.push(node());
      this.keep(t, res.next);
      this.cur = null;
      return null;
    }
    const open = [node(), ...parseBlocks(t.lines.slice(res.next), this.depth, null)];
    let m = 0;
    while (m + 1 < items.length && t.decided(res.starts[m + 1])) {
      c.items.push(items[m]);
      if (res.blankAfter[m] || paragraphsIn(items[m]) > 1) c.loose = true;
      m++;
    }
    if (m > 0) this.keep(t, res.starts[m]);
    return open;
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
    c.done.push(...r.done);
    c.any = any;
    c.lastBlank = lastBlank;
    if (end < t.last) {
      // A complete line that is not in the quote ends it.
      done.push({ type: 'blockquote', children: [...c.done, ...r.open] });
      this.keep(t, end);
      this.cur = null;
      return null;
    }
    let children = [...c.done, ...r.open];
    let after = [];
    if (end === t.last) {
      // The last line is not in the quote, for now.
      after = parseBlocks(t.lines.slice(end), this.depth, null);
      this.keep(t, t.last);
      c.mid = false;
    } else if (lazy !== null) {
      const mark = c.inner.snapshot();
      const p = c.inner.push('\n' + lazy);
      children = [...c.done, ...p.done, ...p.open];
      c.inner.restore(mark);
      this.keep(t, t.last);
      c.mid = false;
    } else {
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
      if (b.type === 'paragraph') this.para = { done: [], src: '', mid: false, empty: true };
      else if (b.type === 'code' && !b.closed) {
        const m = FENCE.exec(lines[j]);
        this.cur = { kind: 'fence', fence: m[2], indent: m[1].length, lang: b.lang, text: '', lines: 0 };
        from = j + 1;
      } else if (b.type === 'table') {
        this.cur = { kind: 'table', align: b.align, head: b.head, rows: [] };
        from = j + 2;
      } else if (b.type === 'list') this.cur = { kind: 'list', start: b.start, loose: false, items: [] };
      else if (b.type === 'blockquote') {
        this.cur = { kind: 'quote', inner: new MarkdownStream(this.depth + 1), done: [], any: false, lastBlank: false, mid: false, dropSpace: false };
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
      const children = para.done;
      for (let s = 0; s < text.length;) {
        const seg = inlineSegment(text, s);
        appendMerged(children, seg.nodes);
        s = seg.end;
      }
      done.push({ type: 'paragraph', children });
      this.tail = tail.slice(offsets[end]) + cr;
      this.col = 0;
      this.para = null;
      return null;
    }
    // Segments decided by known text are final; the rest is parsed again next time.
    const stable = Math.min(known, text.length);
    const open = [];
    let finalEnd = 0;
    for (let s = 0; s < text.length;) {
      const seg = inlineSegment(text, s);
      if (s === finalEnd && seg.decidedBy < stable) {
        appendMerged(para.done, seg.nodes);
        finalEnd = seg.end;
      } else appendMerged(open, seg.nodes);
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
    const children = appendMerged(para.done.slice(), open);
    return [{ type: 'paragraph', children }, ...parseBlocks(lines.slice(end), this.depth, null)];
  }
}

// Whether line j of a streamed text is decided: it and the line after it are complete, or it is the last line or
// the one before it and the last line can only be paragraph text (or, midLine, the continuation of such a line).
function decidedLines(lines, midLine) {
  const last = lines.length - 1;
  const plain = (midLine && last === 0) || plainLine(lines[last]);
  return (j) => j + 1 < last || (plain && j <= last);
}

// Whether an unfinished line is paragraph text whatever follows: too long to head a table, and neither blank nor
// anything its start could make a block start or a table's delimiter row.
function plainLine(line) {
  if (line.length <= TABLE_LINE_MAX || BLANK.test(line) || !/[^-*_ \t]/.test(line) || !/[^|:\- \t]/.test(line)) return false;
  const head = line.slice(0, 64);
  return !/^ {0,3}(```|~~~|#)/.test(head) && !QUOTE.test(head) && !ITEM.test(head);
}

// The first line from i on that does not go on with a paragraph.
function paraEnd(lines, i) {
  const n = lines.length;
  while (i < n && !BLANK.test(lines[i]) && !isBlockStart(lines[i]) && !(i + 1 < n && isTableStart(lines[i], lines[i + 1]))) i++;
  return i;
}

// starts and ends, when given, receive the index of the first line of each block and of the line after it.
function parseBlocks(lines, depth, starts, ends = null) {
  const blocks = [];
  let i = 0;
  const n = lines.length;
  while (i < n) {
    if (ends && blocks.length && ends[blocks.length - 1] === undefined) ends[blocks.length - 1] = i;
    const line = lines[i];
    if (BLANK.test(line)) { i++; continue; }
    if (starts) starts[blocks.length] = i;

    let m = FENCE.exec(line);
    if (m) {
      const indent = m[1].length;
      const fence = m[2];
      const lang = m[3] || '';
      const body = [];
      i++;
      let closed = false;
      while (i < n) {
        const l = lines[i];
        if (isFenceClose(l, fence)) {
          i++;
          closed = true;
          break;
        }
        body.push(fenceLine(l, indent));
        i++;
      }
      blocks.push({ type: 'code', lang: lang.toLowerCase(), text: body.join('\n'), closed });
      continue;
    }

    m = HEADING.exec(line);
    if (m) {
      blocks.push({ type: 'heading', level: m[1].length, children: parseInline(m[2] || '') });
      i++;
      continue;
    }

    if (HR.test(line)) {
      blocks.push({ type: 'hr' });
      i++;
      continue;
    }

    if (QUOTE.test(line) && depth < 8) {
      const inner = [];
      while (i < n) {
        const q = QUOTE.exec(lines[i]);
        if (q) { inner.push(q[1]); i++; continue; }
        // Lazy continuation of a paragraph inside the quote.
        if (!BLANK.test(lines[i]) && !isBlockStart(lines[i]) && inner.length && !BLANK.test(inner[inner.length - 1])) {
          inner.push(lines[i]);
          i++;
          continue;
        }
        break;
      }
      blocks.push({ type: 'blockquote', children: parseBlocks(inner, depth + 1, null) });
      continue;
    }

    m = ITEM.exec(line);
    if (m && depth < 8) {
      const res = parseList(lines, i, depth);
      blocks.push(res.node);
      i = res.next;
      continue;
    }

    if (i + 1 < n && isTableStart(line, lines[i + 1])) {
      const res = parseTable(lines, i);
      blocks.push(res.node);
      i = res.next;
      continue;
    }

    // Paragraph: runs until a blank line or the start of another block.
    const end = paraEnd(lines, i + 1);
    const para = lines.slice(i, end);
    i = end;
    blocks.push({ type: 'paragraph', children: parseInline(trimEnd(para.map((l) => l.trimStart()).join('\n'))) });
  }
  if (ends && blocks.length && ends[blocks.length - 1] === undefined) ends[blocks.length - 1] = i;
  return blocks;
}

function isFenceClose(line, fence) {
  const t = line.trim();
  return indentOf(line) < 4 && t.length >= fence.length && t[0] === fence[0] && /^(`+|~+)$/.test(t) && t.startsWith(fence);
}

// A line of a fenced block, less up to the fence's own indent.
function fenceLine(line, indent) {
  let k = 0;
  while (k < indent && line[k] === ' ') k++;
  return line.slice(k);
}

function isTableRow(line) {
  return !BLANK.test(line) && line.indexOf('|') >= 0 && !FENCE.test(line);
}

function parseRow(line, ncols) {
  const cells = splitRow(line);
  const row = [];
  for (let k = 0; k < ncols; k++) row.push(parseInline(cells[k] || ''));
  return row;
}

function paragraphsIn(item) {
  let paras = 0;
  for (const b of item) if (b.type === 'paragraph') paras++;
  return paras;
}

// GitHub-style tables: a header row, a delimiter row (---, :--, --:, :-:), then rows until a blank line.
// Tested on the trimmed line: a trailing \s* beside the cells' own \s* would backtrack quadratically on long spaces.
const TABLE_DELIM = /^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$/;

function isTableDelim(line) {
  return indentOf(line) <= 3 && TABLE_DELIM.test(line.trim());
}

function splitRow(line) {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const cells = [];
  let cur = '';
  let inCode = false;
  for (let k = 0; k < s.length; k++) {
    const c = s[k];
    if (c === '\\' && s[k + 1] === '|') { cur += '|'; k++; continue; }
    if (c === '`') inCode = !inCode;
    if (c === '|' && !inCode) { cells.push(cur.trim()); cur = ''; continue; }
    cur += c;
  }
  cells.push(cur.trim());
  return cells;
}

function isTableStart(line, next) {
  if (line.length > TABLE_LINE_MAX || line.indexOf('|') < 0 || !isTableDelim(next) || next.indexOf('-') < 0) return false;
  if (next.indexOf('|') < 0 && line.trim().indexOf('|') <= 0) return false;
  return splitRow(line).length === splitRow(next).length;
}

function parseTable(lines, start) {
  const head = splitRow(lines[start]);
  const align = splitRow(lines[start + 1]).map((c) => {
    const l = c.startsWith(':');
    const r = c.endsWith(':');
    return l && r ? 'center' : r ? 'right' : l ? 'left' : '';
  });
  const rows = [];
  let i = start + 2;
  while (i < lines.length && isTableRow(lines[i])) {
    rows.push(parseRow(lines[i], head.length));
    i++;
  }
  return { node: { type: 'table', align, head: head.map((c) => parseInline(c)), rows }, next: i };
}

function parseList(lines, start, depth) {
  const first = ITEM.exec(lines[start]);
  const ordered = /\d/.test(first[2]);
  const delim = ordered ? first[2].slice(-1) : first[2];
  const baseIndent = first[1].length;
  const node = { type: 'list', ordered, start: ordered ? parseInt(first[2], 10) : 1, loose: false, items: [] };
  let i = start;
  const n = lines.length;
  let sawBlankBetween = false;
  const starts = []; // first line of each item
  const blankAfter = []; // whether blank lines follow each item
  while (i < n) {
    const m = ITEM.exec(lines[i]);
    if (!m || m[1].length !== baseIndent) break;
    const isOrd = /\d/.test(m[2]);
    if (isOrd !== ordered || (ordered ? m[2].slice(-1) : m[2]) !== delim) break;
    if (sawBlankBetween) node.loose = true;
    starts.push(i);
    const pad = m[3] ? Math.min(m[3].length, 4) : 1;
    const contentIndent = m[1].length + m[2].length + pad;
    const itemLines = [m[4] !== undefined ? (m[3] && m[3].length > 4 ? ' '.repeat(m[3].length - 1) + m[4] : m[4]) : ''];
    i++;
    let blankRun = 0;
    while (i < n) {
      const l = lines[i];
      if (BLANK.test(l)) { blankRun++; itemLines.push(''); i++; continue; }
      const ind = indentOf(l);
      if (ind >= contentIndent) {
        blankRun = 0;
        itemLines.push(l.slice(contentIndent));
        i++;
        continue;
      }
      if (blankRun === 0 && !isBlockStart(l)) {
        // Lazy continuation line of the item's paragraph.
        itemLines.push(l.trimStart());
        i++;
        continue;
      }
      break;
    }
    // Trailing blank lines belong between items, not to this item.
    while (itemLines.length && BLANK.test(itemLines[itemLines.length - 1])) itemLines.pop();
    sawBlankBetween = blankRun > 0;
    blankAfter.push(sawBlankBetween);
    const children = parseBlocks(itemLines, depth + 1, null);
    node.items.push(children);
  }
  // A list whose items hold blank-separated paragraphs is loose too.
  for (const item of node.items) if (paragraphsIn(item) > 1) node.loose = true;
  return { node, next: i, starts, blankAfter };
}

// ---------------------------------------------------------------------------------------------------------------
// DOM building

/**
 * Renders Markdown text into a DocumentFragment of `doc`, using `highlight(codeEl, text, lang)` (optional) to fill
 * code blocks.
 */
export function renderMarkdown(text, doc = document, highlight = null) {
  const frag = doc.createDocumentFragment();
  for (const n of renderBlocks(parse(text), doc, highlight)) frag.appendChild(n);
  return frag;
}

/** Renders top-level blocks (from parse or MarkdownStream) into one DOM node each. */
export function renderBlocks(blocks, doc = document, highlight = null) {
  return blocks.map((b) => renderBlock(b, doc, highlight, false));
}

function renderBlock(b, doc, highlight, tight) {
  switch (b.type) {
    case 'heading': {
      // Agent headings sit inside a message, so they are demoted to keep the page outline sane.
      const el = doc.createElement('h' + Math.min(6, b.level + 2));
      el.className = 'md-h md-h' + b.level;
      appendInlines(el, b.children, doc);
      return el;
    }
    case 'paragraph': {
      if (tight) {
        const frag = doc.createDocumentFragment();
        appendInlines(frag, b.children, doc);
        return frag;
      }
      const el = doc.createElement('p');
      appendInlines(el, b.children, doc);
      return el;
    }
    case 'code': {
      const wrap = doc.createElement('div');
      wrap.className = 'code-block';
      const head = doc.createElement('div');
      head.className = 'code-head';
      const lang = doc.createElement('span');
      lang.className = 'code-lang';
      lang.textContent = b.lang || 'text';
      head.appendChild(lang);
      const copy = doc.createElement('button');
      copy.type = 'button';
      copy.className = 'code-copy';
      copy.textContent = 'Copy';
      copy.setAttribute('aria-label', 'Copy code');
      copy.dataset.copy = '1';
      head.appendChild(copy);
      wrap.appendChild(head);
      const pre = doc.createElement('pre');
      const code = doc.createElement('code');
      if (b.lang) code.dataset.lang = b.lang;
      if (highlight) highlight(code, b.text, b.lang);
      else code.textContent = b.text;
      pre.appendChild(code);
      wrap.appendChild(pre);
      return wrap;
    }
    case 'list': {
      const el = doc.createElement(b.ordered ? 'ol' : 'ul');
      if (b.ordered && b.start !== 1) el.setAttribute('start', String(b.start));
      for (const item of b.items) {
        const li = doc.createElement('li');
        for (const c of item) li.appendChild(renderBlock(c, doc, highlight, !b.loose));
        el.appendChild(li);
      }
      return el;
    }
    case 'blockquote': {
      const el = doc.createElement('blockquote');
      for (const c of b.children) el.appendChild(renderBlock(c, doc, highlight, false));
      return el;
    }
    case 'hr':
      return doc.createElement('hr');
    case 'table': {
      const wrap = doc.createElement('div');
      wrap.className = 'table-wrap';
      const table = doc.createElement('table');
      const thead = doc.createElement('thead');
      const tr = doc.createElement('tr');
      b.head.forEach((cell, k) => {
        const th = doc.createElement('th');
        if (b.align[k]) th.className = 'al-' + b.align[k];
        appendInlines(th, cell, doc);
        tr.appendChild(th);
      });
      thead.appendChild(tr);
      table.appendChild(thead);
      const tbody = doc.createElement('tbody');
      for (const row of b.rows) {
        const r = doc.createElement('tr');
        row.forEach((cell, k) => {
          const td = doc.createElement('td');
          if (b.align[k]) td.className = 'al-' + b.align[k];
          appendInlines(td, cell, doc);
          r.appendChild(td);
        });
        tbody.appendChild(r);
      }
      table.appendChild(tbody);
      wrap.appendChild(table);
      return wrap;
    }
    default:
      return doc.createTextNode('');
  }
}

function appendInlines(parent, nodes, doc) {
  for (const n of nodes) {
    switch (n.type) {
      case 'text':
        parent.appendChild(doc.createTextNode(n.text));
        break;
      case 'code': {
        const el = doc.createElement('code');
        el.className = 'md-code';
        el.textContent = n.text;
        parent.appendChild(el);
        break;
      }
      case 'em':
      case 'strong':
      case 'del': {
        const el = doc.createElement(n.type);
        appendInlines(el, n.children, doc);
        parent.appendChild(el);
        break;
      }
      case 'link': {
        const el = doc.createElement('a');
        el.href = n.href;
        el.target = '_blank';
        el.rel = 'noopener noreferrer nofollow';
        appendInlines(el, n.children, doc);
        parent.appendChild(el);
        break;
      }
      case 'br':
        parent.appendChild(doc.createElement('br'));
        break;
      default:
        break;
    }
  }
}
