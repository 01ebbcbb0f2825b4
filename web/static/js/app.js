// The gateway's web UI: sessions sidebar, transcript, composer, permission dialog. Talks only to /v1/... .

import { api, ApiError } from './api.js';
import { SessionSocket } from './conn.js';
import { Transcript, renderToolContent, kindIcon } from './transcript.js';
import { h, clear, icon } from './dom.js';
import { Ticker, fmtElapsed } from './elapsed.js';
import { legacyModesSuperseded } from './modes.js';
import { attachCaps, promptBlocks } from './attach.js';
import { AttachmentTray } from './attachview.js';
import { statusView, acceptsPrompt, promptErrorText } from './status.js';
import { permissionVerdict, watcherRows } from './people.js';
import { VIEWER_NOTICE, isForbidden } from './sharing.js';
import { ShareDialog } from './shareview.js';

const $ = (id) => document.getElementById(id);

const els = {
  app: $('app'),
  sidebar: $('sidebar'),
  backdrop: $('backdrop'),
  menu: $('menu-toggle'),
  sidebarClose: $('sidebar-close'),
  sessionList: $('session-list'),
  sessionsEmpty: $('sessions-empty'),
  agentList: $('agent-list'),
  newSession: $('new-session'),
  emptyNew: $('empty-new-session'),
  title: $('session-title'),
  meta: $('session-meta'),
  usage: $('usage'),
  pill: $('conn-pill'),
  pillText: $('conn-text'),
  closeSession: $('close-session'),
  shareSession: $('share-session'),
  me: $('me'),
  toolbar: $('toolbar'),
  selectors: $('selectors'),
  transcript: $('transcript'),
  emptyState: $('empty-state'),
  emptyStarting: $('empty-starting'),
  plan: $('plan'),
  planList: $('plan-list'),
  planProgress: $('plan-progress'),
  composer: $('composer'),
  input: $('prompt-input'),
  send: $('send'),
  cancel: $('cancel-turn'),
  hint: $('composer-hint'),
  notice: $('composer-notice'),
  turnElapsed: $('turn-elapsed'),
  attachments: $('attachments'),
  attachError: $('attach-error'),
  attach: $('attach'),
  attachInput: $('attach-input'),
  permDialog: $('perm-dialog'),
  permTool: $('perm-tool'),
  permDeadline: $('perm-deadline'),
  permOptions: $('perm-options'),
  permQueue: $('perm-queue'),
  permLater: $('perm-later'),
  permTitle: $('perm-title'),
  newDialog: $('new-dialog'),
  newForm: $('new-form'),
  newAgent: $('new-agent'),
  newCwd: $('new-cwd'),
  newPolicy: $('new-policy'),
  newError: $('new-error'),
  newCancel: $('new-cancel'),
  newCreate: $('new-create'),
  newStarting: $('new-starting'),
  confirmDialog: $('confirm-dialog'),
  shareDialog: $('share-dialog'),
  shareOwner: $('share-owner'),
  shareList: $('share-list'),
  shareForm: $('share-form'),
  sharePrincipal: $('share-principal'),
  shareRole: $('share-role'),
  shareAdd: $('share-add'),
  shareError: $('share-error'),
  shareClose: $('share-close'),
  toasts: $('toasts'),
};

const state = {
  me: null, // the caller as GET /v1/me says: {id, name, role, via}; null until known
  agents: [],
  defaultAgent: null,
  sessions: [],
  titles: new Map(),
  cur: null,
  starting: null, // {agent} while the empty state's prompt starts a session
};

const tray = new AttachmentTray(
  { list: els.attachments, error: els.attachError, button: els.attach, input: els.attachInput },
  () => renderComposer(),
);

// The open session's sharing dialog; a listing the gateway refuses (403, 404) hides the Share button.
const shares = new ShareDialog({
  dialog: els.shareDialog, owner: els.shareOwner, list: els.shareList, form: els.shareForm,
  principal: els.sharePrincipal, role: els.shareRole, add: els.shareAdd, error: els.shareError, close: els.shareClose,
}, (id, offered) => {
  if (state.cur && state.cur.id === id) {
    state.cur.sharing = offered;
    renderHeader();
  }
}, () => state.me);

const POLICY_LABEL = {
  ask: 'Ask', 'approve-reads': 'Approve reads', 'approve-all': 'Approve all', 'deny-all': 'Deny all',
};

// --- toasts --------------------------------------------------------------------------------------------------------

function toast(text, kind = 'info', ms = 6000) {
  const el = h('div.toast', { class: 'toast-' + kind, dataset: { kind } },
    h('span.toast-text', text),
    h('button.icon-btn.toast-close', { type: 'button', 'aria-label': 'Dismiss', on: { click: () => el.remove() } }, icon('close')));
  els.toasts.appendChild(el);
  while (els.toasts.childElementCount > 4) els.toasts.firstElementChild.remove();
  setTimeout(() => el.remove(), ms);
  return el;
}

function errorText(err) {
  if (err instanceof ApiError) return err.message + (err.code ? ` (${err.code})` : '');
  return String((err && err.message) || err);
}

// --- formatting ----------------------------------------------------------------------------------------------------

function shortId(id) {
  const s = String(id || '');
  return s.length > 10 ? s.slice(0, 8) : s;
}

function fmtTokens(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '?';
  if (n >= 1e6) return (n / 1e6).toFixed(n >= 1e7 ? 0 : 1) + 'M';
  if (n >= 1e3) return (n / 1e3).toFixed(n >= 1e4 ? 0 : 1) + 'k';
  return String(n);
}

function fmtCost(c) {
  if (!c || typeof c.amount !== 'number') return '';
  const cur = c.currency || 'USD';
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency: cur, maximumFractionDigits: c.amount < 1 ? 4 : 2 }).format(c.amount);
  } catch {
    return `${c.amount} ${cur}`;
  }
}

function fmtTime(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const sameDay = d.toDateString() === new Date().toDateString();
  return sameDay ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : d.toLocaleDateString();
}

function baseName(p) {
  const s = String(p || '').replace(/\/+$/, '');
  return s.slice(s.lastIndexOf('/') + 1) || s || '/';
}

function sessionTitle(s) {
  return state.titles.get(s.id) || `${s.agent || 'agent'} · ${shortId(s.id)}`;
}

// --- sidebar -------------------------------------------------------------------------------------------------------

