// The terminal pane of a tool card: a command's output, streaming, with ANSI styles (ansi.js). One pane per
// terminal id, kept by the transcript across re-renders of its card, fed by the tool call's
// `_meta.terminal_output` (claude-agent-acp, codex-acp) or by the gateway's `_gateway/terminal_output` frames.
// Text only ever reaches the DOM as text nodes; colours are classes for the 16-colour palette, and CSSOM
// properties built from numbers for 256-colour and truecolor (not inline style markup, which the CSP forbids).

import { h, clear, icon } from './dom.js';
import { TermBuffer, cssColor } from './ansi.js';

export class TerminalView {
  constructor(terminalId, doc = document) {
    this.id = terminalId;
    this.doc = doc;
    this.buf = new TermBuffer();
    this.nodes = []; // line elements, aligned with buf.lines
    this.shownFrom = 0; // absolute number of nodes[0]
    this.fallback = null; // text shown while no stream data came (rawOutput)
    this.streamed = false; // stream data came: the fallback is no longer used
    this.exit = null;
    this.raf = 0;
    this.label = h('span.terminal-cmd', `Terminal ${terminalId || ''}`.trim());
    this.status = h('span.terminal-status');
    this.copyBtn = h('button.btn.btn-small.terminal-copy', {
      type: 'button', title: 'Copy the output', on: { click: () => this.copy() },
    }, 'Copy');
    this.out = h('pre.terminal-out', { tabindex: '0', 'aria-label': 'Terminal output' });
    this.empty = h('span.terminal-empty', '(no output yet)');
    this.out.appendChild(this.empty);
    this.el = h('div.terminal', { dataset: { terminalId: terminalId || '' }, role: 'group', 'aria-label': `Terminal ${terminalId || ''}`.trim() },
      h('div.terminal-head', icon('execute'), this.label, this.status, this.copyBtn), this.out);
  }

  /** The command line shown in the head ("$ ls -la"). */
  setCommand(cmd) {
    const t = cmd ? `$ ${cmd}` : `Terminal ${this.id || ''}`.trim();
    if (this.label.textContent !== t) this.label.textContent = t;
  }

  /** New output from the stream. */
  write(data) {
    if (typeof data !== 'string' || !data) return;
    if (!this.streamed) {
      this.streamed = true;
      if (this.fallback !== null) { this.fallback = null; this.buf.reset(); }
    }
    this.buf.write(data);
    this.schedule();
  }

  /** Output known only from the tool call's rawOutput: shown until stream data comes, replaced if it changes. */
  setFallback(text) {
    if (this.streamed || typeof text !== 'string' || text === this.fallback) return;
    this.fallback = text;
    this.buf.reset();
    this.buf.write(text);
    this.schedule();
  }

  setExit(exitCode, signal) {
    this.exit = { exitCode, signal };
    clear(this.status);
    const failed = signal || (typeof exitCode === 'number' && exitCode !== 0);
    this.status.dataset.state = failed ? 'failed' : 'ok';
    this.status.textContent = signal ? `killed by ${signal}` : typeof exitCode === 'number' ? `exit ${exitCode}` : 'exited';
  }

  get hasOutput() {
    return this.buf.bytes > 0;
  }

  schedule() {
    if (this.raf) return;
    const win = this.doc.defaultView;
    if (!win) { this.render(); return; }
    this.raf = win.requestAnimationFrame(() => { this.raf = 0; this.render(); });
  }

  /** Brings the DOM up to the buffer: drops scrolled-off lines, redraws the changed ones. */
  render() {
    if (this.raf) {
      this.doc.defaultView.cancelAnimationFrame(this.raf);
      this.raf = 0;
    }
    const b = this.buf;
    const out = this.out;
    const stick = out.scrollHeight - out.scrollTop - out.clientHeight < 24;
    if (this.empty.parentNode) this.empty.remove();
    if (b.dropped < this.shownFrom) { // the buffer was reset
      for (const n of this.nodes) n.remove();
      this.nodes = [];
      this.shownFrom = 0;
    }
    while (this.shownFrom < b.dropped && this.nodes.length) {
      this.nodes.shift().remove();
      this.shownFrom++;
    }
    if (!this.nodes.length) this.shownFrom = b.dropped;
    const from = Math.min(b.takeDirty(), this.shownFrom + this.nodes.length);
    for (let abs = Math.max(from, b.dropped); abs < b.dropped + b.lines.length; abs++) {
      const i = abs - b.dropped;
      const node = renderLine(this.doc, b, i);
      const k = abs - this.shownFrom;
      if (k < this.nodes.length) {
        out.replaceChild(node, this.nodes[k]);
        this.nodes[k] = node;
      } else {
        out.appendChild(node);
        this.nodes.push(node);
      }
    }
    this.el.dataset.lines = String(b.lines.length);
    if (stick) out.scrollTop = out.scrollHeight;
  }

