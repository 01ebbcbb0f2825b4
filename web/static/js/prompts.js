// Sending what the composer holds: now when the open session can take it, else queued (queue.js) and sent in its
// turn; edit and resend of a sent prompt; Stop. Nothing typed is dropped. It reaches the API and the page through
// the ctx it is given.

import { ApiError, errorText } from './api.js';
import { promptBlocks, itemsOf } from './attach.js';
import { promptErrorText } from './status.js';
import { withLogin, isLoginRequired } from './login.js';
import { isForbidden } from './sharing.js';
import { PromptQueue, NEW_SESSION, canSendQueued, refusedAsTooEarly, sendability } from './queue.js';
import { commandHint } from './slash.js';

const $ = (id) => document.getElementById(id);

/**
 * ctx: api; page, the page's store; cur() the open session (session.js) or null; tray, the attachment tray;
 * starter, the session starter (newsession.js); toast(text, kind, ms); signedOut(); changed() the composer is drawn
 * again.
 */
export class PromptSender {
  constructor(ctx) {
    this.ctx = ctx;
    this.queue = new PromptQueue(); // prompts typed while their session could not take them
    this.input = $('prompt-input');
    this.hint = $('composer-hint');
    this.form = $('composer');
    this.wire();
  }

  /** Forgets what was typed and queued (signing out: it is not left for the next person). */
  reset() {
    this.queue = new PromptQueue();
    this.input.value = '';
  }