function isNarrow() {
  return window.matchMedia('(max-width: 860px)').matches;
}

function setSidebar(open) {
  els.app.classList.toggle('sidebar-open', open);
  els.menu.setAttribute('aria-expanded', String(open));
  els.backdrop.hidden = !open;
  if (open) {
    const first = els.sidebar.querySelector('[aria-current="page"]') || els.newSession;
    first.focus();
  }
}

function renderAgents() {
  clear(els.agentList);
  for (const a of state.agents) {
    els.agentList.appendChild(h('li',
      h('button.agent-item', {
        type: 'button',
        title: `New session with ${a.name}`,
        dataset: { agent: a.name },
        on: { click: () => openNewDialog(a.name) },
      },
      icon('bot'),
      h('span.agent-name', a.name),
      h('span.agent-kind', a.kind || ''),
      a.default || a.name === state.defaultAgent ? h('span.badge', 'default') : null)));
  }
  clear(els.newAgent);
  for (const a of state.agents) {
    els.newAgent.appendChild(h('option', { value: a.name, selected: a.name === state.defaultAgent }, a.name));
  }
}

function renderSessions() {
  const all = [...state.sessions];
  const cur0 = state.cur;
  if (cur0 && cur0.session && !all.some((s) => s.id === cur0.id)) {
    // The gateway forgets closed sessions; keep the one on screen listed until the user leaves it.
    all.push({ ...cur0.session, status: cur0.status || 'closed' });
  }
  const list = all.sort((a, b) => {
    const ca = a.status === 'closed' ? 1 : 0;
    const cb = b.status === 'closed' ? 1 : 0;
    if (ca !== cb) return ca - cb;
    return String(b.createdAt || '').localeCompare(String(a.createdAt || ''));
  });
  clear(els.sessionList);
  els.sessionsEmpty.hidden = list.length > 0;
  const curId = state.cur && state.cur.id;
  for (const s of list) {
    let status = s.status;
    let pending = Array.isArray(s.pendingPermissions) ? s.pendingPermissions.length : 0;
    let running = !!s.currentTurn;
    if (s.id === curId) {
      status = state.cur.status || status;
      pending = state.cur.pending.size;
      running = state.cur.turn.running;
    }
    const view = statusView(status, running);
    const a = h('a.session-item', {
      href: '#/s/' + encodeURIComponent(s.id),
      dataset: { sessionId: s.id, status: status || '' },
      'aria-current': s.id === curId ? 'page' : null,
      on: { click: () => { if (isNarrow()) setSidebar(false); } },
    },
    h('span.session-dot', { dataset: { status: view.key }, title: view.title || null, 'aria-hidden': 'true' }),
    h('span.session-item-main',
      h('span.session-item-title', sessionTitle(s)),
      h('span.session-item-meta', view.key === 'detached' ? h('span.status-badge', { dataset: { status: 'detached' }, title: view.title }, view.label) : view.label,
        ` · ${baseName(s.cwd)}${s.node ? ` · on ${s.node}` : ''} · ${fmtTime(s.createdAt)}`)),
    pending ? h('span.badge.badge-warn', { title: `${pending} permission request(s) waiting`, 'aria-label': `${pending} pending permission requests` }, String(pending)) : null);
    els.sessionList.appendChild(h('li', a));
  }
}

async function refreshSessions() {
  const started = Date.now();
  try {
    const res = await api.sessions();
    state.sessions = Array.isArray(res && res.sessions) ? res.sessions : [];
    const cur = state.cur;
    if (cur && cur.session) {
      const s = state.sessions.find((x) => x.id === cur.id);
      if (s && (s.status === 'closed' || s.status === 'failed') && cur.status !== s.status) {
        cur.setStatus(s.status, s.statusReason);
      } else if (!s && cur.usable && cur.loadedAt && cur.loadedAt < started) {
        cur.setStatus('closed', 'no longer listed by the gateway');
      }
    }
    renderSessions();
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 0)) toast('Could not list sessions: ' + errorText(err), 'error');
  }
}

/** GET /v1/me: the caller's name in the top bar; sharing is then offered only where they may share. */
async function loadMe() {
  try {
    state.me = await api.me();
    els.me.textContent = state.me.name || state.me.id;
    els.me.title = `Signed in as ${state.me.id} (${state.me.role}, ${state.me.via})`;
    els.me.hidden = state.me.via === 'none';
    if (state.cur) shares.refresh();
    renderHeader();
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 0)) console.warn('GET /v1/me:', errorText(err));
  }
}

async function loadAgents() {
  try {
    const res = await api.agents();
    state.agents = Array.isArray(res && res.agents) ? res.agents : [];
    state.defaultAgent = (res && res.default) || (state.agents.find((a) => a.default) || state.agents[0] || {}).name || null;
    renderAgents();
    renderComposer();
  } catch (err) {
    toast('Could not list agents: ' + errorText(err), 'error');
  }
}

// --- new session / close -------------------------------------------------------------------------------------------

/**
 * Shows "Starting <agent>… 1.4 s" in el: an agent may take seconds to start, and a greyed button looks stuck.
 * Returns the function that hides it again.
 */
function showStarting(el, agent) {
  const time = h('span.starting-time', { 'aria-hidden': 'true' }); // a live region must not read out every tick
  clear(el);
  el.append(icon('spinner', 'spin'), h('span', `Starting ${agent || 'the agent'}… `), time);
  el.hidden = false;
  const ticker = new Ticker((ms) => { time.textContent = fmtElapsed(ms, { tenths: true }); }, 100);
  ticker.start(Date.now());
  return () => {
    ticker.stop();
    el.hidden = true;
    clear(el);
  };
}

/** Lists a session the gateway just created. */
function adoptSession(s) {
  state.sessions = state.sessions.filter((x) => x.id !== s.id).concat([s]);
  renderSessions();
  refreshSessions();
}

let creating = false; // the dialog's POST /v1/sessions is in flight

function openNewDialog(agent) {
  if (isNarrow()) setSidebar(false);
  if (creating) {
    els.newDialog.showModal();
    els.newStarting.focus();
    return;
  }
  els.newError.hidden = true;
  if (agent) els.newAgent.value = agent;
  else if (state.defaultAgent) els.newAgent.value = state.defaultAgent;
  els.newDialog.showModal();
  els.newAgent.focus();
}

