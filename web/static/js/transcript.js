// The transcript of one session: messages, thoughts, tool-call cards and turn markers, built from ACP session updates
// (live or replayed) or from a snapshot. Agent text is rendered through markdown.js into DOM nodes; never innerHTML.

import { h, clear, icon, hasIcon } from './dom.js';
import { renderMarkdown, renderBlocks, MarkdownStream, safeHref } from './markdown.js';
import { highlightInto, languageOf } from './highlight.js';
import { unifiedDiff } from './diff.js';
import { TerminalView, snapshotTerminals } from './term.js';
import { attachmentChip } from './attachview.js';
import { actorName } from './people.js';

const MAX_IMAGE_B64 = 8 << 20;

const STATUS_LABEL = { pending: 'Pending', in_progress: 'In progress', completed: 'Completed', failed: 'Failed' };
const KIND_LABEL = {
  read: 'Read', edit: 'Edit', delete: 'Delete', move: 'Move', search: 'Search', execute: 'Run', think: 'Think',
  fetch: 'Fetch', switch_mode: 'Switch mode', other: 'Tool',
};
const STOP_LABEL = {
  end_turn: 'Done', cancelled: 'Cancelled', max_tokens: 'Stopped: token limit', max_turn_requests: 'Stopped: request limit',
  refusal: 'The agent refused', error: 'Failed',
};

export function highlight(code, text, lang) {
  if (languageOf(lang)) highlightInto(code, text, lang);
  else code.textContent = text;
}

export function statusLabel(s) {
  return STATUS_LABEL[s] || (s ? String(s) : 'Pending');
}

export function kindIcon(kind) {
  const k = hasIcon(kind) ? kind : 'other';
  return h('span.tool-icon', { title: KIND_LABEL[kind] || 'Tool' }, icon(k));
}

/** Renders an ACP ContentBlock as a DOM node. `markdown` renders text blocks as Markdown. */
export function renderContentBlock(block, markdown = true) {
  if (!block || typeof block !== 'object') return null;
  switch (block.type) {
    case 'text':
      if (!markdown) return h('div.plain-text', String(block.text ?? ''));
      return h('div.md', renderMarkdown(String(block.text ?? ''), document, highlight));
    case 'image': {
      const mime = String(block.mimeType || '').toLowerCase();
      const data = typeof block.data === 'string' ? block.data.replace(/\s+/g, '') : '';
      // Raster images only, inline as data: URLs (the page's CSP allows data: for img only).
      if (/^image\/(png|jpeg|gif|webp)$/.test(mime) && data && data.length <= MAX_IMAGE_B64 && /^[A-Za-z0-9+/]+=*$/.test(data)) {
        return h('img.content-image', { src: `data:${mime};base64,${data}`, alt: 'Image from the agent', loading: 'lazy' });
      }
      return h('div.chip', icon('other'), `Image (${block.mimeType || 'unknown type'})`);
    }
    case 'audio':
      return h('div.chip', icon('other'), `Audio (${block.mimeType || 'unknown type'})`);
    case 'resource_link': {
      const href = safeHref(block.uri);
      const label = block.title || block.name || block.uri || 'resource';
      return h('div.chip.resource-link', icon('read'),
        href ? h('a', { href, target: '_blank', rel: 'noopener noreferrer nofollow' }, label) : h('span', { title: block.uri || '' }, label));
    }
    case 'resource': {
      const r = block.resource || {};
      const body = typeof r.text === 'string' ? h('pre.resource-text', h('code', r.text)) : h('div.muted', r.blob ? 'Binary content' : '');
      return h('div.resource', h('div.resource-uri', icon('read'), r.uri || 'embedded resource'), body);
    }
    default:
      return h('div.chip.muted', `Unsupported content (${String(block.type || 'unknown')})`);
  }
}

// Message text arrives in chunks; the renderer takes what came since the last frame, the thought preview the start.
const PREVIEW_SOURCE = 400;
function appendText(entry, text) {
  const s = String(text ?? '');
  entry.text += s;
  if (entry.kind !== 'user') entry.pending += s; // user text is shown plain, not parsed
  if (entry.head.length < PREVIEW_SOURCE) entry.head += s.slice(0, PREVIEW_SOURCE - entry.head.length);
}

