// Terminal output as the UI shows it: a small ANSI interpreter that turns a byte stream (decoded text) into
// styled lines. Pure: no DOM, so node tests it (e2e/unit.test.mjs); term.js renders its lines.
//
// What it interprets: printable text, `\n` (a new line; LF counts as CR LF, as a tty's output does), `\r` (back
// to the start of the line, so `\r` progress lines overwrite themselves), backspace, tab stops every 8 columns,
// SGR (`ESC [ … m`: bold, dim, italic, underline, strike, inverse, 16/256/truecolor foreground and background,
// reset) and erase-in-line (`ESC [ K`, confined to the current line, which `\r` progress bars rely on).
// Everything else is neutralised: cursor movement, screen clears, scroll regions, title changes (OSC), device
// strings (DCS, APC, PM, SOS), other escapes and C0/C1 controls are consumed and dropped, never shown and never
// acted on. Sequences split across writes are completed by the next write. Scroll-back is bounded to maxLines
// (the oldest lines go first) and a line to maxCols characters.

export const MAX_LINES = 2000;
export const MAX_COLS = 4096;
const MAX_CSI = 64; // a longer parameter string is consumed but ignored

// A style is immutable and shared by the cells it applies to. fg/bg: null (the pane's default), a palette
// index 0–255, or a 24-bit colour 0xRRGGBB tagged as {rgb}.
export const PLAIN = Object.freeze({ fg: null, bg: null, bold: false, dim: false, italic: false, underline: false, strike: false, inverse: false });

function styled(base, patch) {
  return Object.freeze({ ...base, ...patch });
}

const GROUND = 0;
const ESC = 1; // after ESC
const ESC_INTER = 2; // ESC followed by intermediates (ESC ( B …): one final byte ends it
const CSI = 3;
const STRING = 4; // OSC, DCS, SOS, PM, APC: consumed up to BEL or ST
const STRING_ESC = 5; // ESC inside a string: `\` ends it (ST), anything else starts a new escape

export class TermBuffer {
  constructor({ maxLines = MAX_LINES, maxCols = MAX_COLS } = {}) {
    this.maxLines = maxLines;
    this.maxCols = maxCols;
    this.reset();
  }

  reset() {
    this.lines = [newLine()];
    this.dropped = 0; // lines dropped from the top, so line i is absolute line dropped+i
    this.col = 0;
    this.style = PLAIN;
    this.state = GROUND;
    this.csi = '';
    this.bytes = 0; // characters written, escapes included
    this.dirtyFrom = 0; // absolute number of the first line changed since the last takeDirty()
  }

  /** Interprets text (any chunk of the stream). */
  write(text) {
    const s = String(text ?? '');
    this.bytes += s.length;
    const cur = this.dropped + this.lines.length - 1;
    if (cur < this.dirtyFrom) this.dirtyFrom = cur;
    for (const ch of s) this.step(ch);
    this.trim();
  }

  step(ch) {
    const c = ch.codePointAt(0);
    switch (this.state) {
      case GROUND:
        if (c === 0x1b) this.state = ESC;
        else if (c === 0x9b) this.startCsi();
        else if (c === 0x9d || c === 0x90 || c === 0x98 || c === 0x9e || c === 0x9f) this.state = STRING;
        else this.print(ch, c);
        return;
      case ESC:
        this.escape(ch, c);
        return;
      case ESC_INTER:
        if (c >= 0x30 && c <= 0x7e) this.state = GROUND;
        else if (c === 0x1b) this.state = ESC;
        else if (c < 0x20 || c > 0x2f) this.state = GROUND; // malformed: dropped
        return;
      case CSI:
        if (c >= 0x40 && c <= 0x7e) {
          this.state = GROUND;
          this.finishCsi(ch);
        } else if (c === 0x1b) {
          this.state = ESC; // aborted by a new escape
        } else if (c >= 0x20 && c <= 0x3f) {
          if (this.csi.length <= MAX_CSI) this.csi += ch;
        } else if (c === 0x18 || c === 0x1a) {
          this.state = GROUND; // CAN, SUB cancel the sequence
        }
        // Other controls inside a CSI are ignored.
        return;
      case STRING:
        if (c === 0x07 || c === 0x9c) this.state = GROUND;
        else if (c === 0x1b) this.state = STRING_ESC;
        else if (c === 0x18 || c === 0x1a) this.state = GROUND;
        return;
      case STRING_ESC:
        if (c === 0x5c) this.state = GROUND;
        else this.escape(ch, c);
        return;
      default:
        this.state = GROUND;
    }
  }

