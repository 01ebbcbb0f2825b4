// Inline Markdown in one left-to-right pass, linear in the input (agent answers are untrusted and can be large):
// text, code spans, escapes, breaks, links and autolinks become nodes as they are met; runs of * _ ~~ go on a
// delimiter stack and brackets on a bracket stack, and emphasis is resolved from the stack as CommonMark does, with
// an "openers bottom" per delimiter kind so a failed search for an opener is never repeated. Every lookahead either
// consumes what it scans or is memoised (next index of a character, code-span closers by run length).
//
// Emphasis, code spans, links and <autolinks> span at most SPAN_CAP characters from their first to their last
// character, and a long text is parsed in segments of about SEGMENT characters, each cut where a whitespace run
// starts (failing that, before a bracket) and nothing spans it: a segment's nodes are the nodes of that stretch of the whole text, and where it ends
// depends only on the SEGMENT + SPAN_CAP characters after its start, so a streaming paragraph re-parses its
// unfinished end only (MarkdownStream). Where something spans every such place in reach, or there is no whitespace,
// the segment is cut anyway, at the last one or at SEGMENT characters, and what spans the cut stays literal.

import { safeHref } from './href.js';

const PUNCT = /[!-/:-@[-`{-~]/;
const UNICODE_PUNCT = /[\p{P}\p{S}]/u;
const SPACE = /\s/;
const ALNUM = /[\p{L}\p{N}]/u;
const AUTOLINK = /https?:\/\/[^\s<>"'`]+/iy;
const TRAILING = new Set('.,:;!?)]}*_');
// Characters the inline pass looks at; the text between them is copied in one slice.
const SPECIAL = new Set([...'\\\n`*_~[!]<hH'].map((c) => c.charCodeAt(0)));
// Deeper emphasis stays literal: the tree is rendered recursively.
const MAX_NEST = 32;
// Link destinations nest parentheses at most this deep (as commonmark.js does); it bounds the rescans.
const MAX_DEST_PARENS = 32;
const SPAN_CAP = 1024;
const SEGMENT = 2048;
// A segment may end at the first whitespace run past each multiple of CUT_STRIDE characters into it.
const CUT_STRIDE = 64;

/**
 * Characters each pass has read since the module loaded: inline is what the inline parser scanned, lines what the
 * block parser split into lines; and forced, how many segments were cut where something spanned the cut. Tests
 * read it to check that streaming work per chunk does not grow with the message.
 */
export const parseWork = { inline: 0, lines: 0, forced: 0 };

/** Parses inline Markdown in one segment, however long: what parseInline must equal where it need not force a cut. */
export function parseInlineWhole(src) {
  return new InlineParser(String(src ?? '')).run();
}

/** Parses inline Markdown into an array of inline nodes. */
export function parseInline(src) {
  src = String(src ?? '');
  const out = [];
  for (let s = 0; s < src.length;) {
    const seg = inlineSegment(src, s);
    appendMerged(out, seg.nodes);
    s = seg.end;
  }
  return out;
}

/**
 * The segment of src that starts at s: {end, nodes, decidedBy}. Where it ends depends on src up to decidedBy only
 * (Infinity: the segment runs to the end of src, wherever that will be).
 */
export function inlineSegment(src, s) {
  const limit = s + SEGMENT + SPAN_CAP;
  if (limit >= src.length) return { end: src.length, nodes: new InlineParser(src.slice(s)).run(), decidedBy: Infinity };
  const p = new InlineParser(src.slice(s, limit), CUT_STRIDE);
  const all = p.run();
  let cut = null;
  let weak = null;
  let last = null;
  for (const c of p.cands) {
    if (c.pos > SEGMENT) break;
    last = c;
    if (c.covered) continue;
    if (c.weak) weak = c;
    else cut = c;
  }
  cut = cut || weak;
  if (cut) return { end: s + cut.pos, nodes: cut.item.next ? p.collect(p.head.next, cut.item.next) : all, decidedBy: limit };
  // Everything spans a cut or there is no whitespace: cut anyway, between two UTF-16 units of one character never.
  parseWork.forced++;
  let end = last ? last.pos : SEGMENT;
  const c = src.charCodeAt(s + end - 1);
  if (!last && c >= 0xd800 && c <= 0xdbff) end--;
  return { end: s + end, nodes: new InlineParser(src.slice(s, s + end)).run(), decidedBy: limit };
}

/** Appends nodes to out, joining a text node at the seam with the text node before it (into a new node). */
export function appendMerged(out, nodes) {
  let k = 0;
  const last = out[out.length - 1];
  if (last && last.type === 'text' && nodes.length && nodes[0].type === 'text') {
    out[out.length - 1] = { type: 'text', text: last.text + nodes[0].text };
    k = 1;
  }
  for (; k < nodes.length; k++) out.push(nodes[k]);
  return out;
}

function isCutSpace(c) { return c === ' ' || c === '\t' || c === '\n'; }

// Memoised src.indexOf(ch, from) for lookaheads that would otherwise rescan the rest of the input each time.
class NextIndex {
  constructor(src) {
    this.src = src; // Static after construction.
    this.cache = new Map(); // ch → {from, at}
  }

  of(ch, from) {
    const c = this.cache.get(ch);
    if (c && from >= c.from && (c.at < 0 || from <= c.at)) return c.at;
    const at = this.src.indexOf(ch, from);
    this.cache.set(ch, { from, at });
    return at;
  }
}

// Code-span closers: every maximal backtick run, by length, consumed left to right.
class BacktickRuns {
  constructor(src) {
    this.byLen = new Map(); // length → ascending start positions
    this.cursor = new Map(); // length → index of the first run not yet passed
    for (let i = src.indexOf('`'); i >= 0; i = src.indexOf('`', i)) {
      let j = i;
      while (src[j] === '`') j++;
      const len = j - i;
      if (!this.byLen.has(len)) this.byLen.set(len, []);
      this.byLen.get(len).push(i);
      i = j;
    }
  }

  /** The start of the first run of exactly len backticks at or after from, or -1. */
  closer(len, from) {
    const starts = this.byLen.get(len);
    if (!starts) return -1;
    let k = this.cursor.get(len) || 0;
    while (k < starts.length && starts[k] < from) k++;
    this.cursor.set(len, k);
    return k < starts.length ? starts[k] : -1;
  }
}

// How deep the emphasis and links built so far nest, kept off the nodes themselves.
const NESTING = new WeakMap();
function nestingOf(children) {
  let max = 0;
  for (const n of children) max = Math.max(max, NESTING.get(n) || 0);
  return max + 1;
}

function isSpace(c) { return c === undefined || SPACE.test(c); }
function isPunct(c) { return c !== undefined && (PUNCT.test(c) || UNICODE_PUNCT.test(c)); }

class InlineParser {
  // stride > 0: note where the text could be cut (see the top), in cands.
  constructor(src, stride = 0) {
    parseWork.inline += src.length;
    // Static after construction.
    this.src = src;
    this.stride = stride;
    this.next = new NextIndex(src);
    this.ticks = new BacktickRuns(src);
    // The output as a doubly linked list of items {node, prev, next}: emphasis wraps a stretch of it in O(1) each.
    this.head = { node: null, prev: null, next: null };
    this.tail = this.head;
    this.text = ''; // pending plain text, not yet an item
    this.delims = null; // top of the delimiter stack
    this.seq = 0; // position of the next delimiter on the stack
    this.spacesBeforeBreak = 0; // spaces dropped before the line break at the end of the last plain text
    this.brackets = null; // top of the bracket stack
    this.cands = []; // {pos, item, covered}: places to cut, each after an empty marker item
    this.nextCand = stride;
  }

  // A place to cut at pos, unless something found later spans it. Weak: not at whitespace, a last resort.
  mark(pos, weak = false) {
    this.flush();
    this.cands.push({ pos, item: this.append({ type: 'text', text: '' }), covered: false, weak });
    this.nextCand = pos + this.stride;
  }

  // Something runs from `from` to `to`: no cut in between.
  cover(from, to) {
    for (let k = this.cands.length - 1; k >= 0 && this.cands[k].pos > from; k--) {
      if (this.cands[k].pos < to) this.cands[k].covered = true;
    }
  }

  append(node) {
    const item = { node, prev: this.tail, next: null };
    this.tail.next = item;
    this.tail = item;
    return item;
  }

  flush() {
    if (this.text) { this.append({ type: 'text', text: this.text }); this.text = ''; }
  }

  run() {
    const src = this.src;
    let i = 0;
    while (i < src.length) {
      const c = src[i];
      if (c === '\\' && i + 1 < src.length) {
        const nx = src[i + 1];
        if (nx === '\n') { this.flush(); this.append({ type: 'br' }); i += 2; continue; }
        if (PUNCT.test(nx)) { this.text += nx; i += 2; continue; }
      }
      if (c === '\n') {
        if (this.stride && i >= this.nextCand && !isCutSpace(src[i - 1])) this.mark(i);
        i = this.lineBreak(i);
        continue;
      }
      if (c === '`') { i = this.codeSpan(i); continue; }
      if (c === '*' || c === '_' || c === '~') { i = this.delimiterRun(i); continue; }
      if (c === '[' || (c === '!' && src[i + 1] === '[')) { i = this.openBracket(i); continue; }
      if (c === ']') { i = this.closeBracket(i); continue; }
      if (c === '<') {
        const j = this.angleAutolink(i);
        if (j > i) { i = j; continue; }
      }
      if ((c === 'h' || c === 'H') && (i === 0 || !ALNUM.test(src[i - 1]))) {
        const j = this.bareAutolink(i);
        if (j > i) { i = j; continue; }
      }
      // Plain text up to the next character that may start something, in one slice.
      let j = i + 1;
      while (j < src.length && !SPECIAL.has(src.charCodeAt(j))) j++;
      if (this.stride && j > this.nextCand) {
        let p = Math.max(i, this.nextCand, 1);
        while (p < j && !(isCutSpace(src[p]) && !isCutSpace(src[p - 1]))) p++;
        if (p < j) {
          this.text += src.slice(i, p);
          this.mark(p);
          i = p;
          continue;
        }
      }
      let end = j;
      if (src[j] === '\n') {
        // Spaces before a line break are dropped here, counted for lineBreak: the text so far is never rescanned.
        while (end > i && src[end - 1] === ' ') end--;
        this.spacesBeforeBreak = j - end;
      }
      this.text += src.slice(i, end);
      i = j;
    }
    this.flush();
    this.processEmphasis(null);
    return this.collect(this.head.next, null);
  }

  // Two trailing spaces make a hard break; otherwise a soft break. Leading spaces of the next line go.
  lineBreak(i) {
    const hard = this.spacesBeforeBreak >= 2;
    this.spacesBeforeBreak = 0;
    if (hard) { this.flush(); this.append({ type: 'br' }); } else this.text += '\n';
    i++;
    while (this.src[i] === ' ') i++;
    return i;
  }

  codeSpan(i) {
    const src = this.src;
    let j = i;
    while (src[j] === '`') j++;
    const at = this.ticks.closer(j - i, j);
    if (at < 0 || at + (j - i) - i > SPAN_CAP) { this.text += src.slice(i, j); return j; }
    this.cover(i, at);
    let text = src.slice(j, at).replace(/\n/g, ' ');
    if (text.length > 1 && text[0] === ' ' && text[text.length - 1] === ' ' && text.trim() !== '') text = text.slice(1, -1);
    this.flush();
    this.append({ type: 'code', text });
    return at + (j - i);
  }

  // A run of * or _ (any length) or ~~ (exactly two) goes on the delimiter stack as a text item.
  delimiterRun(i) {
    const src = this.src;
    const ch = src[i];
    let j = i;
    while (src[j] === ch) j++;
    const run = src.slice(i, j);
    if (ch === '~' && run.length !== 2) { this.text += run; return j; }
    const before = src[i - 1];
    const after = src[j];
    const left = !isSpace(after) && (!isPunct(after) || isSpace(before) || isPunct(before));
    const right = !isSpace(before) && (!isPunct(before) || isSpace(after) || isPunct(after));
    let canOpen = left;
    let canClose = right;
    if (ch === '_') {
      canOpen = left && (!right || isPunct(before));
      canClose = right && (!left || isPunct(after));
    }
    this.flush();
    const item = this.append({ type: 'text', text: run });
    if (canOpen || canClose) {
      const d = { seq: this.seq++, pos: i, ch, count: run.length, orig: run.length, canOpen, canClose, item, prev: this.delims, next: null };
      if (this.delims) this.delims.next = d;
      this.delims = d;
    }
    return j;
  }

  removeDelim(d) {
    if (d.prev) d.prev.next = d.next;
    if (d.next) d.next.prev = d.prev;
    else this.delims = d.prev;
  }

  removeItem(item) {
    item.prev.next = item.next;
    if (item.next) item.next.prev = item.prev;
    else this.tail = item.prev;
  }

  // CommonMark's "process emphasis" over the delimiters above `bottom`.
  processEmphasis(bottom) {
    const openersBottom = new Map();
    const floor = bottom ? bottom.seq : -1;
    let closer = null;
    for (let d = this.delims; d && d.seq > floor; d = d.prev) closer = d;
    while (closer) {
      if (!closer.canClose) { closer = closer.next; continue; }
      const key = closer.ch + (closer.canOpen ? '1' : '0') + (closer.orig % 3);
      // Openers at or below stop were already searched for a closer of this kind and failed.
      const stop = Math.max(floor, openersBottom.has(key) ? openersBottom.get(key) : -1);
      let opener = closer.prev;
      let found = false;
      // The span ends where the closing run does: the character after it, which decides whether it closes, is
      // then within SPAN_CAP of the opener too.
      while (opener && opener.seq > stop && closer.pos + closer.orig - opener.pos < SPAN_CAP) {
        const odd = (opener.canClose || closer.canOpen) && closer.orig % 3 !== 0 && (opener.orig + closer.orig) % 3 === 0;
        if (opener.ch === closer.ch && opener.canOpen && (closer.ch === '~' || !odd)) { found = true; break; }
        opener = opener.prev;
      }
      if (!found) {
        openersBottom.set(key, closer.prev ? closer.prev.seq : -1);
        const next = closer.next;
        if (!closer.canOpen) this.removeDelim(closer);
        closer = next;
        continue;
      }
      closer = this.match(opener, closer);
    }
    // What is left above bottom stays literal text.
    while (this.delims && this.delims.seq > floor) this.removeDelim(this.delims);
  }

  // Wraps the items between opener and closer in em / strong / del; returns the closer to continue from.
  match(opener, closer) {
    let use;
    let type;
    if (closer.ch === '~') { use = 2; type = 'del'; }
    else if (opener.count >= 3 && closer.count >= 3) { use = 1; type = 'em'; } // ***x*** is strong(em(x))
    else if (opener.count >= 2 && closer.count >= 2) { use = 2; type = 'strong'; }
    else { use = 1; type = 'em'; }
    this.cover(opener.pos, closer.pos);
    // Delimiters between the two can no longer match anything.
    for (let d = closer.prev; d !== opener; d = d.prev) this.removeDelim(d);
    const children = this.collect(opener.item.next, closer.item);
    const depth = nestingOf(children);
    if (depth > MAX_NEST) {
      // Leave both runs literal rather than build a tree too deep to render.
      this.removeDelim(opener);
      const next = closer.next;
      this.removeDelim(closer);
      return next;
    }
    opener.count -= use;
    closer.count -= use;
    opener.item.node.text = opener.item.node.text.slice(use);
    closer.item.node.text = closer.item.node.text.slice(use);
    const node = { type, children };
    NESTING.set(node, depth);
    const wrapped = { node, prev: opener.item, next: closer.item };
    opener.item.next = wrapped;
    closer.item.prev = wrapped;
    if (opener.count === 0) { this.removeItem(opener.item); this.removeDelim(opener); }
    if (closer.count === 0) {
      const next = closer.next;
      this.removeItem(closer.item);
      this.removeDelim(closer);
      return next;
    }
    return closer;
  }

  // The nodes of the items from `from` up to (not including) `to`, adjacent text merged.
  collect(from, to) {
    const out = [];
    for (let it = from; it && it !== to; it = it.next) {
      const n = it.node;
      if (n.type === 'text') {
        if (!n.text) continue;
        const last = out[out.length - 1];
        if (last && last.type === 'text') last.text += n.text;
        else out.push({ type: 'text', text: n.text });
      } else out.push(n);
    }
    return out;
  }

  openBracket(i) {
    // Before a bracket the text may be cut too, unless a delimiter run there would lose what follows it.
    if (this.stride && i >= this.nextCand && !'*_~\\'.includes(this.src[i - 1])) this.mark(i, true);
    const image = this.src[i] === '!';
    const len = image ? 2 : 1;
    this.flush();
    const item = this.append({ type: 'text', text: this.src.slice(i, i + len) });
    this.brackets = { item, image, active: true, pos: i, labelStart: i + len, delims: this.delims, prev: this.brackets };
    return i + len;
  }

  closeBracket(i) {
    const opener = this.brackets;
    if (!opener) { this.text += ']'; return i + 1; }
    this.brackets = opener.prev;
    let dest = opener.active && this.src[i + 1] === '(' && i - opener.pos < SPAN_CAP ? this.linkDest(i + 1) : null;
    if (dest && dest.end - opener.pos > SPAN_CAP) dest = null;
    if (!dest) { this.text += ']'; return i + 1; }
    this.cover(opener.pos, dest.end);
    this.flush();
    this.processEmphasis(opener.delims);
    const label = this.src.slice(opener.labelStart, i);
    const children = opener.image ? [{ type: 'text', text: label || dest.url }] : this.collect(opener.item.next, null);
    // Drop the label's items; the link (or, for an unsafe URL, its bare children) takes their place.
    opener.item.next = null;
    this.tail = opener.item;
    this.removeItem(opener.item);
    const href = safeHref(dest.url);
    if (href) {
      const link = { type: 'link', href, children };
      NESTING.set(link, nestingOf(children));
      this.append(link);
    }
    else for (const n of children) this.append(n);
    // A link holds no link: earlier brackets can no longer make one. Below an inactive bracket all are inactive
    // already (each pass goes to the bottom), so each bracket is visited once.
    if (!opener.image) {
      for (let b = this.brackets; b; b = b.prev) {
        if (b.image) continue;
        if (!b.active) break;
        b.active = false;
      }
    }
    return dest.end;
  }

  // Parses "(url "title")" at src[i] === '('; returns {url, end} or null.
  linkDest(i) {
    const src = this.src;
    let k = i + 1;
    while (k < src.length && /[ \t\n]/.test(src[k])) k++;
    let url = '';
    if (src[k] === '<') {
      const e = this.next.of('>', k);
      if (e < 0) return null;
      url = src.slice(k + 1, e);
      k = e + 1;
    } else {
      let parens = 0;
      const s = k;
      while (k < src.length) {
        const c = src[k];
        if (c === '\\') { k += 2; continue; }
        if (SPACE.test(c)) break;
        if (c === '(') {
          if (++parens > MAX_DEST_PARENS) return null;
        } else if (c === ')') {
          if (parens === 0) break;
          parens--;
        }
        k++;
      }
      url = src.slice(s, k);
    }
    while (k < src.length && /[ \t\n]/.test(src[k])) k++;
    if (src[k] === '"' || src[k] === "'") {
      const e = this.next.of(src[k], k + 1);
      if (e < 0) return null;
      k = e + 1;
      while (k < src.length && /[ \t\n]/.test(src[k])) k++;
    }
    if (src[k] !== ')') return null;
    return { url: url.replace(/\\([!-/:-@[-`{-~])/g, '$1'), end: k + 1 };
  }

  // <https://…> — returns the index after it, or i when it is not one.
  angleAutolink(i) {
    const e = this.next.of('>', i);
    if (e < 0 || e - i >= SPAN_CAP) return i;
    const inside = this.src.slice(i + 1, e);
    const href = /^https?:\/\/[^\s<>]+$/i.test(inside) ? safeHref(inside) : null;
    if (!href) return i;
    this.flush();
    this.append({ type: 'link', href, children: [{ type: 'text', text: inside }] });
    return e + 1;
  }

  // A bare http(s) URL; trailing punctuation is not part of it (a closing paren is when it balances one).
  bareAutolink(i) {
    AUTOLINK.lastIndex = i;
    const m = AUTOLINK.exec(this.src);
    if (!m) return i;
    let url = m[0];
    let open = 0;
    let close = 0;
    for (const ch of url) { if (ch === '(') open++; else if (ch === ')') close++; }
    while (TRAILING.has(url[url.length - 1])) {
      if (url.endsWith(')') && open >= close) break;
      if (url.endsWith(')')) close--;
      url = url.slice(0, -1);
    }
    const href = safeHref(url);
    if (!href || url.length <= 8) return i;
    this.flush();
    this.append({ type: 'link', href, children: [{ type: 'text', text: url }] });
    return i + url.length;
  }
}
