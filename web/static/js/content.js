// How the transcript renders what agents send: content blocks, diffs, tool call content and terminals, tool kinds
// and statuses. Agent text is rendered through markdown.js into DOM nodes; never innerHTML.

import { h, clear, icon, hasIcon } from './dom.js';
import { renderMarkdown, safeHref } from './markdown.js';
import { highlightInto, languageOf } from './highlight.js';
import { unifiedDiff } from './diff.js';
import { TerminalView } from './term.js';

const MAX_IMAGE_B64 = 8 << 20;

const STATUS_LABEL = { pending: 'Pending', in_progress: 'In progress', completed: 'Completed', failed: 'Failed' };
export const KIND_LABEL = {
  read: 'Read', edit: 'Edit', delete: 'Delete', move: 'Move', search: 'Search', execute: 'Run', think: 'Think',
  fetch: 'Fetch', switch_mode: 'Switch mode', other: 'Tool',
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

export function renderLocations(locs) {
  if (!Array.isArray(locs) || !locs.length) return null;
  return h('ul.tool-locations', { 'aria-label': 'Locations' },
    locs.filter((l) => l && l.path).map((l) => h('li', h('code', l.line ? `${l.path}:${l.line}` : l.path))));
}
