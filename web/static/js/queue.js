// Prompts a person sent while their session could not take them (it was starting, or a turn was running): they
// wait here, in order, until the session can, so nothing typed is lost. Pure (no DOM), so node tests it.

// The target of prompts typed in the empty state while the session they will go to is still being created.
export const NEW_SESSION = '';

/** An ordered queue of prompts per target (a session id, or NEW_SESSION). */
export class PromptQueue {
  constructor() {
    this.items = []; // {key, target, text, attachments, error}
    this.next = 1;
  }

  /** Queues a prompt at the end; returns it. */
  add(target, text, attachments = []) {
    const item = { key: this.next++, target, text, attachments, error: '' };
    this.items.push(item);
    return item;
  }

  /** The prompts waiting for target, oldest first. */
  of(target) {
    return this.items.filter((x) => x.target === target);
  }

  /** Takes the oldest prompt for target out of the queue (undefined when none waits). */
  take(target) {
    const i = this.items.findIndex((x) => x.target === target);
    return i < 0 ? undefined : this.items.splice(i, 1)[0];
  }

  /** Puts a prompt that could not be sent back in front of the others of its target. */
  putBack(item) {
    const i = this.items.findIndex((x) => x.target === item.target);
    this.items.splice(i < 0 ? this.items.length : i, 0, item);
  }

  remove(key) {
    const i = this.items.findIndex((x) => x.key === key);
    return i < 0 ? undefined : this.items.splice(i, 1)[0];
  }

  /** The session being created now has an id: the prompts that waited for it wait for that session. */
  retarget(from, to) {
    for (const x of this.items) if (x.target === from) x.target = to;
  }
}

/**
 * Whether a session can take the next queued prompt now: its state is loaded and it is neither starting nor
 * running a turn, no prompt of this page is in flight, it is not watched read-only, and the gateway has not just
 * refused one as too early (held until the session's next turn or status frame).
 */
export function canSendQueued(s) {
  return !!s && s.loaded && s.status !== 'starting' && s.status !== 'closed' && s.status !== 'failed' &&
    !s.running && !s.sending && !s.readOnly && !s.held;
}

// The gateway's answers to a prompt that came too early: the queued prompt waits for the next chance.
const TOO_EARLY = new Set(['turn_running', 'session_not_ready']);

/** Whether a refused prompt (an ApiError's code) should go back into the queue rather than fail. */
export function refusedAsTooEarly(code) {
  return TOO_EARLY.has(code);
}

/** What canSendQueued needs to know of an open session (session.js's OpenSession, or its shape). */
export function sendability(cur) {
  return {
    loaded: !!cur.session && cur.replayed, status: cur.status, running: cur.turn.running, sending: cur.sending,
    readOnly: cur.readOnly, held: cur.held,
  };
}