async function createSession(ev) {
  ev.preventDefault();
  if (creating) return;
  const body = { agent: els.newAgent.value || undefined, permissionPolicy: els.newPolicy.value };
  const cwd = els.newCwd.value.trim();
  if (cwd) {
    if (!cwd.startsWith('/')) {
      els.newError.textContent = 'The working directory must be an absolute path.';
      els.newError.hidden = false;
      els.newCwd.focus();
      return;
    }
    body.cwd = cwd;
  }
  creating = true;
  els.newError.hidden = true;
  els.newCreate.hidden = true;
  const stop = showStarting(els.newStarting, body.agent || state.defaultAgent);
  els.newStarting.focus();
  try {
    const s = await api.createSession(body);
    // The dialog may have been dismissed while the agent started: then list the session but stay where we are.
    const wanted = els.newDialog.open;
    if (wanted) els.newDialog.close();
    adoptSession(s);
    if (wanted) location.hash = '#/s/' + encodeURIComponent(s.id);
    else toast(`The session with ${s.agent || 'the agent'} is ready.`, 'info');
  } catch (err) {
    if (els.newDialog.open) {
      els.newError.textContent = errorText(err);
      els.newError.hidden = false;
    } else {
      toast('Could not create the session: ' + errorText(err), 'error');
    }
  } finally {
    stop();
    els.newCreate.hidden = false;
    creating = false;
  }
}

/** The empty state's prompt: starts a session with the default agent, opens it and sends the prompt there. */
async function quickStart(text) {
  const agent = state.defaultAgent;
  if (!agent || state.starting) return;
  state.starting = { agent };
  const stop = showStarting(els.emptyStarting, agent);
  renderComposer();
  let s;
  try {
    s = await api.createSession({ agent, permissionPolicy: 'ask' });
  } catch (err) {
    toast(`Could not start a session with ${agent}: ` + errorText(err), 'error');
    return;
  } finally {
    stop();
    state.starting = null;
    renderComposer();
  }
  adoptSession(s);
  location.hash = '#/s/' + encodeURIComponent(s.id);
  route();
  if (state.cur && state.cur.id === s.id) await submitPrompt(state.cur, text);
}

function confirmClose() {
  const cur = state.cur;
  if (!cur) return;
  els.confirmDialog.returnValue = '';
  els.confirmDialog.showModal();
  els.confirmDialog.addEventListener('close', async () => {
    if (els.confirmDialog.returnValue !== 'yes' || state.cur !== cur) return;
    try {
      await api.closeSession(cur.id);
      cur.setStatus('closed');
      toast('Session closed.', 'info');
    } catch (err) {
      toast('Could not close the session: ' + errorText(err), 'error');
    }
    refreshSessions();
  }, { once: true });
}

// --- the current session -------------------------------------------------------------------------------------------

class Current {
  constructor(id) {
    this.id = id;
    this.session = null;
    this.status = null;
    this.statusReason = null;
    this.notResumable = null; // why a prompt to this detached session was refused (409 session_not_resumable)
    this.turn = idleTurn();
    this.pending = new Map(); // permissionId → {id, toolCall, options, deadline}
    this.answered = new Set(); // permission ids answered from this page
    this.deferred = new Set(); // permission ids the user put aside ("decide later")
    this.showing = null; // permission id in the dialog
    this.replayed = false;
    this.plan = null;
    this.modes = null;
    this.configOptions = null;
    this.usage = null;
    this.commands = [];
    this.disposed = false;
    this.sharing = false; // the gateway lists this session's shares for us (the Share button shows)
    this.readOnly = false; // the gateway refused a prompt with 403 forbidden: shared with us as viewer
    this.watchers = []; // who streams the session now: `watchers` of the detail, then `_gateway/presence`
    this.transcript = new Transcript(els.transcript, { onReviewPermission: (pid) => this.review(pid) });
    this.socket = null;
  }

  async start() {
    renderHeader();
    setConn('connecting');
    let s;
    try {
      s = await api.session(this.id);
    } catch (err) {
      if (this.disposed) return;
      if (err instanceof ApiError && err.status === 404) {
        toast('That session does not exist (any more).', 'error');
        this.setStatus('closed', 'not found');
        setConn('closed', { reason: 'session not found' });
        return;
      }
      toast('Could not load the session: ' + errorText(err), 'error');
      s = { id: this.id, status: 'starting' };
    }
    if (this.disposed) return;
    this.applySession(s, false);
    shares.probe(this.id);
    this.socket = new SessionSocket(this.id, {
      onFrame: (m) => this.onFrame(m),
      onState: (st, d) => this.onConnState(st, d),
      onResync: (reason) => this.resync(reason),
    });
    if (this.status === 'closed') {
      // A closed session's log may still be readable; the socket reports 4009 if not.
    }
    this.socket.start(0, null);
  }

  dispose() {
    this.disposed = true;
    if (this.socket) this.socket.stop();
    this.transcript.reset();
    this.transcript.list.remove();
    closePermDialog();
  }

  applySession(s, fromSnapshot) {
    this.session = s;
    this.loadedAt = Date.now();
    this.status = s.status || this.status;
    this.statusReason = s.statusReason || null;
    if (s.modes) this.modes = { ...s.modes };
    if (Array.isArray(s.configOptions)) this.configOptions = s.configOptions;
    if (Array.isArray(s.watchers)) this.watchers = s.watchers;
    if (s.currentTurn) this.turn = runningTurn(s.currentTurn.turnId, parseTime(s.currentTurn.startedAt), !!s.currentTurn.cancelRequested);
    else if (fromSnapshot) this.turn = idleTurn();
    if (fromSnapshot) this.pending.clear();
    if (Array.isArray(s.pendingPermissions)) {
      for (const p of s.pendingPermissions) {
        if (p && p.id) this.pending.set(p.id, { id: p.id, toolCall: p.toolCall || {}, options: p.options || [], deadline: p.deadline, createdAt: p.createdAt });
      }
    }
    const snap = s.snapshot;
    if (fromSnapshot && snap) {
      this.plan = snap.plan || null;
      if (snap.currentModeId && this.modes) this.modes.currentModeId = snap.currentModeId;
      if (Array.isArray(snap.configOptions)) this.configOptions = snap.configOptions;
      if (snap.usage) this.usage = snap.usage;
      if (snap.sessionInfo && snap.sessionInfo.title) state.titles.set(this.id, snap.sessionInfo.title);
      if (Array.isArray(snap.availableCommands)) this.commands = snap.availableCommands;
    }
    const idx = state.sessions.findIndex((x) => x.id === s.id);
    const listed = { ...s };
    delete listed.snapshot;
    if (idx >= 0) state.sessions[idx] = listed;
    else if (s.id) state.sessions.push(listed);
    renderAll();
  }