  escape(ch, c) {
    if (c === 0x5b) this.startCsi(); // [
    else if (c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f) this.state = STRING; // ] P X ^ _
    else if (c === 0x1b) this.state = ESC;
    else if (c >= 0x20 && c <= 0x2f) this.state = ESC_INTER; // ( ) # % …: charset and similar, one more byte
    else this.state = GROUND; // ESC 7, ESC 8, ESC c, ESC M, …: dropped
  }

  startCsi() {
    this.state = CSI;
    this.csi = '';
  }

  finishCsi(final) {
    const p = this.csi;
    if (p.length > MAX_CSI) return;
    if (final === 'm' && /^[0-9;:]*$/.test(p)) this.sgr(p);
    else if (final === 'K' && /^[0-2]?$/.test(p)) this.eraseInLine(Number(p || 0));
    // Everything else (cursor movement, erase in display, modes, …) is neutralised.
  }

  print(ch, c) {
    const line = this.lines[this.lines.length - 1];
    if (c === 0x0a) {
      this.lines.push(newLine());
      this.col = 0;
      // One write may hold any number of lines: trim as it goes, so it never holds more than twice the bound.
      if (this.lines.length >= 2 * this.maxLines) this.trim();
      return;
    }
    if (c === 0x0d) { this.col = 0; return; }
    if (c === 0x08) { this.col = Math.max(0, this.col - 1); return; }
    if (c === 0x09) {
      const to = Math.min(this.maxCols, (Math.floor(this.col / 8) + 1) * 8);
      while (line.chars.length < to) { line.chars.push(' '); line.styles.push(this.style); }
      this.col = to;
      return;
    }
    if (c < 0x20 || c === 0x7f || (c >= 0x80 && c <= 0x9f)) return; // other controls: dropped
    if (this.col >= this.maxCols) { line.cut = true; return; }
    while (line.chars.length < this.col) { line.chars.push(' '); line.styles.push(PLAIN); }
    line.chars[this.col] = ch;
    line.styles[this.col] = this.style;
    this.col++;
  }

  eraseInLine(mode) {
    const line = this.lines[this.lines.length - 1];
    if (mode === 0) {
      line.chars.length = Math.min(line.chars.length, this.col);
      line.styles.length = line.chars.length;
    } else {
      const end = mode === 1 ? Math.min(this.col + 1, line.chars.length) : line.chars.length;
      for (let i = 0; i < end; i++) { line.chars[i] = ' '; line.styles[i] = PLAIN; }
      if (mode === 2) { line.chars.length = 0; line.styles.length = 0; }
    }
  }

  sgr(params) {
    const ps = params === '' ? [''] : params.split(';');
    let st = this.style;
    for (let i = 0; i < ps.length; i++) {
      const sub = ps[i].split(':');
      const n = sub[0] === '' ? 0 : Number(sub[0]);
      if (n === 38 || n === 48) {
        let color;
        if (sub.length > 1) {
          color = extendedColor(sub.slice(1).map(toInt), true);
        } else {
          const rest = ps.slice(i + 1).map(toInt);
          color = extendedColor(rest, false);
          i += color ? color.used : rest.length; // a malformed colour swallows the rest, as xterm does
        }
        if (color) st = styled(st, n === 38 ? { fg: color.value } : { bg: color.value });
        continue;
      }
      st = applySgr(st, n, sub);
    }
    this.style = st;
  }