/** Renders a unified diff view for an ACP diff tool content {path, oldText?, newText}. */
export function renderDiff(d) {
  const { hunks, added, removed } = unifiedDiff(d.oldText ?? null, d.newText ?? '');
  const isNew = d.oldText === null || d.oldText === undefined;
  const head = h('div.diff-head',
    h('span.diff-path', String(d.path || '')),
    isNew ? h('span.diff-tag', 'new file') : null,
    h('span.diff-stat', h('span.diff-add', `+${added}`), ' ', h('span.diff-del', `−${removed}`)));
  const table = h('div.diff-body', { role: 'table', 'aria-label': `Diff of ${d.path || 'file'}` });
  if (!hunks.length) table.appendChild(h('div.diff-empty', 'No changes'));
  for (const hk of hunks) {
    table.appendChild(h('div.diff-hunk', { role: 'row' }, h('span.diff-hunk-h', { role: 'cell' }, hk.header)));
    for (const l of hk.lines) {
      const cls = l.op === '+' ? 'diff-line.ins' : l.op === '-' ? 'diff-line.del' : 'diff-line.ctx';
      table.appendChild(h('div.' + cls, { role: 'row' },
        h('span.ln', { role: 'cell' }, l.oldNo !== undefined && l.op !== '+' ? String(l.oldNo) : ''),
        h('span.ln', { role: 'cell' }, l.newNo !== undefined && l.op !== '-' ? String(l.newNo) : ''),
        h('span.op', { role: 'cell', 'aria-label': l.op === '+' ? 'added' : l.op === '-' ? 'removed' : 'unchanged' }, l.op),
        h('span.tx', { role: 'cell' }, l.text)));
    }
  }
  return h('div.diff', head, table);
}

// rawOutput of a tool call, as the text of its terminal when no terminal output streamed (agents without
// `_meta.terminal_output` put a command's output there).
function rawOutputText(tc) {
  const ro = tc.rawOutput;
  if (typeof ro === 'string') return ro;
  if (ro && typeof ro === 'object') {
    const parts = [ro.output, ro.stdout, ro.stderr, ro.formatted_output, ro.aggregated_output].filter((x) => typeof x === 'string');
    if (parts.length) return parts.join('\n');
  }
  return null;
}

function commandOf(tc) {
  const ri = tc.rawInput;
  if (ri && typeof ri.command === 'string') {
    const args = Array.isArray(ri.args) ? ri.args.filter((a) => typeof a === 'string') : [];
    return [ri.command, ...args].join(' '); // terminal/create's shape: {command, args}
  }
  if (ri && Array.isArray(ri.command)) return ri.command.join(' ');
  return null;
}

/**
 * Renders the content list of a tool call (content blocks, diffs, terminals). terminal(id) returns the live
 * TerminalView of a terminal id (the transcript's); without it a terminal shows what the tool call holds.
 */
export function renderToolContent(tc, terminal = null) {
  const wrap = h('div.tool-content');
  const items = Array.isArray(tc.content) ? tc.content : [];
  for (const c of items) {
    if (!c || typeof c !== 'object') continue;
    if (c.type === 'content') wrap.appendChild(renderContentBlock(c.content) || h('span'));
    else if (c.type === 'diff') wrap.appendChild(renderDiff(c));
    else if (c.type === 'terminal') {
      const id = typeof c.terminalId === 'string' ? c.terminalId : '';
      let view = terminal ? terminal(id) : null;
      if (!view) {
        view = new TerminalView(id);
        const meta = tc._meta && tc._meta.terminal_output;
        if (meta && typeof meta.data === 'string') view.write(meta.data);
      }
      view.setCommand(commandOf(tc));
      const raw = rawOutputText(tc);
      if (raw !== null) view.setFallback(raw);
      if (!terminal) view.render();
      wrap.appendChild(view.el);
    }
  }
  return wrap;
}

function renderLocations(locs) {
  if (!Array.isArray(locs) || !locs.length) return null;
  return h('ul.tool-locations', { 'aria-label': 'Locations' },
    locs.filter((l) => l && l.path).map((l) => h('li', h('code', l.line ? `${l.path}:${l.line}` : l.path))));
}

function mergeToolCall(old, upd) {
  const tc = { ...(old || {}) };
  for (const [k, v] of Object.entries(upd || {})) {
    if (k === 'sessionUpdate') continue;
    if (v === undefined) continue;
    if ((k === 'content' || k === 'locations') && v === null) tc[k] = [];
    else if (v === null && (k === 'title' || k === 'kind' || k === 'status')) continue;
    else tc[k] = v;
  }
  return tc;
}

