// One open session: its WebSocket, its store (state.js), its transcript, and the acts on it (answer a permission,
// load earlier rows). It reaches the page only through the ctx it is given: the page decides what is drawn.

import { ApiError, errorText } from './api.js';
import { SessionSocket } from './conn.js';
import { Transcript } from './transcript.js';
import { createStore, fromSnapshot, initialState, keepSession } from './state.js';
import { EarlierLoader } from './earlier.js';
import { acceptsPrompt } from './status.js';
import { permissionVerdict } from './people.js';
import { Elicitations } from './elicit.js';
import { isForbidden } from './sharing.js';

export class OpenSession {
  /**
   * ctx: api; page, the page's store; transcriptEl, composerEl; meId(); toast(text, kind, ms); setConn(state, detail)
   * the connection pill; changed(all = true) what the page draws again (false: the composer only); checkCredential();
   * probeShares(id); review(session, permissionId).
   */
  constructor(id, ctx) {
    this.ctx = ctx;
    this.id = id;
    this.session = null;
    this.disposed = false;
    this.sending = false; // a POST …/prompt from this page is in flight
    this.held = false; // the gateway refused a queued prompt as too early: wait for the next turn or status frame
    // The transcript's rows live in the store (state.js); the transcript view renders them.
    this.store = createStore({ ...initialState(), detail: { id } }); // the detail until GET …/{id} answers
    this.transcript = new Transcript(ctx.transcriptEl, {
      onReviewPermission: (pid) => this.review(pid),
      meId: () => this.ctx.meId(),
      onEarlier: () => this.earlier.load(),
    });
    this.store.subscribe((st, frame, fresh = !frame) => this.transcript.show(st, fresh));
    this.earlier = new EarlierLoader(this.store, (after, limit) => this.ctx.api.events(this.id, after, limit));
    // How many questions wait is the store's (the list and the tab's title count them); not once disposed.
    this.elicit = new Elicitations(id, ctx.composerEl, ctx.api.answerElicitation, (count) => {
      if (!this.disposed) this.store.dispatch({ type: 'questions', count });
    });
    this.socket = null;
  }

  async start() {
    this.ctx.setConn('connecting');
    let s;
    try {
      s = await this.ctx.api.session(this.id);
    } catch (err) {
      if (this.disposed) return;
      if (err instanceof ApiError && err.status === 404) {
        this.ctx.toast('That session does not exist (any more).', 'error');
        this.setStatus('closed', 'not found');
        this.ctx.setConn('closed', { reason: 'session not found' });
        return;
      }
      this.ctx.toast('Could not load the session: ' + errorText(err), 'error');
      s = { id: this.id, status: 'starting' };
    }
    if (this.disposed) return;
    // A long log opens from the snapshot and streams on after its seq; a short one is replayed whole, which also
    // says who prompted each turn and who answered each permission (a snapshot names nobody).
    const fromSnap = s.snapshot && s.lastSeq > FULL_REPLAY_MAX;
    if (fromSnap) this.loadSnapshot(s);
    this.applySession(s, fromSnap);
    this.ctx.probeShares(this.id);
    this.socket = new SessionSocket(this.id, {
      onFrame: (m) => this.onFrame(m),
      onState: (st, d) => this.onConnState(st, d),
      onResync: (reason) => this.resync(reason),
    });
    if (this.status === 'closed') {
      // A closed session's log may still be readable; the socket reports 4009 if not.
    }
    if (fromSnap) this.socket.start(s.snapshot.seq || s.lastSeq, s.epoch);
    else this.socket.start(0, null);
  }

  dispose() {
    this.disposed = true;
    if (this.socket) this.socket.stop();
    this.transcript.dispose();
    this.elicit.dispose();
    this.ctx.page.dispatch({ type: 'title', id: this.id, title: this.store.state.title }); // the list keeps it
  }