  async resync(reason) {
    const s = await api.session(this.id).catch((err) => {
      if (err instanceof ApiError && err.status === 404) {
        const e = new Error('session not found');
        e.terminal = true;
        throw e;
      }
      throw err;
    });
    if (this.disposed) throw Object.assign(new Error('disposed'), { terminal: true });
    this.replayed = false;
    this.transcript.loadSnapshot(s.snapshot || { entries: [] });
    for (const p of (s.pendingPermissions || [])) if (p && p.id) this.transcript.permissionRequested(p.id, p.toolCall);
    this.applySession(s, true);
    console.info(`resynced from snapshot (${reason}) at seq ${s.snapshot ? s.snapshot.seq : 0}`);
    return { seq: (s.snapshot && s.snapshot.seq) || s.lastSeq || 0, epoch: s.epoch };
  }

  setStatus(status, reason) {
    this.status = status;
    this.statusReason = reason || null;
    if (status === 'closed' || status === 'failed') {
      this.turn = idleTurn();
    }
    renderAll();
  }

  onConnState(st, detail) {
    if (this.disposed) return;
    if (st === 'replaying' || st === 'resyncing') this.replayed = false;
    setConn(st, detail);
    if (st === 'closed' && detail && detail.code === 4009) this.setStatus('closed');
    if (st === 'closed' && detail && detail.code === 4004) this.setStatus('closed', 'not found');
  }

  onFrame(msg) {
    if (this.disposed) return;
    const p = msg.params || {};
    const meta = (p._meta && p._meta.gateway) || {};
    switch (msg.method) {
      case 'session/update':
        this.onUpdate(p.update || {}, meta);
        break;
      case 'session/request_permission': {
        const pid = msg.id !== undefined && msg.id !== null ? String(msg.id) : meta.permissionId;
        if (!pid) break;
        this.pending.set(pid, { id: pid, toolCall: p.toolCall || {}, options: p.options || [], deadline: meta.deadline, turnId: meta.turnId });
        this.transcript.permissionRequested(pid, p.toolCall);
        if (this.replayed) {
          this.deferred.delete(pid);
          refreshPermDialog();
          renderSessions();
          updateDocTitle();
        }
        break;
      }
      case '_gateway/permission_resolved':
        this.onPermissionResolved(p);
        break;
      case '_gateway/turn_started': {
        // Frames carry no time: a turn that was running when the page loaded started at the session's startedAt.
        const turnId = p.turnId || meta.turnId || null;
        const known = this.session && this.session.currentTurn && this.session.currentTurn.turnId === turnId
          ? parseTime(this.session.currentTurn.startedAt) : null;
        this.turn = runningTurn(turnId, known ?? Date.now(), false);
        if (this.status !== 'closed' && this.status !== 'failed') this.status = 'running';
        this.transcript.turnStarted(this.turn.turnId, p.actor);
        if (this.replayed) { renderComposer(); renderHeader(); renderSessions(); }
        break;
      }
      case '_gateway/turn_ended':
        this.transcript.turnEnded(p.turnId || meta.turnId, p.stopReason, p.error);
        if (this.usage || p.usage) { // the snapshot's usage.lastTurn: the last turn's tokens, or none
          this.usage = { ...this.usage, lastTurn: p.usage ? { turnId: p.turnId, ...p.usage } : undefined };
          renderUsage();
        }
        this.turn = idleTurn();
        if (this.status === 'running') this.status = 'idle';
        if (this.replayed) {
          renderComposer(); renderHeader(); renderSessions();
          if (p.error) toast('The turn failed: ' + (typeof p.error === 'string' ? p.error : p.error.message || 'error'), 'error');
        }
        break;
      case '_gateway/session_status':
        this.status = p.status || this.status;
        this.statusReason = p.reason || null;
        if (this.status !== 'detached') this.notResumable = null;
        if (this.status === 'closed' || this.status === 'failed') this.turn = idleTurn();
        if (this.replayed) renderAll();
        break;
      case '_gateway/replay_complete':
        this.replayed = true;
        this.transcript.flush();
        this.transcript.scrollToEnd();
        renderAll();
        break;
      case '_gateway/fs_write':
        this.transcript.note('fs-write', `Wrote ${p.path} (${p.bytes} bytes)`);
        break;
      case '_gateway/terminal_output':
        this.transcript.terminalOutput(p.terminalId, p.data, p.truncated);
        break;
      case '_gateway/terminal_exit':
        this.transcript.terminalExit(p.terminalId, p.exitCode, p.signal);
        break;
      case '_gateway/agent_output':
        this.transcript.note('agent-output', p.dropped ? 'Further agent output is not shown.' : `Agent output: ${p.line}${p.truncated ? ' …' : ''}`);
        break;
      case '_gateway/presence':
        this.watchers = Array.isArray(p.watchers) ? p.watchers : [];
        renderHeader();
        break;
      case '_gateway/slow_client':
        toast('This page is falling behind the session; it may reconnect.', 'warn');
        break;
      default:
        break; // unknown notifications are tolerated
    }
  }

  onUpdate(u, meta) {
    switch (u.sessionUpdate) {
      case 'plan':
        this.plan = { entries: Array.isArray(u.entries) ? u.entries : [] };
        renderPlan();
        break;
      case 'current_mode_update':
        if (!this.modes) this.modes = { currentModeId: u.currentModeId, availableModes: [] };
        else this.modes.currentModeId = u.currentModeId;
        renderSelectors();
        break;
      case 'config_option_update':
        if (Array.isArray(u.configOptions)) this.configOptions = u.configOptions;
        renderSelectors();
        break;
      case 'session_info_update':
        if (typeof u.title === 'string' && u.title) {
          state.titles.set(this.id, u.title);
          renderHeader();
          renderSessions();
        }
        break;
      case 'usage_update':
        this.usage = { used: u.used, size: u.size, cost: u.cost, lastTurn: this.usage && this.usage.lastTurn };
        renderUsage();
        break;
      case 'available_commands_update':
        this.commands = Array.isArray(u.availableCommands) ? u.availableCommands : [];
        break;
      default:
        this.transcript.update(u, meta);
    }
  }

