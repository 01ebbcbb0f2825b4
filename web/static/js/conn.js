// One session's WebSocket (/v1/sessions/{id}/ws): resume from the last seq, reconnect with backoff, resync from the
// snapshot when the gateway asks, and report the connection state.

import { token } from './api.js';

const NO_RETRY = new Map([
  [1008, 'refused by the gateway'],
  [4004, 'session not found'],
  [4009, 'session closed'],
]);

const BASE_DELAY = 300;
const MAX_DELAY = 15000;

/**
 * handlers:
 *   onFrame(msg)            every JSON-RPC message that is new (logged frames deduplicated by seq), in order
 *   onState(state, detail)  'connecting' | 'replaying' | 'live' | 'reconnecting' | 'resyncing' | 'closed'
 *   onResync(reason)        must reload the snapshot and resolve to {seq, epoch}; the socket reconnects after it
 */
export class SessionSocket {
  constructor(sessionId, handlers) {
    this.sessionId = sessionId;
    this.h = handlers;
    this.ws = null;
    this.lastSeq = 0;
    this.epoch = null;
    this.attempt = 0;
    this.timer = null;
    this.stopped = false;
    this.state = 'idle';
    this.needResync = false;
    this.onOnline = () => {
      if (this.state === 'reconnecting' && !this.stopped) {
        clearTimeout(this.timer);
        this.open();
      }
    };
    window.addEventListener('online', this.onOnline);
  }

  start(lastSeq = 0, epoch = null) {
    this.lastSeq = lastSeq;
    this.epoch = epoch;
    this.open();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    window.removeEventListener('online', this.onOnline);
    this.dropSocket(1000, 'client closed');
  }

  setState(state, detail = {}) {
    this.state = state;
    this.h.onState(state, detail);
  }

  url() {
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const q = new URLSearchParams();
    if (this.lastSeq > 0) {
      q.set('after', String(this.lastSeq));
      if (this.epoch) q.set('epoch', this.epoch);
    }
    const qs = q.toString();
    return `${proto}//${location.host}/v1/sessions/${encodeURIComponent(this.sessionId)}/ws${qs ? '?' + qs : ''}`;
  }

  dropSocket(code, reason) {
    const ws = this.ws;
    this.ws = null;
    if (!ws) return;
    ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
    try {
      if (ws.readyState === WebSocket.CONNECTING || ws.readyState === WebSocket.OPEN) ws.close(code, reason);
    } catch {
      // Closing an already-closing socket is harmless.
    }
  }

  async open() {
    if (this.stopped) return;
    if (this.needResync) {
      await this.resync('retry');
      return;
    }
    this.setState(this.attempt === 0 && this.lastSeq === 0 ? 'connecting' : 'reconnecting', { attempt: this.attempt, connecting: true });
    let ws;
    try {
      // Browsers cannot set headers on a WebSocket: the token travels as a subprotocol beside the real one,
      // and the gateway selects the real one, never echoing the token.
      const t = token();
      ws = t ? new WebSocket(this.url(), ['acp-gateway.v1', `bearer.${t}`]) : new WebSocket(this.url());
    } catch {
      this.scheduleRetry(0, 'bad url');
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws === ws) this.setState('replaying');
    };
    ws.onmessage = (ev) => {
      if (this.ws !== ws) return;
      this.handleText(ev.data);
    };
    ws.onerror = () => {
      // The close event follows and carries the code; the browser already logs the failure.
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.stopped) return;
      if (NO_RETRY.has(ev.code)) {
        this.setState('closed', { code: ev.code, reason: NO_RETRY.get(ev.code) });
        return;
      }
      this.scheduleRetry(ev.code, ev.reason);
    };
  }

  scheduleRetry(code, reason) {
    if (this.stopped) return;
    const exp = Math.min(MAX_DELAY, BASE_DELAY * 2 ** this.attempt);
    const delay = Math.round(exp * (0.8 + Math.random() * 0.4));
    this.attempt = Math.min(this.attempt + 1, 10);
    this.setState('reconnecting', { code, reason, delay, at: Date.now() + delay, attempt: this.attempt });
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(), delay);
  }

  async resync(reason) {
    this.dropSocket(1000, 'resync');
    this.needResync = true;
    this.setState('resyncing', { reason });
    try {
      const { seq, epoch } = await this.h.onResync(reason);
      if (this.stopped) return;
      this.needResync = false;
      this.lastSeq = seq || 0;
      this.epoch = epoch || null;
      this.open();
    } catch (err) {
      if (this.stopped) return;
      if (err && err.terminal) {
        this.setState('closed', { reason: err.message });
        return;
      }
      this.scheduleRetry(0, 'resync failed');
    }
  }

  handleText(text) {
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      console.warn('gateway sent a frame that is not JSON');
      return;
    }
    if (!msg || typeof msg !== 'object') return;
    const method = msg.method;
    if (method === '_gateway/replay_complete') {
      this.attempt = 0;
      const last = Number(msg.params && msg.params.lastSeq);
      if (Number.isFinite(last) && last > this.lastSeq) {
        // The gateway says the log is further along than what we saw: we lost frames.
        this.resync('gap');
        return;
      }
      this.setState('live');
      this.h.onFrame(msg);
      return;
    }
    if (method === '_gateway/resync_required') {
      this.resync((msg.params && msg.params.reason) || 'resync_required');
      return;
    }
    const meta = msg.params && msg.params._meta && msg.params._meta.gateway;
    if (meta && typeof meta.seq === 'number') {
      if (meta.epoch && this.epoch && meta.epoch !== this.epoch) {
        this.resync('epoch_changed');
        return;
      }
      if (meta.epoch) this.epoch = meta.epoch;
      if (meta.seq <= this.lastSeq) return; // already applied
      if (meta.seq !== this.lastSeq + 1) {
        console.warn(`gateway log gap: expected seq ${this.lastSeq + 1}, got ${meta.seq}; resyncing`);
        this.resync('gap');
        return;
      }
      this.lastSeq = meta.seq;
    }
    this.h.onFrame(msg);
  }

  send(obj) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(obj));
    return true;
  }
}
