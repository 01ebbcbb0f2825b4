// Actions on a transcript message: Copy (the whole message as its text, Markdown for the agent's), Edit and
// resend (one's own prompt back into the composer; sending makes a new turn, history is never rewritten), and
// Retry on a turn that failed or was cancelled (the same prompt again). The buttons are added to message
// elements as the transcript adds them, so this works whatever renders the transcript.

import { h, icon } from './dom.js';

const RETRYABLE = new Set(['error', 'cancelled']);

/** The text of a message entry ({kind, text, extras}) to copy: its text, then what its other blocks name. */
export function messageText(entry) {
  const parts = [String(entry.text || '')];
  for (const b of entry.extras || []) {
    if (b && b.type === 'resource_link' && b.uri) parts.push(`[${b.name || b.uri}](${b.uri})`);
    else if (b && b.type === 'resource' && b.resource && typeof b.resource.text === 'string') parts.push(b.resource.text);
  }
  return parts.filter((p) => p !== '').join('\n\n');
}

export class MessageActions {
  /**
   * root: the transcript element; entryOf(el): the transcript's entry of a message element (kind, text,
   * extras, turnId) or undefined; isOwn(el): whether a user message was prompted by this person;
   * edit(text, blocks) and resend(text, blocks): the composer's.
   */
  constructor(root, { entryOf, isOwn, edit, resend }) {
    this.root = root;
    this.entryOf = entryOf;
    this.isOwn = isOwn;
    this.edit = edit;
    this.resend = resend;
    root.querySelectorAll('.entry.msg, .entry.turn-end').forEach((el) => this.decorate(el));
    new MutationObserver((records) => {
      for (const r of records) {
        for (const n of r.addedNodes) {
          if (n.nodeType !== 1) continue;
          if (n.matches('.entry.msg, .entry.turn-end')) this.decorate(n);
          else if (n.firstElementChild) n.querySelectorAll('.entry.msg, .entry.turn-end').forEach((el) => this.decorate(el));
        }
      }
    }).observe(root, { childList: true, subtree: true });
  }

  decorate(el) {
    if (el.querySelector(':scope > .msg-actions')) return;
    if (el.classList.contains('turn-end')) {
      if (!RETRYABLE.has(el.dataset.stopReason)) return;
      el.appendChild(h('div.msg-actions.turn-actions',
        h('button.btn.btn-small.turn-retry', { type: 'button', title: 'Send the same prompt again', on: { click: () => this.retry(el) } }, icon('retry'), 'Retry')));
      return;
    }
    const user = el.classList.contains('msg-user');
    el.appendChild(h('div.msg-actions', { role: 'group', 'aria-label': 'Message actions' },
      h('button.icon-btn.msg-copy', { type: 'button', 'aria-label': 'Copy message', title: 'Copy the whole message', on: { click: (ev) => this.copy(el, ev.currentTarget) } }, icon('copy')),
      user ? h('button.icon-btn.msg-edit', { type: 'button', 'aria-label': 'Edit and resend', title: 'Edit and resend: back into the composer, sent as a new turn', on: { click: () => this.editAgain(el) } }, icon('edit')) : null));
  }

  entry(el) {
    const e = this.entryOf(el);
    if (e) return e;
    const body = el.querySelector('.msg-body');
    return { kind: el.classList.contains('msg-user') ? 'user' : 'agent', text: body ? body.innerText : '', extras: [] };
  }

  async copy(el, btn) {
    const text = messageText(this.entry(el));
    let ok = false;
    try {
      await navigator.clipboard.writeText(text);
      ok = true;
    } catch {
      ok = false;
    }
    btn.dataset.copied = ok ? 'true' : 'false';
    btn.title = ok ? 'Copied' : 'Copy failed';
    btn.setAttribute('aria-label', ok ? 'Copied' : 'Copy failed');
  }

  editAgain(el) {
    if (!this.isOwn(el)) return;
    const e = this.entry(el);
    this.edit(String(e.text || ''), (e.extras || []).slice());
  }

  /** The user message of the turn that ended at el: by turn id, else the closest one before it. */
  promptOf(el) {
    const turnId = el.dataset.turnId;
    const users = [...this.root.querySelectorAll('.entry.msg-user')];
    if (turnId) {
      const byTurn = users.filter((u) => { const e = this.entryOf(u); return e && e.turnId === turnId; });
      if (byTurn.length) return byTurn;
    }
    const before = users.filter((u) => u.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING);
    return before.length ? [before[before.length - 1]] : [];
  }

  retry(el) {
    const msgs = this.promptOf(el).map((u) => this.entry(u));
    if (!msgs.length) return;
    const text = msgs.map((e) => String(e.text || '')).join('');
    this.resend(text, msgs.flatMap((e) => e.extras || []));
  }
}