  onPermissionResolved(p) {
    const pid = p.permissionId;
    const req = this.pending.get(pid);
    this.pending.delete(pid);
    this.deferred.delete(pid);
    const mine = this.answered.has(pid);
    const by = p.by || '';
    const v = permissionVerdict(p, (req && req.options) || [], mine);
    this.transcript.permissionResolved(pid, v.text, v.allowed);
    if (this.replayed && !mine) {
      const title = (req && req.toolCall && req.toolCall.title) || 'a tool call';
      if (by === 'deadline') toast(`The permission request for “${title}” timed out and was denied.`, 'warn');
      else if (by === 'client' || by === 'rest' || by === 'acp') {
        toast(`The permission request for “${title}” was answered ${v.name ? `by ${v.name}` : 'in another client'}: ${v.choice || v.text}.`, 'info');
      }
    }
    if (this.replayed) {
      refreshPermDialog();
      renderSessions();
      updateDocTitle();
    }
  }

  review(pid) {
    if (!this.pending.has(pid)) return;
    this.deferred.delete(pid);
    this.showing = pid;
    refreshPermDialog(true);
  }

  async answer(pid, optionId) {
    this.answered.add(pid);
    this.deferred.add(pid); // hide it here until the gateway confirms
    refreshPermDialog();
    try {
      await api.answerPermission(this.id, pid, optionId);
    } catch (err) {
      if (err instanceof ApiError && (err.status === 409 || err.status === 404)) {
        toast('That permission request was already answered or is gone.', 'info');
        this.pending.delete(pid);
      } else if (isForbidden(err)) {
        this.answered.delete(pid);
        this.setReadOnly();
      } else {
        this.answered.delete(pid);
        this.deferred.delete(pid);
        toast('Could not answer the permission request: ' + errorText(err), 'error');
      }
      refreshPermDialog();
    }
  }

  /** The gateway refused an act with 403 forbidden: the session is shared with us to watch only. */
  setReadOnly() {
    this.readOnly = true;
    renderHeader();
    renderSelectors();
    renderComposer();
    refreshPermDialog();
  }

  get usable() {
    return acceptsPrompt(this.status);
  }
}

function idleTurn() {
  return { turnId: null, running: false, cancelRequested: false, startedAt: null };
}

/** startedAt is in ms since the epoch, or null when unknown. */
function runningTurn(turnId, startedAt, cancelRequested = false) {
  return { turnId, running: true, cancelRequested, startedAt };
}

function parseTime(iso) {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(t) ? t : null;
}

// --- rendering of the current session ------------------------------------------------------------------------------

function renderAll() {
  renderHeader();
  renderSelectors();
  renderUsage();
  renderPlan();
  renderComposer();
  renderSessions();
  refreshPermDialog();
  updateDocTitle();
}

function updateDocTitle() {
  const cur = state.cur;
  if (!cur) { document.title = 'ACP Gateway'; return; }
  const s = cur.session || { id: cur.id };
  const n = cur.pending.size;
  document.title = `${n ? `(${n}) ` : ''}${sessionTitle(s)} — ACP Gateway`;
}

function renderHeader() {
  const cur = state.cur;
  els.emptyState.hidden = !!cur;
  // A viewer may not close the session nor switch its mode or options: only the owner or an admin may.
  els.closeSession.hidden = !cur || !cur.usable || cur.readOnly;
  els.shareSession.hidden = !cur || !cur.usable || !cur.sharing;
  clear(els.meta);
  if (!cur) {
    els.title.textContent = 'No session';
    els.toolbar.hidden = true;
    return;
  }
  const s = cur.session || { id: cur.id };
  els.title.textContent = sessionTitle(s);
  const view = statusView(cur.status, cur.turn.running && cur.usable);
  els.meta.appendChild(h('span.status-chip', { dataset: { status: view.key }, id: 'session-status', title: view.title || null }, view.label));
  if (s.agent) els.meta.appendChild(h('span.meta-item', icon('bot'), s.agent));
  if (s.cwd) els.meta.appendChild(h('span.meta-item', { title: s.cwd }, icon('folder'), h('code', s.cwd)));
  if (s.node) els.meta.appendChild(h('span.meta-item', { id: 'session-node', title: 'The gateway node that runs this session\'s agent' }, icon('server'), s.node));
  if (s.permissionPolicy) els.meta.appendChild(h('span.meta-item', { title: 'Permission policy' }, icon('shield'), POLICY_LABEL[s.permissionPolicy] || s.permissionPolicy));
  if (cur.statusReason && (cur.status === 'failed' || cur.status === 'closed')) els.meta.appendChild(h('span.meta-item.muted', cur.statusReason));
  if (cur.notResumable && cur.status === 'detached') els.meta.appendChild(h('span.meta-item.meta-problem', { id: 'session-problem', role: 'alert' }, cur.notResumable));
  const watchers = watcherRows(cur.watchers);
  if (watchers.length) {
    const me = state.me && state.me.id;
    els.meta.appendChild(h('span.meta-item.watchers', { id: 'session-watchers', 'aria-label': 'Watching now' },
      ...watchers.map((w) => h('span.watcher', {
        dataset: { principal: w.principal, role: w.role },
        title: `${w.name}${w.principal === me ? ' (you)' : ''} · ${w.role}${w.faces > 1 ? ` · ${w.faces} connections` : ''}`,
      }, h('span.avatar', { 'aria-hidden': 'true' }, w.initials), h('span.watcher-name', w.name), h('span.watcher-role', w.role)))));
  }
}