  applySession(s, fromSnapshot) {
    this.session = s;
    this.loadedAt = Date.now();
    this.store.dispatch({ type: 'session', view: s, fromSnapshot }); // status, its reason, the last turn's end
    if (fromSnapshot) this.elicit.reset();
    this.elicit.load(s.pendingElicitations);
    this.ctx.page.dispatch({ type: 'listed', session: s });
    this.ctx.changed();
  }

  async resync(reason) {
    const s = await this.ctx.api.session(this.id).catch((err) => {
      if (err instanceof ApiError && err.status === 404) {
        const e = new Error('session not found');
        e.terminal = true;
        throw e;
      }
      throw err;
    });
    if (this.disposed) throw Object.assign(new Error('disposed'), { terminal: true });
    this.store.dispatch({ type: 'replaying' });
    // The rows loaded before the snapshot's entries come back, folded again, and the row read stays in place.
    const reading = this.transcript.reading();
    const snap = fromSnapshot(s.snapshot || { entries: [] }, this.store.state.actors);
    const refolded = await this.earlier.refold(snap, this.earlier.kept(this.store.state));
    if (this.disposed) throw Object.assign(new Error('disposed'), { terminal: true });
    this.loadSnapshot(s, refolded, reading);
    this.applySession(s, true);
    console.info(`resynced from snapshot (${reason}) at seq ${s.snapshot ? s.snapshot.seq : 0}`);
    return { seq: (s.snapshot && s.snapshot.seq) || s.lastSeq || 0, epoch: s.epoch };
  }

  /**
   * Shows the session's snapshot (GET /v1/sessions/{id}) in place of the transcript so far; refolded: its state
   * with earlier rows already (EarlierLoader.refold), reading: the row to keep in place (Transcript.reading).
   */
  loadSnapshot(s, refolded = null, reading = null) {
    const was = this.store.state; // the status, detail … are the session's, not its log's: they stay
    this.store.reset(keepSession(refolded || fromSnapshot(s.snapshot || { entries: [] }, was.actors), was));
    if (!refolded) this.earlier.start(this.store.state);
    // Pending permission requests older than the snapshot's frames: their cards wait for an answer.
    for (const p of (s.pendingPermissions || [])) {
      if (p && p.id) this.store.dispatch({ jsonrpc: '2.0', id: p.id, method: 'session/request_permission', params: { toolCall: p.toolCall, options: p.options } });
    }
    if (reading) this.transcript.hold(reading);
    else this.transcript.scrollToEnd();
  }

  setStatus(status, reason) {
    this.store.dispatch({ type: 'status', status, reason });
    this.ctx.changed();
  }

  onConnState(st, detail) {
    if (this.disposed) return;
    if (st === 'replaying' || st === 'resyncing') this.store.dispatch({ type: 'replaying' });
    this.ctx.setConn(st, detail);
    if (st === 'closed' && detail && detail.code === 4009) this.setStatus('closed');
    if (st === 'closed' && detail && detail.code === 4004) this.setStatus('closed', 'not found');
    // 1008 after the upgrade: the credential was revoked or expired (or the origin refused). Ask who we are.
    if (st === 'closed' && detail && detail.code === 1008) this.ctx.checkCredential();
  }

  onFrame(msg) {
    if (this.disposed) return;
    if (this.elicit.onFrame(msg)) return; // elicitation/* (elicit.js)
    const p = msg.params || {};
    if (HOLD_ENDS.has(msg.method)) this.held = false;
    const before = this.store.state;
    this.store.dispatch(msg); // rows, turn, pending requests … (state.js); the views follow the store
    switch (msg.method) {
      case '_gateway/permission_resolved':
        this.onPermissionResolved(p, before);
        break;
      case '_gateway/turn_started': {
        if (this.store.state.turn && this.store.state.turnStartedAt === null) this.store.dispatch({ type: 'turnClock', at: Date.now() });
        break;
      }
      case '_gateway/turn_ended':
        if (this.replayed) {
          if (p.error) this.ctx.toast('The turn failed: ' + (typeof p.error === 'string' ? p.error : p.error.message || 'error'), 'error');
        }
        break;
      case '_gateway/session_status':
        if (this.replayed) this.ctx.changed();
        break;
      case '_gateway/replay_complete':
        this.transcript.flush();
        if (!this.opened) this.transcript.scrollToEnd(); // a session opens at its end; a resume keeps the row read
        this.opened = true;
        this.ctx.changed();
        break;
      case '_gateway/presence':
        break; // the watchers: state.js
      case '_gateway/slow_client':
        this.ctx.toast('This page is falling behind the session; it may reconnect.', 'warn');
        break;
      default:
        break; // unknown notifications are tolerated
    }
  }

