// The composer's state: whether it takes a prompt, what its placeholder and Stop button say, and the running
// turn's timer. The open session's part comes from its store; the empty state's (a default agent, a session
// starting) from ctx.

import { acceptsPrompt } from '../status.js';
import { VIEWER_NOTICE } from '../sharing.js';
import { Ticker, fmtElapsed } from '../elapsed.js';
import { region, byId } from './region.js';

// The elements it draws into, by id.
const IDS = { attach: 'attach', cancel: 'cancel-turn', composer: 'composer', input: 'prompt-input', notice: 'composer-notice', send: 'send', transcript: 'transcript', turnElapsed: 'turn-elapsed' };

/**
 * els: notice, input, send, attach, cancel, composer, transcript, turnElapsed. ctx: empty() → {usable,
 * startingAgent, defaultAgent} for the empty state; setCaps(on) the attachment tray; after(startingAgent) what
 * follows a draw (hint, queue). Follows a session's store (bind); redraw() when ctx's answers changed.
 */
export function composerRegion(ctx, els = byId(IDS)) {
  const ticker = new Ticker((ms) => { els.turnElapsed.textContent = `Running ${fmtElapsed(ms)}`; });
  return region((st) => ({
    open: !!st.detail, status: st.status, running: !!st.turn, readOnly: st.readOnly,
    cancelRequested: st.cancelRequested, startedAt: st.turnStartedAt,
  }), (sl) => {
    const empty = sl.open ? null : ctx.empty();
    // Without a session, a prompt starts one with the default agent (quickStart).
    const usable = sl.open ? acceptsPrompt(sl.status) : empty.usable;
    const running = sl.open && sl.running;
    // A viewer may watch, not act: the composer is off and says why (the typed text stays in it).
    const readOnly = sl.open && sl.readOnly && usable;
    els.notice.textContent = readOnly ? VIEWER_NOTICE : '';
    els.notice.hidden = !readOnly;
    els.input.disabled = !usable || readOnly;
    els.send.disabled = !usable || readOnly; // while a turn runs, Send queues the prompt
    ctx.setCaps(usable && !readOnly);
    els.attach.disabled = !usable || readOnly;
    els.cancel.hidden = !running || !usable || readOnly;
    els.cancel.disabled = sl.open && sl.cancelRequested;
    els.cancel.lastChild.textContent = sl.open && sl.cancelRequested ? ' Stopping…' : ' Stop';
    const startingAgent = empty ? empty.startingAgent : null;
    if (startingAgent) els.input.placeholder = `Starting ${startingAgent}…  (Enter queues the prompt for it)`;
    else if (empty) els.input.placeholder = empty.defaultAgent ? `Ask ${empty.defaultAgent}…  (Enter starts a session and sends)` : 'Create or pick a session to start';
    else if (!usable) els.input.placeholder = `This session is ${sl.status}.`;
    else if (running) els.input.placeholder = 'Queue a prompt for when the turn ends…  (Enter to queue)';
    else els.input.placeholder = 'Ask the agent…  (Enter to send, Shift+Enter for a new line)';
    els.composer.dataset.running = String(running);
    els.transcript.dataset.canPrompt = String(sl.open && usable && !readOnly);
    // A turn can run silently for minutes (an agent retrying a model it cannot reach): show that time passes.
    const since = running && usable ? sl.startedAt : null;
    if (since !== null && since !== undefined) {
      ticker.start(since);
      els.turnElapsed.hidden = false;
    } else {
      ticker.stop();
      els.turnElapsed.hidden = true;
    }
    ctx.after(startingAgent);
  });
}