function renderSelectors() {
  const cur = state.cur;
  clear(els.selectors);
  if (!cur) { els.toolbar.hidden = true; return; }
  const modes = cur.modes && Array.isArray(cur.modes.availableModes) ? cur.modes.availableModes : [];
  const superseded = legacyModesSuperseded(cur.configOptions);
  let any = false;
  if (modes.length && !superseded) {
    any = true;
    const sel = h('select', {
      id: 'mode-select',
      disabled: !cur.usable || cur.readOnly,
      on: {
        change: async (ev) => {
          const prev = cur.modes.currentModeId;
          const val = ev.target.value;
          ev.target.disabled = true;
          try {
            await api.setMode(cur.id, val);
            cur.modes.currentModeId = val;
          } catch (err) {
            toast('Could not switch mode: ' + errorText(err), 'error');
            cur.modes.currentModeId = prev;
          }
          if (state.cur === cur) renderSelectors();
        },
      },
    }, modes.map((m) => h('option', { value: m.id, selected: m.id === cur.modes.currentModeId, title: m.description || '' }, m.name || m.id)));
    els.selectors.appendChild(h('label.selector', h('span.selector-label', 'Mode'), sel));
  }
  for (const opt of cur.configOptions || []) {
    if (!opt || opt.type !== 'select' || !Array.isArray(opt.options)) continue;
    any = true;
    const sel = h('select', {
      dataset: { configId: opt.id },
      title: opt.description || '',
      disabled: !cur.usable || cur.readOnly,
      on: {
        change: async (ev) => {
          const val = ev.target.value;
          ev.target.disabled = true;
          try {
            const res = await api.setConfig(cur.id, opt.id, val);
            if (res && Array.isArray(res.configOptions)) cur.configOptions = res.configOptions;
            else opt.currentValue = val;
          } catch (err) {
            toast(`Could not change ${opt.name || opt.id}: ` + errorText(err), 'error');
          }
          if (state.cur === cur) renderSelectors();
        },
      },
    }, flattenOptions(opt.options).map((o) => h('option', { value: o.value, selected: o.value === opt.currentValue, title: o.description || '' }, o.name || o.value)));
    els.selectors.appendChild(h('label.selector', h('span.selector-label', opt.name || opt.id), sel));
  }
  els.toolbar.hidden = !any;
}

function flattenOptions(options) {
  // Select options may be grouped ({group, name, options:[…]}) in newer ACP schemas.
  const out = [];
  for (const o of options) {
    if (o && Array.isArray(o.options)) out.push(...flattenOptions(o.options));
    else if (o && o.value !== undefined) out.push(o);
  }
  return out;
}

function renderUsage() {
  const cur = state.cur;
  const u = cur && cur.usage;
  if (!u) { els.usage.hidden = true; return; }
  clear(els.usage);
  els.usage.hidden = false;
  const pct = typeof u.used === 'number' && typeof u.size === 'number' && u.size > 0 ? Math.min(100, Math.round((u.used / u.size) * 100)) : null;
  const last = u.lastTurn && typeof u.lastTurn.totalTokens === 'number' ? u.lastTurn : null;
  const hasContext = u.used !== undefined || u.size !== undefined;
  els.usage.title = [hasContext && `Context: ${u.used ?? '?'} of ${u.size ?? '?'} tokens${u.cost ? ', cost ' + fmtCost(u.cost) : ''}`,
    last && `Last turn: ${last.inputTokens} in, ${last.outputTokens} out, ${last.totalTokens} tokens in all`].filter(Boolean).join('; ');
  if (hasContext) els.usage.appendChild(h('span.usage-tokens', `${fmtTokens(u.used)} / ${fmtTokens(u.size)} tokens`));
  if (pct !== null) {
    els.usage.appendChild(h('progress.usage-bar', { max: '100', value: String(pct), 'aria-label': `${pct}% of the context used` }));
  }
  if (u.cost) els.usage.appendChild(h('span.usage-cost', fmtCost(u.cost)));
  if (last) els.usage.appendChild(h('span.usage-turn', `last turn ${fmtTokens(last.totalTokens)} tokens`));
}

const PLAN_ICON = { completed: 'check', in_progress: 'spinner', pending: null };

let planWasDone = null;

function renderPlan() {
  const cur = state.cur;
  const entries = cur && cur.plan && Array.isArray(cur.plan.entries) ? cur.plan.entries : [];
  if (!entries.length) { els.plan.hidden = true; clear(els.planList); planWasDone = null; return; }
  // Fold the plan away when it completes and unfold it when work starts again; the user can toggle it meanwhile.
  const allDone = entries.every((e) => e.status === 'completed');
  if (planWasDone !== allDone) $('plan-details').open = !allDone;
  planWasDone = allDone;
  els.plan.hidden = false;
  clear(els.planList);
  let done = 0;
  for (const e of entries) {
    const st = e.status || 'pending';
    if (st === 'completed') done++;
    const ic = PLAN_ICON[st];
    els.planList.appendChild(h('li.plan-entry', { dataset: { status: st, priority: e.priority || '' } },
      h('span.plan-check', { role: 'img', 'aria-label': st.replace('_', ' ') }, ic ? icon(ic, st === 'in_progress' ? 'spin' : '') : null),
      h('span.plan-text', String(e.content ?? '')),
      e.priority ? h('span.plan-prio', e.priority) : null));
  }
  els.planProgress.textContent = `${done} of ${entries.length} done`;
}

const turnTicker = new Ticker((ms) => { els.turnElapsed.textContent = `Running ${fmtElapsed(ms)}`; });

function renderComposer() {
  const cur = state.cur;
  // Without a session, a prompt starts one with the default agent (quickStart).
  const usable = cur ? cur.usable : !!state.defaultAgent && !state.starting;
  const running = !!cur && cur.turn.running;
  // A viewer may watch, not act: the composer is off and says why (the typed text stays in it).
  const readOnly = !!cur && cur.readOnly && usable;
  els.notice.textContent = readOnly ? VIEWER_NOTICE : '';
  els.notice.hidden = !readOnly;
  els.input.disabled = !usable || readOnly;
  els.send.disabled = !usable || running || readOnly;
  tray.setCaps(usable && !readOnly ? promptCaps() : { image: false, file: false });
  els.attach.disabled = !usable || readOnly;
  els.cancel.hidden = !running || !usable || readOnly;
  els.cancel.disabled = !!cur && cur.turn.cancelRequested;
  els.cancel.lastChild.textContent = cur && cur.turn.cancelRequested ? ' Stopping…' : ' Stop';
  if (!cur && state.starting) els.input.placeholder = `Starting ${state.starting.agent}…`;
  else if (!cur) els.input.placeholder = state.defaultAgent ? `Ask ${state.defaultAgent}…  (Enter starts a session and sends)` : 'Create or pick a session to start';
  else if (!usable) els.input.placeholder = `This session is ${cur.status}.`;
  else els.input.placeholder = 'Ask the agent…  (Enter to send, Shift+Enter for a new line)';
  els.composer.dataset.running = String(running);
  // A turn can run silently for minutes (an agent retrying a model it cannot reach): show that time passes.
  const since = running && usable ? cur.turn.startedAt : null;
  if (since !== null) {
    turnTicker.start(since);
    els.turnElapsed.hidden = false;
  } else {
    turnTicker.stop();
    els.turnElapsed.hidden = true;
  }
  updateHint();
}