  // Drops lines past the scroll-back bound.
  trim() {
    const over = this.lines.length - this.maxLines;
    if (over > 0) {
      this.lines.splice(0, over);
      this.dropped += over;
    }
  }

  /** The absolute number of the first line changed since the last call (Infinity: none). */
  takeDirty() {
    const d = Math.max(this.dirtyFrom, this.dropped);
    this.dirtyFrom = Infinity;
    return d;
  }

  /** Line i (relative to the first line kept) as runs of equal style: [{text, style}]. */
  runs(i) {
    const line = this.lines[i];
    const out = [];
    for (let k = 0; k < line.chars.length; k++) {
      const s = line.styles[k];
      const last = out[out.length - 1];
      if (last && last.style === s) last.text += line.chars[k];
      else out.push({ text: line.chars[k], style: s });
    }
    return out;
  }

  lineText(i) {
    return this.lines[i].chars.join('');
  }

  /** The plain text kept (what the copy button copies), lines joined with \n, trailing blank line omitted. */
  text() {
    const all = this.lines.map((l) => l.chars.join(''));
    if (all.length > 1 && all[all.length - 1] === '') all.pop();
    return all.join('\n');
  }
}

function newLine() {
  return { chars: [], styles: [], cut: false };
}

function toInt(s) {
  return s === '' ? NaN : Number(s);
}

function byte(n) {
  return Number.isInteger(n) && n >= 0 && n <= 255;
}

// extendedColor reads `5;n` or `2;r;g;b` (colon form: `5:n`, `2:r:g:b` or `2::r:g:b` with a colour-space id).
function extendedColor(a, colon) {
  if (a[0] === 5) return byte(a[1]) ? { value: a[1], used: 2 } : null;
  if (a[0] === 2) {
    let rgb = a.slice(1, 4);
    if (colon && a.length >= 5) rgb = a.slice(2, 5);
    if (rgb.length === 3 && rgb.every(byte)) return { value: { rgb: (rgb[0] << 16) | (rgb[1] << 8) | rgb[2] }, used: 4 };
  }
  return null;
}

function applySgr(st, n, sub) {
  if (n === 0) return PLAIN;
  if (n === 1) return styled(st, { bold: true });
  if (n === 2) return styled(st, { dim: true });
  if (n === 3) return styled(st, { italic: true });
  if (n === 4) return styled(st, { underline: sub[1] !== '0' });
  if (n === 7) return styled(st, { inverse: true });
  if (n === 9) return styled(st, { strike: true });
  if (n === 21 || n === 22) return styled(st, { bold: false, dim: false });
  if (n === 23) return styled(st, { italic: false });
  if (n === 24) return styled(st, { underline: false });
  if (n === 27) return styled(st, { inverse: false });
  if (n === 29) return styled(st, { strike: false });
  if (n >= 30 && n <= 37) return styled(st, { fg: n - 30 });
  if (n === 39) return styled(st, { fg: null });
  if (n >= 40 && n <= 47) return styled(st, { bg: n - 40 });
  if (n === 49) return styled(st, { bg: null });
  if (n >= 90 && n <= 97) return styled(st, { fg: n - 90 + 8 });
  if (n >= 100 && n <= 107) return styled(st, { bg: n - 100 + 8 });
  return st; // blink, hidden, fonts, …: ignored
}

/** The CSS colour of a palette index 16–255 (the xterm 6×6×6 cube and grey ramp), or of a {rgb} colour. */
export function cssColor(c) {
  let r;
  let g;
  let b;
  if (c && typeof c === 'object') {
    r = (c.rgb >> 16) & 255; g = (c.rgb >> 8) & 255; b = c.rgb & 255;
  } else if (c >= 232) {
    r = g = b = 8 + (c - 232) * 10;
  } else {
    const k = c - 16;
    const lv = (v) => (v === 0 ? 0 : 55 + v * 40);
    r = lv(Math.floor(k / 36)); g = lv(Math.floor(k / 6) % 6); b = lv(k % 6);
  }
  return `rgb(${r}, ${g}, ${b})`;
}