export class Transcript {
  /**
   * root: the scroll container; handlers: {onReviewPermission(permissionId)}.
   */
  constructor(root, handlers = {}) {
    this.root = root;
    this.handlers = handlers;
    this.list = h('div.entries');
    this.root.appendChild(this.list);
    // turnId → who prompted it (`_gateway/turn_started` actor). Kept across a resync: a snapshot names nobody.
    this.turnActors = new Map();
    // A message element → its entry (kind, text, extras, turnId), for the actions on a message (copy, edit).
    this.entryOf = new WeakMap();
    this.reset();
  }

  reset() {
    clear(this.list);
    this.messages = new Map(); // "kind:messageId" → entry
    this.tools = new Map(); // toolCallId → {el, tc, parts…}
    this.terminals = new Map(); // terminalId → TerminalView, kept across re-renders of its card
    this.permToTool = new Map(); // permissionId → toolCallId
    this.turnEnds = new Set();
    this.last = null; // last entry appended (for chunks without messageId)
    this.dirty = new Set();
    this.raf = 0;
  }

  get empty() {
    return this.list.childElementCount === 0;
  }

  nearBottom() {
    const r = this.root;
    return r.scrollHeight - r.scrollTop - r.clientHeight < 80;
  }

  withScroll(fn) {
    const stick = this.nearBottom();
    fn();
    if (stick) this.scrollToEnd();
  }

  scrollToEnd() {
    this.root.scrollTop = this.root.scrollHeight;
  }

  add(el) {
    this.withScroll(() => this.list.appendChild(el));
  }

  // --- updates -------------------------------------------------------------------------------------------------

  /** Applies an ACP SessionUpdate. Unknown variants are ignored. */
  update(u, meta = {}) {
    if (!u || typeof u !== 'object') return;
    switch (u.sessionUpdate) {
      case 'user_message_chunk':
        this.chunk('user', u.messageId, u.content, meta.turnId);
        break;
      case 'agent_message_chunk':
        this.chunk('agent', u.messageId, u.content, meta.turnId);
        break;
      case 'agent_thought_chunk':
        this.chunk('thought', u.messageId, u.content, meta.turnId);
        break;
      case 'tool_call':
        this.toolCall(u, false);
        break;
      case 'tool_call_update':
        this.toolCall(u, true);
        break;
      default:
        break;
    }
  }

  chunk(kind, messageId, block, turnId) {
    let entry = null;
    if (messageId) entry = this.messages.get(kind + ':' + messageId);
    else if (this.last && this.last.kind === kind) entry = this.last;
    if (!entry) {
      entry = this.newMessage(kind, messageId, turnId);
    }
    if (block && block.type === 'text') {
      appendText(entry, block.text);
    } else if (block) {
      entry.extras.push(block);
    }
    this.markDirty(entry);
  }

  newMessage(kind, messageId, turnId) {
    const entry = {
      kind, messageId: messageId || null, turnId: turnId || null, text: '', extras: [], rendered: -1,
      // Owned by renderMessage: the streaming parse and the nodes of its unfinished blocks and of the extras.
      head: '', pending: '', stream: null, openNodes: [], extraNodes: [], extrasShown: 0,
    };
    if (kind === 'thought') {
      entry.body = h('div.md.thought-body');
      entry.preview = h('span.thought-preview');
      entry.el = h('details.entry.thought', { dataset: { messageId: messageId || '' } },
        h('summary', icon('think'), h('span.thought-label', 'Thinking'), entry.preview), entry.body);
    } else if (kind === 'user') {
      entry.body = h('div.msg-body');
      entry.by = h('div.msg-by', { hidden: true });
      entry.el = h('div.entry.msg.msg-user', { dataset: { messageId: messageId || '' } },
        h('div.msg-role.sr-only', 'You'), entry.by, entry.body);
      this.showPrompter(entry);
    } else {
      entry.body = h('div.msg-body.md');
      entry.el = h('div.entry.msg.msg-agent', { dataset: { messageId: messageId || '' } },
        h('div.msg-role.sr-only', 'Agent'), entry.body);
    }
    if (messageId) this.messages.set(kind + ':' + messageId, entry);
    this.entryOf.set(entry.el, entry);
    this.last = entry;
    this.add(entry.el);
    return entry;
  }

  markDirty(entry) {
    this.dirty.add(entry);
    if (!this.raf) this.raf = requestAnimationFrame(() => this.flush());
  }