/** What the agent of the current session (or the default agent, for the empty state) accepts beyond text. */
function promptCaps() {
  const cur = state.cur;
  const name = cur ? cur.session && cur.session.agent : state.defaultAgent;
  const agent = state.agents.find((a) => a.name === name);
  return attachCaps((cur && cur.session && cur.session.agentCapabilities) || (agent && agent.capabilities));
}

function updateHint() {
  const cur = state.cur;
  const v = els.input.value;
  let text = '';
  if (cur && v.startsWith('/') && cur.commands.length) {
    const word = v.slice(1).split(/\s/)[0];
    const m = cur.commands.filter((c) => c && typeof c.name === 'string' && c.name.startsWith(word)).slice(0, 3);
    text = m.map((c) => `/${c.name}${c.description ? ' — ' + c.description : ''}`).join('   ');
  } else if (cur && cur.turn.running) {
    text = cur.turn.cancelRequested ? 'Stopping the turn…' : 'The agent is working. Esc stops it.';
  }
  els.hint.textContent = text;
}

// --- connection pill -----------------------------------------------------------------------------------------------

let pillTimer = 0;

function setConn(st, detail = {}) {
  clearInterval(pillTimer);
  els.pill.dataset.state = st;
  const set = (t) => { els.pillText.textContent = t; };
  switch (st) {
    case 'connecting': set('Connecting…'); break;
    case 'replaying': set('Loading history…'); break;
    case 'live': set('Live'); break;
    case 'resyncing': set('Resyncing…'); break;
    case 'reconnecting': {
      if (detail.connecting || !detail.at) { set(`Reconnecting…${detail.attempt ? ` (try ${detail.attempt + 1})` : ''}`); break; }
      const tick = () => {
        const s = Math.max(0, Math.ceil((detail.at - Date.now()) / 1000));
        set(s > 0 ? `Offline · retrying in ${s}s` : 'Reconnecting…');
      };
      tick();
      pillTimer = setInterval(tick, 500);
      break;
    }
    case 'closed': set(detail.reason ? `Disconnected: ${detail.reason}` : 'Disconnected'); break;
    default: set('Not connected');
  }
}

// --- permission dialog ---------------------------------------------------------------------------------------------

let permTimer = 0;
let permShownId = null;

function closePermDialog() {
  clearInterval(permTimer);
  permShownId = null;
  if (els.permDialog.open) els.permDialog.close();
}

function pickPermission(cur) {
  if (cur.showing && cur.pending.has(cur.showing) && !cur.deferred.has(cur.showing)) return cur.pending.get(cur.showing);
  for (const p of cur.pending.values()) if (!cur.deferred.has(p.id)) return p;
  return null;
}

function refreshPermDialog(focus = false) {
  const cur = state.cur;
  if (!cur || !cur.replayed || !cur.usable || cur.readOnly) { closePermDialog(); return; }
  const p = pickPermission(cur);
  if (!p) { closePermDialog(); return; }
  cur.showing = p.id;
  const list = [...cur.pending.keys()];
  els.permQueue.textContent = list.length > 1 ? `${list.indexOf(p.id) + 1} of ${list.length} requests` : '';
  if (permShownId === p.id && els.permDialog.open) return;
  permShownId = p.id;
  els.permDialog.dataset.permissionId = p.id;
  const tc = p.toolCall || {};
  clear(els.permTool);
  els.permTool.appendChild(h('div.perm-tool-head', kindIcon(tc.kind || 'other'),
    h('span.perm-tool-title', tc.title || 'Tool call'), tc.kind ? h('span.tool-kind', tc.kind) : null));
  if (Array.isArray(tc.locations) && tc.locations.length) {
    els.permTool.appendChild(h('ul.tool-locations', tc.locations.filter((l) => l && l.path).map((l) => h('li', h('code', l.line ? `${l.path}:${l.line}` : l.path)))));
  }
  if (Array.isArray(tc.content) && tc.content.length) els.permTool.appendChild(renderToolContent(tc));
  else if (tc.rawInput !== undefined && tc.rawInput !== null) {
    els.permTool.appendChild(h('pre.raw-input', h('code', JSON.stringify(tc.rawInput, null, 2).slice(0, 4000))));
  }
  clear(els.permOptions);
  const opts = Array.isArray(p.options) ? p.options : [];
  let firstAllow = null;
  for (const o of opts) {
    const kind = String(o.kind || '');
    const b = h('button.btn', {
      type: 'button',
      class: kind.startsWith('allow') ? 'btn-primary' : kind.startsWith('reject') ? 'btn-danger-outline' : 'btn-ghost',
      dataset: { optionId: o.optionId, kind },
      on: { click: () => { for (const x of els.permOptions.querySelectorAll('button')) x.disabled = true; cur.answer(p.id, o.optionId); } },
    }, o.name || o.optionId);
    if (!firstAllow && kind === 'allow_once') firstAllow = b;
    els.permOptions.appendChild(b);
  }
  if (!opts.length) els.permOptions.appendChild(h('p.muted', 'The agent offered no options.'));
  clearInterval(permTimer);
  const deadline = p.deadline ? new Date(p.deadline).getTime() : NaN;
  const tick = () => {
    if (!Number.isFinite(deadline)) { els.permDeadline.textContent = ''; return; }
    const s = Math.round((deadline - Date.now()) / 1000);
    els.permDeadline.textContent = s > 0
      ? `Expires in ${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')} — then it is denied.`
      : 'Expired: the gateway denies it now.';
  };
  tick();
  permTimer = setInterval(tick, 1000);
  if (!els.permDialog.open) els.permDialog.showModal();
  if (focus || document.activeElement === document.body || !els.permDialog.contains(document.activeElement)) {
    (els.permOptions.querySelector('button') || els.permLater).focus();
  }
}

// --- composer ------------------------------------------------------------------------------------------------------

let sending = false; // a POST …/prompt is in flight: the attachments are still in the tray until it answers

async function sendPrompt() {
  const cur = state.cur;
  const text = els.input.value;
  if (sending || (!text.trim() && !tray.items.length)) return;
  if (!cur) {
    await quickStart(text);
    return;
  }
  if (!cur.usable || cur.readOnly) return;
  if (cur.turn.running) {
    toast('A turn is running: wait for it or stop it first.', 'warn');
    return;
  }
  await submitPrompt(cur, text);
}

