// The DOM of one transcript row (state.js): a message, a thought, a tool card, a turn separator or end, a gateway
// note. A view is made when its row comes near the viewport and updated when the row changes (rows are immutable,
// so a changed row is a new object); a streamed message renders only what came since its last update.

import { h, clear, icon } from './dom.js';
import { renderBlocks, MarkdownStream } from './markdown.js';
import { highlight, kindIcon, statusLabel, KIND_LABEL, renderContentBlock, renderToolContent, renderLocations } from './content.js';
import { attachmentChip } from './attachview.js';
import { actorName, permissionVerdict } from './people.js';

const PREVIEW_SOURCE = 400; // characters of a thought its one-line preview is taken from

/**
 * ctx: {terminal(id) → TerminalView, onReview(permissionId), meId() → the signed-in principal or '', onEarlier()}.
 * Returns a view {el, update(row, state)}.
 */
export function rowView(row, ctx) {
  switch (row.type) {
    case 'message': return row.kind === 'user' ? new UserView(row) : new AgentView(row);
    case 'tool': return new ToolView(row, ctx);
    case 'sep': return staticView(h('div.turn-sep', { role: 'separator', dataset: { turnId: row.turnId || '' } }));
    case 'end':
      return staticView(h('div.entry.turn-end', { dataset: { stopReason: row.reason, turnId: row.turnId || '' } },
        h('span.turn-end-label', row.label), row.detail ? h('span.turn-end-detail', row.detail) : null));
    case 'note':
      if (row.earlier) return new EarlierNoteView(ctx);
      return staticView(h('div.entry.gw-note', { dataset: { kind: row.noteKind } }, h('span.gw-note-text', row.text)));
    default:
      return staticView(h('div.entry'));
  }
}

// The note where a snapshot's transcript begins, with a button that loads the messages before it (earlier.js).
class EarlierNoteView {
  constructor(ctx) {
    this.row = null;
    this.text = h('span.gw-note-text');
    this.btn = h('button.btn.btn-small.gw-earlier', { type: 'button', on: { click: () => ctx.onEarlier && ctx.onEarlier() } });
    this.error = h('span.gw-earlier-error', { role: 'alert', hidden: true });
    this.el = h('div.entry.gw-note', { dataset: { kind: 'truncated' } }, this.text, ' ', this.btn, this.error);
  }

  update(row) {
    if (row === this.row) return;
    this.row = row;
    const st = row.earlier || { status: 'idle' };
    this.text.textContent = row.text;
    this.el.dataset.status = st.status;
    this.btn.disabled = st.status === 'loading';
    this.btn.hidden = st.status === 'done';
    this.btn.textContent = st.status === 'loading' ? 'Loading earlier messages…' : st.status === 'error' ? 'Retry' : 'Show earlier messages';
    this.error.hidden = st.status !== 'error';
    this.error.textContent = st.status === 'error' ? `Could not load earlier messages: ${st.error || 'unknown error'}` : '';
  }
}

function staticView(el) {
  return { el, update() {} };
}

class UserView {
  constructor(row) {
    this.row = null;
    this.name = null;
    this.body = h('div.msg-body');
    this.by = h('div.msg-by', { hidden: true });
    this.el = h('div.entry.msg.msg-user', { dataset: { messageId: row.messageId || '' } },
      h('div.msg-role.sr-only', 'You'), this.by, this.body);
  }

  update(row, state) {
    // The prompter of the message's turn, when a principal is named (never on a gateway without authentication).
    const name = row.turnId ? actorName(state.actors[row.turnId]) : '';
    if (name !== this.name) {
      this.name = name;
      this.by.textContent = name ? `Prompted by ${name}` : '';
      this.by.hidden = !name;
      this.el.dataset.prompter = name;
    }
    if (row === this.row || (this.row && row.text === this.row.text && row.extras === this.row.extras)) {
      this.row = row;
      return;
    }
    this.row = row;
    clear(this.body);
    if (row.text) this.body.appendChild(h('div.plain-text', row.text));
    // The user's attachments: an image as a thumbnail, an embedded file as a chip.
    const chips = h('div.msg-attachments');
    for (const b of row.extras) {
      const chip = attachmentChip(b);
      const n = chip ? null : renderContentBlock(b, false);
      if (chip) chips.appendChild(chip);
      else if (n) this.body.appendChild(n);
    }
    if (chips.firstChild) this.body.appendChild(chips);
  }
}

// Agent text and thoughts as Markdown, parsed as it streams: final blocks are rendered once and kept; only the
// unfinished ones are replaced, so an update costs what the new text and the last block cost, not the message.
class AgentView {
  constructor(row) {
    this.row = null;
    this.stream = new MarkdownStream();
    this.consumed = 0; // characters of the row's text pushed into the stream
    this.openNodes = [];
    this.extraNodes = [];
    this.extrasShown = null;
    if (row.kind === 'thought') {
      this.body = h('div.md.thought-body');
      this.preview = h('span.thought-preview');
      this.el = h('details.entry.thought', { dataset: { messageId: row.messageId || '' } },
        h('summary', icon('think'), h('span.thought-label', 'Thinking'), this.preview), this.body);
    } else {
      this.body = h('div.msg-body.md');
      this.el = h('div.entry.msg.msg-agent', { dataset: { messageId: row.messageId || '' } },
        h('div.msg-role.sr-only', 'Agent'), this.body);
    }
  }