  /** Renders pending message text now (also called by the rAF). */
  flush() {
    if (this.raf) cancelAnimationFrame(this.raf);
    this.raf = 0;
    if (!this.dirty.size) return;
    const entries = [...this.dirty];
    this.dirty.clear();
    this.withScroll(() => {
      for (const e of entries) this.renderMessage(e);
    });
  }

  renderMessage(e) {
    const key = e.text.length + ':' + e.extras.length;
    if (e.rendered === key) return;
    e.rendered = key;
    if (e.kind === 'user') {
      clear(e.body);
      if (e.text) e.body.appendChild(h('div.plain-text', e.text));
      // The user's attachments: an image as a thumbnail, an embedded file as a chip.
      const chips = h('div.msg-attachments');
      for (const b of e.extras) {
        const chip = attachmentChip(b);
        const n = chip ? null : renderContentBlock(b, false);
        if (chip) chips.appendChild(chip);
        else if (n) e.body.appendChild(n);
      }
      if (chips.firstChild) e.body.appendChild(chips);
      return;
    }
    this.renderStreamed(e);
    if (e.kind === 'thought') {
      const t = e.head.replace(/\s+/g, ' ').trim();
      e.preview.textContent = t.length > 90 ? t.slice(0, 90) + '…' : t;
    }
  }

  // Agent text as Markdown, parsed as it streams: final blocks are rendered once and kept; only the unfinished
  // ones are replaced, so a frame costs what the new text and the last block cost, not the whole message.
  renderStreamed(e) {
    if (!e.stream) e.stream = new MarkdownStream();
    const { done, open } = e.stream.push(e.pending);
    e.pending = '';
    for (const n of e.openNodes) n.remove();
    for (const n of e.extraNodes) n.remove();
    for (const n of renderBlocks(done, document, highlight)) e.body.appendChild(n);
    e.openNodes = renderBlocks(open, document, highlight);
    for (const n of e.openNodes) e.body.appendChild(n);
    if (e.extrasShown !== e.extras.length) {
      e.extraNodes = e.extras.map((b) => renderContentBlock(b, true)).filter(Boolean);
      e.extrasShown = e.extras.length;
    }
    for (const n of e.extraNodes) e.body.appendChild(n);
  }

  toolCall(u, isUpdate) {
    const id = u.toolCallId;
    if (!id) return;
    let t = this.tools.get(id);
    if (!t) {
      t = this.newTool(id);
      if (isUpdate && !u.title) t.tc.title = 'Tool call';
    }
    t.tc = mergeToolCall(t.tc, u);
    this.terminalMeta(t, u._meta);
    if (t.tc.status === 'completed' || t.tc.status === 'failed') delete t.el.dataset.stale;
    this.renderTool(t);
    this.last = null;
  }

  // --- terminals -----------------------------------------------------------------------------------------------

  /** The TerminalView of a terminal id, created on first use (output may come before the card shows it). */
  terminal(id) {
    const key = String(id || '');
    let v = this.terminals.get(key);
    if (!v) {
      v = new TerminalView(key);
      this.terminals.set(key, v);
    }
    return v;
  }

  // The terminal fields of a tool call update's _meta (claude-agent-acp, codex-acp): terminal_info names the
  // terminal, terminal_output carries new output, terminal_exit its end. Each update's data is appended once;
  // a snapshot's merged tool call carries the output so far.
  terminalMeta(t, meta) {
    if (!meta || typeof meta !== 'object') return;
    const idOf = (o) => (o && typeof o.terminal_id === 'string' && o.terminal_id) || t.termId || t.id;
    if (meta.terminal_info && typeof meta.terminal_info === 'object') t.termId = idOf(meta.terminal_info);
    const out = meta.terminal_output;
    if (out && typeof out === 'object' && typeof out.data === 'string') {
      t.termId = idOf(out);
      this.terminal(t.termId).write(out.data);
    }
    const ex = meta.terminal_exit;
    if (ex && typeof ex === 'object') {
      t.termId = idOf(ex);
      this.terminal(t.termId).setExit(ex.exit_code ?? null, ex.signal ?? null);
    }
  }

  /**
   * `_gateway/terminal_output {terminalId, data, truncated?}`: new output of a gateway-served terminal. truncated
   * says output before data was not logged (past the terminal's budget): the pane says so once per gap.
   */
  terminalOutput(terminalId, data, truncated) {
    if (typeof terminalId !== 'string' || !terminalId) return;
    const v = this.terminal(terminalId);
    if (truncated === true && !v.gapMarked) v.write('\r\n[output not kept]\r\n');
    if (truncated === true) v.gapMarked = true;
    if (typeof data === 'string' && data !== '') {
      v.write(data);
      v.gapMarked = false;
    }
  }