  /** Says why a request the person did not answer here went away (before: the state before its frame). */
  onPermissionResolved(p, before) {
    const pid = p.permissionId;
    const req = before.pending.find((x) => x.id === pid);
    const mine = !!before.answered[pid];
    const by = p.by || '';
    const v = permissionVerdict(p, (req && req.options) || [], this.ctx.meId());
    if (this.replayed && !mine) {
      const title = (req && req.toolCall && req.toolCall.title) || 'a tool call';
      if (by === 'deadline') this.ctx.toast(`The permission request for “${title}” timed out and was denied.`, 'warn');
      else if (by === 'client' || by === 'rest' || by === 'acp') {
        // Brief: the tool card keeps who answered; this only says why the dialog went away.
        this.ctx.toast(`“${title}” was answered ${v.name ? `by ${v.name}` : 'in another client'}: ${v.choice || v.text}.`, 'info', 4000);
      }
    }
  }

  review(pid) {
    this.ctx.review(this, pid);
  }

  async answer(pid, optionId) {
    this.store.dispatch({ type: 'permAnswer', id: pid }); // hidden here until the gateway confirms
    try {
      await this.ctx.api.answerPermission(this.id, pid, optionId);
    } catch (err) {
      if (err instanceof ApiError && (err.status === 409 || err.status === 404)) {
        this.ctx.toast('That permission request was already answered or is gone.', 'info');
        this.store.dispatch({ type: 'permAnswerFailed', id: pid, outcome: 'gone' });
      } else if (isForbidden(err)) {
        this.store.dispatch({ type: 'permAnswerFailed', id: pid, outcome: 'forbidden' });
        this.setReadOnly();
      } else {
        this.store.dispatch({ type: 'permAnswerFailed', id: pid, outcome: 'error' });
        this.ctx.toast('Could not answer the permission request: ' + errorText(err), 'error');
      }
    }
  }

  /** The gateway refused an act with 403 forbidden: the session is shared with us to watch only. */
  setReadOnly() {
    this.store.dispatch({ type: 'readOnly' });
    this.ctx.changed(false);
  }

  // What the session's frames (or its snapshot) say, folded by state.js.
  get plan() { return this.store.state.plan; }
  get usage() { return this.store.state.usage; }
  get commands() { return this.store.state.commands; }
  get status() { return this.store.state.status; }
  get statusReason() { return this.store.state.statusReason; }
  get readOnly() { return this.store.state.readOnly; }
  get replayed() { return this.store.state.replayed; }
  get running() { return !!this.store.state.turn; }
  /** The running turn, as the composer and the queue ask of it. */
  get turn() {
    const st = this.store.state;
    return { turnId: st.turn ? st.turn.turnId : null, running: !!st.turn, cancelRequested: st.cancelRequested, startedAt: st.turnStartedAt };
  }

  get usable() {
    return acceptsPrompt(this.status);
  }
}

// Past this many frames, a session opens from its snapshot rather than by replaying its log from the start.
const FULL_REPLAY_MAX = 2000;

// Frames after which a queued prompt the gateway refused as too early may be tried again.
const HOLD_ENDS = new Set(['_gateway/turn_started', '_gateway/turn_ended', '_gateway/session_status', '_gateway/replay_complete']);