  copy() {
    const text = this.buf.text();
    const done = (label) => {
      this.copyBtn.textContent = label;
      setTimeout(() => { this.copyBtn.textContent = 'Copy'; }, 1500);
    };
    const clip = this.doc.defaultView && this.doc.defaultView.navigator.clipboard;
    if (clip && clip.writeText) clip.writeText(text).then(() => done('Copied'), () => done('Copy failed'));
    else done('Copy failed');
  }
}

/** One line of the buffer as a div of styled spans (text nodes only). */
export function renderLine(doc, buf, i) {
  const line = doc.createElement('div');
  line.className = 'term-line';
  for (const run of buf.runs(i)) {
    const st = run.style;
    if (st === null || isPlain(st)) {
      line.appendChild(doc.createTextNode(run.text));
      continue;
    }
    const span = doc.createElement('span');
    span.className = styleClasses(st).join(' ');
    let fg = st.fg;
    let bg = st.bg;
    if (st.inverse) [fg, bg] = [bg, fg];
    // Palette entries 0–15 follow the theme (classes); 16–255 and truecolor are fixed colours.
    if (fg !== null && !(typeof fg === 'number' && fg < 16)) span.style.setProperty('color', cssColor(fg));
    if (bg !== null && !(typeof bg === 'number' && bg < 16)) span.style.setProperty('background-color', cssColor(bg));
    span.appendChild(doc.createTextNode(run.text));
    line.appendChild(span);
  }
  if (buf.lines[i].cut) line.appendChild(doc.createTextNode(' …'));
  return line;
}

function isPlain(st) {
  return st.fg === null && st.bg === null && !st.bold && !st.dim && !st.italic && !st.underline && !st.strike && !st.inverse;
}

/** The CSS classes of a style (exported for tests). */
export function styleClasses(st) {
  const c = [];
  let fg = st.fg;
  let bg = st.bg;
  if (st.inverse) {
    [fg, bg] = [bg, fg];
    if (fg === null) c.push('ansi-fg-inv');
    if (bg === null) c.push('ansi-bg-inv');
  }
  if (typeof fg === 'number' && fg < 16) c.push(`ansi-fg-${fg}`);
  if (typeof bg === 'number' && bg < 16) c.push(`ansi-bg-${bg}`);
  if (st.bold) c.push('ansi-bold');
  if (st.dim) c.push('ansi-dim');
  if (st.italic) c.push('ansi-italic');
  if (st.underline) c.push('ansi-underline');
  if (st.strike) c.push('ansi-strike');
  return c;
}

/**
 * The terminals of a snapshot (`snapshot.terminals`, the gateway-served ones: the last 64 KiB of each one's
 * output and its exit) as [{id, output, truncated, exit}], malformed items left out, so a pane reloaded or
 * resynced shows what streamed before the snapshot. exit is {exitCode, signal} or null while it runs.
 */
export function snapshotTerminals(snapshot) {
  const list = snapshot && Array.isArray(snapshot.terminals) ? snapshot.terminals : [];
  const out = [];
  for (const t of list) {
    if (!t || typeof t !== 'object' || typeof t.terminalId !== 'string' || !t.terminalId) continue;
    const ex = t.exitStatus && typeof t.exitStatus === 'object' ? t.exitStatus : null;
    out.push({
      id: t.terminalId,
      output: typeof t.output === 'string' ? t.output : '',
      truncated: t.truncated === true,
      exit: ex ? { exitCode: typeof ex.exitCode === 'number' ? ex.exitCode : null, signal: typeof ex.signal === 'string' ? ex.signal : null } : null,
    });
  }
  return out;
}