  update(row) {
    if (row === this.row) return;
    this.row = row;
    const { done, open } = this.stream.push(row.text.slice(this.consumed));
    this.consumed = row.text.length;
    for (const n of this.openNodes) n.remove();
    for (const n of this.extraNodes) n.remove();
    for (const n of renderBlocks(done, document, highlight)) this.body.appendChild(n);
    this.openNodes = renderBlocks(open, document, highlight);
    for (const n of this.openNodes) this.body.appendChild(n);
    if (this.extrasShown !== row.extras) {
      this.extraNodes = row.extras.map((b) => renderContentBlock(b, true)).filter(Boolean);
      this.extrasShown = row.extras;
    }
    for (const n of this.extraNodes) this.body.appendChild(n);
    if (this.preview) {
      const t = row.text.slice(0, PREVIEW_SOURCE).replace(/\s+/g, ' ').trim();
      this.preview.textContent = t.length > 90 ? t.slice(0, 90) + '…' : t;
    }
  }
}

class ToolView {
  constructor(row, ctx) {
    this.ctx = ctx;
    this.row = null;
    this.contentKey = null;
    this.locKey = null;
    this.permKey = null;
    this.iconKind = null;
    this.iconSlot = h('span.tool-icon-slot');
    this.title = h('span.tool-title');
    this.kind = h('span.tool-kind');
    this.status = h('span.tool-status', { role: 'status' });
    this.locs = h('div.tool-locs');
    this.content = h('div.tool-content-slot');
    this.perm = h('div.tool-perm');
    this.perm.hidden = true;
    this.el = h('article.entry.tool-card', { dataset: { toolCallId: row.id } },
      h('header.tool-head', this.iconSlot, h('div.tool-titles', this.title, this.kind), this.status),
      this.locs, this.content, this.perm);
  }

  update(row) {
    this.renderPerm(row); // also when only who the page is signed in as changed
    if (row === this.row) return;
    this.row = row;
    const tc = row.tc;
    const status = tc.status || 'pending';
    const kind = tc.kind || 'other';
    const el = this.el;
    el.dataset.status = status;
    el.dataset.kind = kind;
    if (row.stale) el.dataset.stale = 'true';
    else delete el.dataset.stale;
    el.setAttribute('aria-label', `${KIND_LABEL[kind] || 'Tool'}: ${tc.title || ''} (${statusLabel(status)})`);
    if (this.iconKind !== kind) {
      this.iconKind = kind;
      clear(this.iconSlot).appendChild(kindIcon(kind));
    }
    this.title.textContent = tc.title || 'Tool call';
    this.kind.textContent = KIND_LABEL[kind] || kind;
    clear(this.status);
    if ((status === 'pending' || status === 'in_progress') && row.stale) {
      // The turn ended with the call still open: it can no longer progress.
      this.status.appendChild(icon('x'));
      this.status.appendChild(h('span', 'Not finished'));
      this.status.title = `Last reported status: ${statusLabel(status)}; the turn ended`;
    } else {
      this.status.removeAttribute('title');
      if (status === 'in_progress') this.status.appendChild(icon('spinner', 'spin'));
      else if (status === 'completed') this.status.appendChild(icon('check'));
      else if (status === 'failed') this.status.appendChild(icon('x'));
      else this.status.appendChild(icon('clock'));
      this.status.appendChild(h('span', statusLabel(status)));
    }
    this.renderBody(row);
  }

  renderBody(row) {
    const tc = row.tc;
    const locKey = JSON.stringify(tc.locations || []);
    if (locKey !== this.locKey) {
      this.locKey = locKey;
      clear(this.locs);
      const l = renderLocations(tc.locations);
      if (l) this.locs.appendChild(l);
    }
    // A terminal named only in _meta (no terminal content item) still gets its pane.
    let content = Array.isArray(tc.content) ? tc.content : [];
    if (row.termId && !content.some((c) => c && c.type === 'terminal' && c.terminalId === row.termId)) {
      content = content.concat([{ type: 'terminal', terminalId: row.termId }]);
    }
    const contentKey = JSON.stringify([content, tc.rawOutput ?? null, tc.rawInput ?? null]);
    if (contentKey === this.contentKey) return;
    this.contentKey = contentKey;
    clear(this.content);
    if (content.length) this.content.appendChild(renderToolContent({ ...tc, content }, (id) => this.ctx.terminal(id)));
  }

  renderPerm(row) {
    const p = row.perm;
    const me = p && p.state === 'resolved' ? this.ctx.meId() : '';
    const key = p ? `${p.state}:${p.permissionId}:${me}` : '';
    if (key === this.permKey) return;
    this.permKey = key;
    const el = this.perm;
    clear(el);
    el.hidden = !p;
    if (!p) {
      delete this.el.dataset.permission;
      return;
    }
    if (p.state === 'pending') {
      this.el.dataset.permission = 'pending';
      el.appendChild(icon('shield'));
      el.appendChild(h('span', 'Waiting for your approval'));
      el.appendChild(h('button.btn.btn-small', { type: 'button', on: { click: () => this.ctx.onReview(p.permissionId) } }, 'Review'));
      return;
    }
    const v = permissionVerdict(p.resolution, p.options, me);
    this.el.dataset.permission = v.allowed ? 'allowed' : 'denied';
    el.appendChild(icon(v.allowed ? 'check' : 'x'));
    el.appendChild(h('span', v.text));
  }
}