  /** `_gateway/terminal_exit {terminalId, exitCode, signal}`. */
  terminalExit(terminalId, exitCode, signal) {
    if (typeof terminalId !== 'string' || !terminalId) return;
    this.terminal(terminalId).setExit(exitCode ?? null, signal ?? null);
  }

  newTool(id) {
    const t = { id, tc: { toolCallId: id }, contentKey: null, locKey: null };
    t.iconSlot = h('span.tool-icon-slot');
    t.title = h('span.tool-title');
    t.kind = h('span.tool-kind');
    t.status = h('span.tool-status', { role: 'status' });
    t.locs = h('div.tool-locs');
    t.content = h('div.tool-content-slot');
    t.perm = h('div.tool-perm');
    t.perm.hidden = true;
    t.el = h('article.entry.tool-card', { dataset: { toolCallId: id } },
      h('header.tool-head', t.iconSlot, h('div.tool-titles', t.title, t.kind), t.status),
      t.locs, t.content, t.perm);
    this.tools.set(id, t);
    this.add(t.el);
    return t;
  }

  renderTool(t) {
    const tc = t.tc;
    const status = tc.status || 'pending';
    const kind = tc.kind || 'other';
    t.el.dataset.status = status;
    t.el.dataset.kind = kind;
    t.el.setAttribute('aria-label', `${KIND_LABEL[kind] || 'Tool'}: ${tc.title || ''} (${statusLabel(status)})`);
    if (t.iconKind !== kind) {
      t.iconKind = kind;
      clear(t.iconSlot).appendChild(kindIcon(kind));
    }
    t.title.textContent = tc.title || 'Tool call';
    t.kind.textContent = KIND_LABEL[kind] || kind;
    clear(t.status);
    if ((status === 'pending' || status === 'in_progress') && t.el.dataset.stale) {
      t.status.appendChild(icon('x'));
      t.status.appendChild(h('span', 'Not finished'));
      t.status.title = `Last reported status: ${statusLabel(status)}; the turn ended`;
      return this.renderToolBody(t);
    }
    t.status.removeAttribute('title');
    if (status === 'in_progress') t.status.appendChild(icon('spinner', 'spin'));
    else if (status === 'completed') t.status.appendChild(icon('check'));
    else if (status === 'failed') t.status.appendChild(icon('x'));
    else t.status.appendChild(icon('clock'));
    t.status.appendChild(h('span', statusLabel(status)));
    return this.renderToolBody(t);
  }

  renderToolBody(t) {
    const tc = t.tc;
    const locKey = JSON.stringify(tc.locations || []);
    if (locKey !== t.locKey) {
      t.locKey = locKey;
      clear(t.locs);
      const l = renderLocations(tc.locations);
      if (l) t.locs.appendChild(l);
    }
    // A terminal named only in _meta (no terminal content item) still gets its pane.
    let content = Array.isArray(tc.content) ? tc.content : [];
    if (t.termId && !content.some((c) => c && c.type === 'terminal' && c.terminalId === t.termId)) {
      content = content.concat([{ type: 'terminal', terminalId: t.termId }]);
    }
    const contentKey = JSON.stringify([content, tc.rawOutput ?? null, tc.rawInput ?? null]);
    if (contentKey !== t.contentKey) {
      t.contentKey = contentKey;
      this.withScroll(() => {
        clear(t.content);
        if (content.length) t.content.appendChild(renderToolContent({ ...tc, content }, (id) => this.terminal(id)));
      });
    }
  }

  // --- permissions ---------------------------------------------------------------------------------------------

  permissionRequested(permissionId, toolCall) {
    const id = toolCall && toolCall.toolCallId;
    if (!id) return;
    this.permToTool.set(permissionId, id);
    let t = this.tools.get(id);
    if (!t) {
      t = this.newTool(id);
      t.tc = mergeToolCall(t.tc, toolCall);
      this.renderTool(t);
    }
    t.el.dataset.permission = 'pending';
    clear(t.perm);
    t.perm.hidden = false;
    t.perm.appendChild(icon('shield'));
    t.perm.appendChild(h('span', 'Waiting for your approval'));
    t.perm.appendChild(h('button.btn.btn-small', {
      type: 'button',
      on: { click: () => this.handlers.onReviewPermission && this.handlers.onReviewPermission(permissionId) },
    }, 'Review'));
  }