  /** The composer's events: Enter sends, Shift+Enter breaks the line, pasted or dropped files attach. */
  wire() {
    const { input, form } = this;
    const { tray } = this.ctx;
    form.addEventListener('submit', (ev) => { ev.preventDefault(); this.sendPrompt(); });
    input.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' && !ev.shiftKey && !ev.altKey && !ev.ctrlKey && !ev.metaKey && !ev.isComposing) {
        ev.preventDefault();
        this.sendPrompt();
      }
    });
    input.addEventListener('input', () => this.updateHint());
    // Paste or drop files into the composer to attach them (when the agent takes any).
    input.addEventListener('paste', (ev) => {
      const files = ev.clipboardData ? [...ev.clipboardData.files] : [];
      if (!files.length || input.disabled) return;
      ev.preventDefault();
      tray.add(files);
    });
    const hasFiles = (ev) => ev.dataTransfer && [...ev.dataTransfer.types].includes('Files');
    form.addEventListener('dragover', (ev) => {
      if (!hasFiles(ev) || input.disabled) return;
      ev.preventDefault();
      form.classList.add('drop-target');
    });
    form.addEventListener('dragleave', () => form.classList.remove('drop-target'));
    form.addEventListener('drop', (ev) => {
      form.classList.remove('drop-target');
      if (!hasFiles(ev) || input.disabled) return;
      ev.preventDefault();
      tray.add([...ev.dataTransfer.files]);
    });
    $('cancel-turn').addEventListener('click', () => this.cancelTurn());
  }

  /** Queues what the composer holds (its text and attachments) for target and empties the composer. */
  queueComposer(target, text) {
    const attached = this.ctx.tray.items.slice();
    this.ctx.tray.discard(attached);
    this.queue.add(target, text, attached);
    this.input.value = '';
    this.updateHint();
  }

  /** Puts every prompt queued for target back into the composer (a session that could not start). */
  restoreQueued(target) {
    const items = [];
    for (let it = this.queue.take(target); it; it = this.queue.take(target)) items.push(it);
    if (!items.length) return;
    this.input.value = [...items.map((x) => x.text), this.input.value].filter((t) => t.trim()).join('\n\n');
    this.ctx.tray.restore(items.flatMap((x) => x.attachments));
    this.updateHint();
  }

  /** Edit: a queued prompt goes back into the composer, before what it holds. */
  editQueued(key) {
    const it = this.queue.remove(key);
    if (!it) return;
    this.input.value = [it.text, this.input.value].filter((t) => t.trim()).join('\n');
    this.ctx.tray.restore(it.attachments);
    this.ctx.changed();
    this.input.focus();
  }

  /** Remove: a queued prompt is dropped, not sent. */
  removeQueued(key) {
    this.queue.remove(key);
    this.ctx.changed();
    this.input.focus();
  }

  /** Retry: a prompt that failed waits in its turn again. */
  retryQueued(it) {
    it.error = '';
    this.ctx.changed();
  }

  /** Sends the open session's oldest queued prompt when the session can take it. */
  drainQueue() {
    const cur = this.ctx.cur();
    if (!cur || cur.disposed || this.ctx.signedOut() || !canSendQueued(sendability(cur))) return;
    const first = this.queue.of(cur.id)[0];
    if (!first || first.error) return;
    this.queue.take(cur.id);
    this.submitPrompt(cur, first.text, first.attachments, first);
  }

  /** The line under the composer: what a slash command written takes, or that a turn runs. */
  updateHint() {
    const cur = this.ctx.cur();
    const v = this.input.value;
    let text = '';
    const picked = cur && /^\/\S+\s/.test(v) ? commandHint(cur.commands, v.slice(1).split(/\s/)[0]) : '';
    if (picked) {
      text = picked; // the list of commands is slash.js's; once one is written, what it takes
    } else if (cur && cur.turn.running) {
      text = cur.turn.cancelRequested ? 'Stopping the turn…' : 'The agent is working. Esc stops it; Enter queues a prompt.';
    }
    this.hint.textContent = text;
  }

  /**
   * Enter or Send: the prompt goes now when the session can take it; otherwise (the session is starting, a turn runs,
   * a prompt is in flight, or others wait before it) it is queued and sent in its turn. Nothing typed is dropped.
   */
  async sendPrompt() {
    const cur = this.ctx.cur();
    const text = this.input.value;
    if (!text.trim() && !this.ctx.tray.items.length) return;
    if (!cur) {
      if (!this.ctx.page.state.defaultAgent && !this.ctx.starter.creating) return;
      this.queueComposer(NEW_SESSION, text);
      if (!this.ctx.starter.creating) this.ctx.starter.quickStart();
      this.ctx.changed();
      return;
    }
    if (!cur.usable || cur.readOnly) return;
    if (this.queue.of(cur.id).length || !canSendQueued(sendability(cur))) {
      this.queueComposer(cur.id, text);
      this.ctx.changed();
      return;
    }
    const attached = this.ctx.tray.items.slice();
    this.input.value = '';
    this.updateHint();
    await this.submitPrompt(cur, text, attached, null);
  }

  /**
   * POST …/prompt. item is the queued prompt being sent (null for one straight from the composer, whose attachments
   * stay in the tray until the gateway took them). A prompt refused as too early (a turn started elsewhere, the
   * session is not ready) is queued to go later; other refusals keep the text where the person can act on it.
   */
  async submitPrompt(cur, text, attached, item) {
    cur.sending = true;
    if (this.ctx.cur() === cur) this.ctx.changed();
    let err = null;
    let res;
    try {
      // With attachments the prompt goes as ACP content blocks.
      // A prompt that re-attaches a detached session may need the agent's login again (a restart forgets logins).
      res = await withLogin(() => (attached.length ? this.ctx.api.promptBlocks(cur.id, promptBlocks(text, attached)) : this.ctx.api.prompt(cur.id, text)));
    } catch (e) {
      err = e;
    }
    cur.sending = false;
    if (!err) {
      if (!item && attached.length) this.ctx.tray.discard(attached);
      if (!cur.turn.running && res && res.turnId && !cur.store.state.ended[res.turnId]) {
        // The turn_started frame normally arrives first; this covers the gap. A fast turn may have ended already.
        cur.store.dispatch({ type: 'prompted', turnId: res.turnId, at: Date.now() });
      }
    } else if (err instanceof ApiError && (refusedAsTooEarly(err.code) || err.status === 401)) {
      // Too early, or signed out meanwhile: it waits in the queue for the next chance (or the next sign-in).
      cur.held = true;
      if (!item) this.ctx.tray.discard(attached);
      const again = item || this.queue.remove(this.queue.add(cur.id, text, attached).key);
      this.queue.putBack(again);
    } else if (item) {
      this.queue.putBack(item);
      if (isForbidden(err)) cur.setReadOnly();
      else {
        item.error = promptErrorText(err).replace(/^Could not send the prompt: /, '');
        this.ctx.toast(promptErrorText(err), 'error', 12000);
      }
    } else {
      // The text goes back into the composer; if the person typed meanwhile (or left), it waits in the queue.
      // A login the person dismissed: the prompt waits in the queue, not sent, with its reason and Retry.
      if (isLoginRequired(err)) this.ctx.tray.discard(attached);
      if (this.ctx.cur() === cur && !this.input.value && !isLoginRequired(err)) this.input.value = text;
      else this.queue.add(cur.id, text, isLoginRequired(err) ? attached : []).error = promptErrorText(err).replace(/^Could not send the prompt: /, '');
      if (isForbidden(err)) {
        cur.setReadOnly();
      } else {
        // A detached session whose agent cannot come back refuses every prompt: say so in the header too.
        if (err instanceof ApiError && err.code === 'session_not_resumable') {
          cur.store.dispatch({ type: 'notResumable', text: promptErrorText(err) });
        }
        this.ctx.toast(promptErrorText(err), 'error', 12000);
      }
    }
    if (this.ctx.cur() === cur) this.ctx.changed();
  }

  /** Edit and resend: a sent prompt goes back into the composer; sending it makes a new turn. */
  editPrompt(text, blocks) {
    const cur = this.ctx.cur();
    if (!cur || !cur.usable || cur.readOnly) return;
    this.input.value = text;
    this.ctx.tray.restore(itemsOf(blocks));
    this.updateHint();
    this.input.focus();
    this.input.setSelectionRange(text.length, text.length);
  }

  /** Retry: the same prompt again, now or (a turn runs, others wait) queued. */
  resendPrompt(text, blocks) {
    const cur = this.ctx.cur();
    if (!cur || !cur.usable || cur.readOnly || (!text.trim() && !blocks.length)) return;
    const items = itemsOf(blocks);
    if (this.queue.of(cur.id).length || !canSendQueued(sendability(cur))) {
      this.queue.add(cur.id, text, items);
      this.ctx.changed();
      return;
    }
    this.submitPrompt(cur, text, items, null);
  }

  async cancelTurn() {
    const cur = this.ctx.cur();
    if (!cur || !cur.turn.running || cur.turn.cancelRequested || cur.readOnly) return;
    cur.store.dispatch({ type: 'cancel', requested: true });
    try {
      await this.ctx.api.cancel(cur.id);
    } catch (err) {
      if (isForbidden(err)) {
        cur.store.dispatch({ type: 'cancel', requested: false });
        cur.setReadOnly();
      } else if (!(err instanceof ApiError && err.code === 'no_turn')) {
        cur.store.dispatch({ type: 'cancel', requested: false });
        this.ctx.toast('Could not cancel: ' + errorText(err), 'error');
      }
    }
    if (this.ctx.cur() === cur) this.ctx.changed();
  }
}