async function submitPrompt(cur, text) {
  const attached = tray.items.slice();
  els.send.disabled = true;
  els.input.value = '';
  updateHint();
  sending = true;
  try {
    // With attachments the prompt goes as ACP content blocks; they leave the tray once the gateway took it.
    const res = attached.length ? await api.promptBlocks(cur.id, promptBlocks(text, attached)) : await api.prompt(cur.id, text);
    sending = false;
    if (attached.length && state.cur === cur) tray.discard(attached);
    if (state.cur === cur && !cur.turn.running && res && res.turnId && !cur.transcript.turnEnds.has(res.turnId)) {
      // The turn_started frame normally arrives first; this covers the gap. A fast turn may have ended already.
      cur.turn = runningTurn(res.turnId, Date.now());
    }
  } catch (err) {
    sending = false;
    if (state.cur === cur && !els.input.value) els.input.value = text;
    if (isForbidden(err)) {
      cur.setReadOnly();
    } else {
      // A detached session whose agent cannot come back refuses every prompt: say so in the header too.
      if (err instanceof ApiError && err.code === 'session_not_resumable') {
        cur.notResumable = promptErrorText(err);
        if (state.cur === cur) renderHeader();
      }
      toast(promptErrorText(err), 'error', 12000);
    }
  }
  if (state.cur === cur) renderComposer();
}

async function cancelTurn() {
  const cur = state.cur;
  if (!cur || !cur.turn.running || cur.turn.cancelRequested || cur.readOnly) return;
  cur.turn.cancelRequested = true;
  renderComposer();
  try {
    await api.cancel(cur.id);
  } catch (err) {
    if (isForbidden(err)) {
      cur.turn.cancelRequested = false;
      cur.setReadOnly();
    } else if (!(err instanceof ApiError && err.code === 'no_turn')) {
      cur.turn.cancelRequested = false;
      toast('Could not cancel: ' + errorText(err), 'error');
    }
  }
  if (state.cur === cur) renderComposer();
}

// --- routing -------------------------------------------------------------------------------------------------------

function route() {
  const m = /^#\/s\/([^/]+)$/.exec(location.hash);
  const id = m ? decodeURIComponent(m[1]) : null;
  if (state.cur && state.cur.id === id) return;
  if (state.cur) state.cur.dispose();
  if (state.cur) tray.clear(); // attachments belong to the session they were meant for
  state.cur = null;
  shares.probe(null);
  setConn('idle');
  if (id) {
    state.cur = new Current(id);
    state.cur.start();
  }
  renderAll();
  if (id) els.input.focus();
}

// --- wiring --------------------------------------------------------------------------------------------------------

function wire() {
  els.menu.addEventListener('click', () => setSidebar(!els.app.classList.contains('sidebar-open')));
  els.sidebarClose.addEventListener('click', () => { setSidebar(false); els.menu.focus(); });
  els.backdrop.addEventListener('click', () => setSidebar(false));
  els.newSession.addEventListener('click', () => openNewDialog());
  els.emptyNew.addEventListener('click', () => openNewDialog());
  els.newForm.addEventListener('submit', createSession);
  els.newCancel.addEventListener('click', () => els.newDialog.close());
  els.closeSession.addEventListener('click', confirmClose);
  els.shareSession.addEventListener('click', () => shares.open());

  els.composer.addEventListener('submit', (ev) => { ev.preventDefault(); sendPrompt(); });
  els.input.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.altKey && !ev.ctrlKey && !ev.metaKey && !ev.isComposing) {
      ev.preventDefault();
      sendPrompt();
    }
  });
  els.input.addEventListener('input', updateHint);
  // Paste or drop files into the composer to attach them (when the agent takes any).
  els.input.addEventListener('paste', (ev) => {
    const files = ev.clipboardData ? [...ev.clipboardData.files] : [];
    if (!files.length || els.input.disabled) return;
    ev.preventDefault();
    tray.add(files);
  });
  const hasFiles = (ev) => ev.dataTransfer && [...ev.dataTransfer.types].includes('Files');
  els.composer.addEventListener('dragover', (ev) => {
    if (!hasFiles(ev) || els.input.disabled) return;
    ev.preventDefault();
    els.composer.classList.add('drop-target');
  });
  els.composer.addEventListener('dragleave', () => els.composer.classList.remove('drop-target'));
  els.composer.addEventListener('drop', (ev) => {
    els.composer.classList.remove('drop-target');
    if (!hasFiles(ev) || els.input.disabled) return;
    ev.preventDefault();
    tray.add([...ev.dataTransfer.files]);
  });
  els.cancel.addEventListener('click', cancelTurn);

  els.permLater.addEventListener('click', () => {
    const cur = state.cur;
    if (cur && cur.showing) cur.deferred.add(cur.showing);
    refreshPermDialog();
    if (!els.permDialog.open) els.input.focus();
  });
  els.permDialog.addEventListener('cancel', (ev) => {
    // Escape puts the request aside; the tool card keeps a "Review" button.
    ev.preventDefault();
    els.permLater.click();
  });

  document.addEventListener('keydown', (ev) => {
    if (ev.key !== 'Escape' || ev.defaultPrevented) return;
    if (document.querySelector('dialog[open]')) return;
    if (els.app.classList.contains('sidebar-open') && isNarrow()) {
      setSidebar(false);
      els.menu.focus();
      return;
    }
    if (state.cur && state.cur.turn.running) {
      ev.preventDefault();
      cancelTurn();
    }
  });

  els.transcript.addEventListener('click', (ev) => {
    const btn = ev.target.closest('button[data-copy]');
    if (!btn) return;
    const code = btn.closest('.code-block');
    const text = code ? code.querySelector('code').textContent : '';
    const done = (label) => { btn.textContent = label; setTimeout(() => { btn.textContent = 'Copy'; }, 1500); };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(() => done('Copied'), () => done('Copy failed'));
    } else {
      done('Copy failed');
    }
  });

  window.addEventListener('hashchange', route);
  window.matchMedia('(max-width: 860px)').addEventListener('change', () => setSidebar(false));
  setInterval(() => { if (!document.hidden) refreshSessions(); }, 5000);
  document.addEventListener('visibilitychange', () => { if (!document.hidden) refreshSessions(); });
}

wire();
loadMe();
loadAgents();
refreshSessions();
route();