  permissionResolved(permissionId, text, allowed) {
    const id = this.permToTool.get(permissionId);
    const t = id && this.tools.get(id);
    if (!t) return;
    t.el.dataset.permission = allowed ? 'allowed' : 'denied';
    clear(t.perm);
    t.perm.hidden = false;
    t.perm.appendChild(icon(allowed ? 'check' : 'x'));
    t.perm.appendChild(h('span', text));
  }

  // --- turns ---------------------------------------------------------------------------------------------------

  /** A turn starts; actor {principal, name} is who prompted it, shown above the user's message. */
  turnStarted(turnId, actor = null) {
    if (turnId && actorName(actor)) {
      this.turnActors.set(turnId, actor);
      for (const e of this.messages.values()) if (e.kind === 'user' && e.turnId === turnId) this.showPrompter(e);
    }
    this.last = null;
    if (this.list.childElementCount) this.add(h('div.turn-sep', { role: 'separator', dataset: { turnId: turnId || '' } }));
  }

  // The prompter of a user message's turn, when a principal is named (never on a gateway without authentication).
  showPrompter(entry) {
    const name = entry.turnId ? actorName(this.turnActors.get(entry.turnId)) : '';
    entry.by.textContent = name ? `Prompted by ${name}` : '';
    entry.by.hidden = !name;
    entry.el.dataset.prompter = name;
  }

  turnEnded(turnId, stopReason, error) {
    const key = turnId || String(Math.random());
    if (this.turnEnds.has(key)) return;
    this.turnEnds.add(key);
    this.flush();
    this.last = null;
    // Tool calls the agent left open can no longer progress: say so, keeping their last reported status.
    for (const t of this.tools.values()) {
      const st = t.tc.status || 'pending';
      if ((st === 'pending' || st === 'in_progress') && !t.el.dataset.stale) {
        t.el.dataset.stale = 'true';
        this.renderTool(t);
      }
    }
    const reason = error ? 'error' : stopReason || 'end_turn';
    const label = STOP_LABEL[reason] || `Stopped: ${reason}`;
    let detail = null;
    if (error) detail = typeof error === 'string' ? error : error.message || JSON.stringify(error);
    this.add(h('div.entry.turn-end', { dataset: { stopReason: reason, turnId: turnId || '' } },
      h('span.turn-end-label', label), detail ? h('span.turn-end-detail', detail) : null));
  }

  /**
   * A gateway diagnostic in the transcript (not agent text): a file the agent wrote through the gateway, or a line
   * it printed on stdout that is not ACP. Rendered as plain text.
   */
  note(kind, text) {
    this.flush();
    this.last = null;
    this.add(h('div.entry.gw-note', { dataset: { kind } }, h('span.gw-note-text', text)));
  }

  /** Renders a snapshot's entries (GET /v1/sessions/{id} → snapshot) from scratch. */
  loadSnapshot(snapshot) {
    this.reset();
    // Gateway-served terminals first: their output streamed before the snapshot and is not in the entries.
    for (const t of snapshotTerminals(snapshot)) {
      const v = this.terminal(t.id);
      v.write(t.truncated ? `[earlier output not kept]\r\n${t.output}` : t.output);
      if (t.exit) v.setExit(t.exit.exitCode, t.exit.signal);
    }
    const entries = (snapshot && Array.isArray(snapshot.entries)) ? snapshot.entries : [];
    for (const e of entries) {
      if (!e || typeof e !== 'object') continue;
      if (e.kind === 'tool_call' && e.toolCall) {
        this.toolCall(e.toolCall, false);
        continue;
      }
      const kind = e.kind === 'user_message' ? 'user' : e.kind === 'agent_thought' ? 'thought' : e.kind === 'agent_message' ? 'agent' : null;
      if (!kind) continue;
      const blocks = Array.isArray(e.content) ? e.content : [];
      const entry = this.newMessage(kind, e.messageId || null, e.turnId);
      for (const b of blocks) {
        if (b && b.type === 'text') appendText(entry, b.text);
        else if (b) entry.extras.push(b);
      }
      this.markDirty(entry);
      this.last = null;
    }
    this.flush();
    this.scrollToEnd();
  }

  /** Text of every entry, for tests and debugging. */
  text() {
    return this.list.textContent;
  }
}
