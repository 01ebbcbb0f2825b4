// The block structure of the Markdown subset markdown.js renders, parsed into a plain tree (no DOM, so it is
// testable in node), with the helpers MarkdownStream (stream.js) parses a streaming message's end with. Agent text
// is untrusted and can be megabytes, so every pass is linear in it.

import { parseInline, parseWork } from './inline.js';


export const FENCE = /^( {0,3})(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
export const QUOTE = /^ {0,3}> ?(.*)$/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(?:([ \t]+)(.*))?$/;
export const BLANK = /^[ \t]*$/;
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
export function trimEnd(s) {
  let e = s.length;
  while (e > 0 && (s[e - 1] === ' ' || s[e - 1] === '\t')) e--;
  return e === s.length ? s : s.slice(0, e);
}

function indentOf(line) {
  let n = 0;
  while (n < line.length && line[n] === ' ') n++;
  return n;
}

export function isBlockStart(line) {
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
export function splitLines(text, col = 0) {
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


// Whether line j of a streamed text is decided: it and the line after it are complete, or it is the last line or
// the one before it and the last line can only be paragraph text (or, midLine, the continuation of such a line).
export function decidedLines(lines, midLine) {
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
export function paraEnd(lines, i) {
  const n = lines.length;
  while (i < n && !BLANK.test(lines[i]) && !isBlockStart(lines[i]) && !(i + 1 < n && isTableStart(lines[i], lines[i + 1]))) i++;
  return i;
}

// starts and ends, when given, receive the index of the first line of each block and of the line after it.
export function parseBlocks(lines, depth, starts, ends = null) {
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

export function isFenceClose(line, fence) {
  const t = line.trim();
  return indentOf(line) < 4 && t.length >= fence.length && t[0] === fence[0] && /^(`+|~+)$/.test(t) && t.startsWith(fence);
}

// A line of a fenced block, less up to the fence's own indent.
export function fenceLine(line, indent) {
  let k = 0;
  while (k < indent && line[k] === ' ') k++;
  return line.slice(k);
}

export function isTableRow(line) {
  return !BLANK.test(line) && line.indexOf('|') >= 0 && !FENCE.test(line);
}

export function parseRow(line, ncols) {
  const cells = splitRow(line);
  const row = [];
  for (let k = 0; k < ncols; k++) row.push(parseInline(cells[k] || ''));
  return row;
}

export function paragraphsIn(item) {
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

export function parseList(lines, start, depth) {
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
