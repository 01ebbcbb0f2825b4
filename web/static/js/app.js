// The gateway's web UI: wires the open session's socket and REST answers into its store (state.js) and the page's
// (pagestate.js), and the person's events into calls; the views (views/) draw the regions. Talks only to /v1/... .

import { api, ApiError, token, setToken, setUnauthorizedHandler } from './api.js';
import { SessionSocket } from './conn.js';
import { Transcript } from './transcript.js';
import { createStore, fromSnapshot, initialState, keepSession } from './state.js';
import { EarlierLoader } from './earlier.js';
import { h, clear, icon } from './dom.js';
import { Ticker, fmtElapsed } from './elapsed.js';
import { attachCaps, promptBlocks } from './attach.js';
import { AttachmentTray } from './attachview.js';
import { acceptsPrompt, promptErrorText } from './status.js';
import { permissionVerdict, initials } from './people.js';
import { Elicitations } from './elicit.js';
import { withLogin, isLoginRequired, logoutAction, onLoginChange } from './login.js';
import { isForbidden } from './sharing.js';
import { ShareDialog } from './shareview.js';
import { planRegion } from './views/plan.js';
import { headerRegion } from './views/header.js';
import { selectorsRegion } from './views/selectors.js';
import { composerRegion } from './views/composer.js';
import { usageView } from './views/usage.js';
import { sidebarRegion } from './views/sidebar.js';
import { agentsRegion } from './views/agents.js';
import { permissionRegion } from './views/permission.js';
import { titleRegion } from './views/title.js';
import { initialPage, reducePage } from './pagestate.js';
import { PromptQueue, NEW_SESSION, canSendQueued, refusedAsTooEarly } from './queue.js';
import { WaitNotifier } from './markers.js';
import { canFork, forkErrorText } from './fork.js';
import { SlashMenu, commandHint } from './slash.js';
import { MentionMenu } from './mentions.js';
import { MessageActions } from './msgactions.js';
import { CwdPicker } from './cwdpicker.js';

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
  forkSession: $('fork-session'),
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
  planDetails: $('plan-details'),
  planCurrent: $('plan-current'),
  planState: $('plan-state'),
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
  queue: $('queue'),
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
  signin: $('signin'),
  signinForm: $('signin-form'),
  signinToken: $('signin-token'),
  signinReason: $('signin-reason'),
  signinError: $('signin-error'),
  signinSubmit: $('signin-submit'),
  sideAccount: $('side-account'),
  accountInitials: $('account-initials'),
  accountName: $('account-name'),
  accountVia: $('account-via'),
  signOut: $('sign-out'),
  notifyToggle: $('notify-toggle'),
};

// The regions drawn from the open session's store (views/); renderAll binds them to it.
const header = headerRegion(els, { meId: () => state.me && state.me.id, canFork });
const selectors = selectorsRegion(els, {
  async setMode(val) {
    const cur = state.cur;
    if (!cur) return;
    const prev = cur.store.state.currentModeId;
    try {
      await api.setMode(cur.id, val);
      cur.store.dispatch({ type: 'mode', currentModeId: val });
    } catch (err) {
      toast('Could not switch mode: ' + errorText(err), 'error');
      cur.store.dispatch({ type: 'mode', currentModeId: prev });
    }
    if (state.cur === cur) selectors.redraw(); // the select the person used comes back enabled, as the state says
  },
  async setConfig(opt, val) {
    const cur = state.cur;
    if (!cur) return;
    try {
      const res = await api.setConfig(cur.id, opt.id, val);
      if (res && Array.isArray(res.configOptions)) cur.store.dispatch({ type: 'configOptions', configOptions: res.configOptions });
      else cur.store.dispatch({ type: 'configValue', id: opt.id, value: val });
    } catch (err) {
      toast(`Could not change ${opt.name || opt.id}: ` + errorText(err), 'error');
    }
    if (state.cur === cur) selectors.redraw();
  },
});
const composer = composerRegion(els, {
  empty: () => ({ usable: !!page.state.defaultAgent || !!creating, startingAgent: state.starting || creating ? (state.starting || creating).agent : null, defaultAgent: page.state.defaultAgent }),
  setCaps: (on) => tray.setCaps(on ? promptCaps() : { image: false, file: false }),
  after: (startingAgent) => {
    updateHint();
    renderQueue(startingAgent);
    queueMicrotask(drainQueue);
  },
});

// The agents and sessions listed and the titles learnt (pagestate.js): the sidebar and the tab's title follow it.
const page = createStore(initialPage(), reducePage);
const sidebar = sidebarRegion(els, page, {
  onPick: () => { if (isNarrow()) setSidebar(false); },
  rename: async (id, title) => (await api.rename(id, title)).title,
  renamed: (id, title) => {
    page.dispatch({ type: 'renamed', id, title });
    if (state.cur && state.cur.id === id) state.cur.store.dispatch({ type: 'renamed', title });
  },
  onError: (err) => toast('Could not rename: ' + errorText(err), 'error'),
  watching: () => !document.hidden,
});
const agents = agentsRegion(els, { open: (name) => openNewDialog(name), logout: (a) => logoutAction(a, toast) });
const permission = permissionRegion(els, (pid, optionId) => { if (state.cur) state.cur.answer(pid, optionId); });
const regions = [header, selectors, planRegion(els), usageView(els.usage), composer, sidebar, permission, titleRegion(document, page)];

const state = {
  me: null, // the caller as GET /v1/me says: {id, name, role, via}; null until known
  cur: null,
  starting: null, // {agent} while the empty state's prompt starts a session
  queue: new PromptQueue(), // prompts typed while their session could not take them
  signedOut: false, // the sign-in view is up: the gateway refused the page's credential, or it has none
  started: false, // agents, sessions and the route have been loaded once (after the first accepted credential)
};

const notifier = new WaitNotifier({
  storage: localStorageOrNull(),
  onOpen: (id) => { location.hash = '#/s/' + encodeURIComponent(id); },
});

function localStorageOrNull() {
  try { return window.localStorage; } catch { return null; }
}

const tray = new AttachmentTray(
  { list: els.attachments, error: els.attachError, button: els.attach, input: els.attachInput },
  () => renderComposer(),
);

// Slash commands, @-mentions and per-message actions.
const slash = new SlashMenu(els.input, els.composer, () => (state.cur ? state.cur.commands : []));
const mentions = new MentionMenu(els.input, els.composer, {
  sessionId: () => (state.cur && state.cur.usable && !state.cur.readOnly ? state.cur.id : ''),
  search: (id, q, limit) => api.files(id, q, limit),
  onPick: (item) => tray.addItem(item),
});
const msgActions = new MessageActions(els.transcript, {
  entryOf: (el) => state.cur && state.cur.transcript.rowOf.get(el),
  isOwn: (el) => !el.dataset.prompter || (!!state.me && el.dataset.prompter === (state.me.name || state.me.id)),
  edit: (text, blocks) => editPrompt(text, blocks),
  resend: (text, blocks) => resendPrompt(text, blocks),
});

const cwdPicker = new CwdPicker(els.newCwd, (path) => api.workspaceDirs(path), (err) => {
  els.newError.textContent = 'Could not list folders: ' + errorText(err);
  els.newError.hidden = false;
});

// The open session's sharing dialog; a listing the gateway refuses (403, 404) hides the Share button.
const shares = new ShareDialog({
  dialog: els.shareDialog, owner: els.shareOwner, list: els.shareList, form: els.shareForm,
  principal: els.sharePrincipal, role: els.shareRole, add: els.shareAdd, error: els.shareError, close: els.shareClose,
}, (id, offered) => {
  if (state.cur && state.cur.id === id) {
    state.cur.store.dispatch({ type: 'sharing', offered });
  }
}, () => state.me);

// --- toasts --------------------------------------------------------------------------------------------------------

function toast(text, kind = 'info', ms = 6000) {
  // While signed out, the sign-in view says what is wrong; the calls it refused need no toasts of their own.
  if (state.signedOut && kind === 'error') return null;
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

async function refreshSessions() {
  const started = Date.now();
  try {
    const res = await api.sessions();
    const sessions = Array.isArray(res && res.sessions) ? res.sessions : [];
    const cur = state.cur;
    if (cur && cur.session) {
      const s = sessions.find((x) => x.id === cur.id);
      if (s && (s.status === 'closed' || s.status === 'failed') && cur.status !== s.status) {
        cur.setStatus(s.status, s.statusReason);
      } else if (!s && cur.usable && cur.loadedAt && cur.loadedAt < started) {
        cur.setStatus('closed', 'no longer listed by the gateway');
      }
    }
    page.dispatch({ type: 'sessions', sessions });
    notifier.update(sessions, { current: state.cur ? state.cur.id : '', visible: !document.hidden });
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 0)) toast('Could not list sessions: ' + errorText(err), 'error');
  }
}

// How the gateway identified the caller (GET /v1/me `via`), as the account area says it.
const VIA_TEXT = { token: 'the gateway token', users: 'users file', oidc: 'OIDC', proxy: 'via your proxy', none: '' };

/** Shows who is signed in: the name in the top bar and the sidebar's account area (sign-out where the tab holds a token). */
function applyMe(me) {
  sidebar.setPrincipal(me.id, localStorageOrNull());
  state.me = me;
  const name = me.name || me.id;
  els.me.textContent = name;
  els.me.title = `Signed in as ${me.id} (${me.role}, ${me.via})`;
  els.me.hidden = me.via === 'none';
  els.sideAccount.hidden = me.via === 'none';
  els.accountInitials.textContent = initials(name);
  els.accountName.textContent = name;
  els.accountName.title = me.id;
  const exp = me.expiresAt ? new Date(me.expiresAt) : null;
  const until = exp && !Number.isNaN(exp.getTime()) ? ` · until ${exp.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}` : '';
  els.accountVia.textContent = `${me.role}${VIA_TEXT[me.via] ? ' · ' + VIA_TEXT[me.via] : ''}${until}`;
  // A proxy's identity is not the page's to forget; a token the tab keeps is.
  els.signOut.hidden = !token();
  scheduleExpiry(exp);
  if (state.cur) shares.refresh();
  renderHeader();
}

let expiryTimer = 0;

/** An OIDC token ends at expiresAt: ask the gateway again then, so the page says so before the next click fails. */
function scheduleExpiry(exp) {
  clearTimeout(expiryTimer);
  const ms = exp ? exp.getTime() - Date.now() + 1000 : NaN;
  if (Number.isFinite(ms) && ms > 0 && ms < 2 ** 31) expiryTimer = setTimeout(checkCredential, ms);
}

/** GET /v1/me: who is calling. A 401 brings up the sign-in view (through the API's unauthorized handler). */
async function loadMe() {
  try {
    applyMe(await api.me());
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return false;
    if (!(err instanceof ApiError && err.status === 0)) console.warn('GET /v1/me:', errorText(err));
    return true; // the gateway is unreachable or old: carry on; the calls that matter will say so
  }
}

/** Asks the gateway whether the page's credential still holds (a socket closed by policy, an OIDC expiry). */
function checkCredential() {
  if (!state.signedOut) loadMe();
}

// --- signing in ----------------------------------------------------------------------------------------------------

const SIGNIN_REASON = {
  needed: 'This gateway needs an access token.',
  expired: 'Your sign-in is no longer accepted: the token expired or was revoked. Sign in again; what you typed is kept.',
  rejected: 'The token this tab had was not accepted. Enter yours.',
  signedout: 'You signed out. Sign in again to go on.',
};

/** Covers the app with the sign-in view; why: needed, expired or signedout. */
function showSignIn(why) {
  if (state.signedOut && why !== 'signedout') return;
  state.signedOut = true;
  clearTimeout(expiryTimer);
  els.signinReason.textContent = SIGNIN_REASON[why] || SIGNIN_REASON.needed;
  els.signinError.hidden = true;
  els.signinToken.value = '';
  els.signinSubmit.disabled = false;
  els.app.inert = true;
  for (const d of document.querySelectorAll('dialog[open]')) d.close();
  els.signin.hidden = false;
  els.signinToken.focus();
}

/** The API refused the page's credential: a tab without a token was never signed in; one with a token lost it. */
function onUnauthorized() {
  showSignIn(state.started ? 'expired' : token() ? 'rejected' : 'needed');
}

async function submitSignIn(ev) {
  ev.preventDefault();
  const t = els.signinToken.value.trim();
  const fail = (text) => {
    els.signinError.textContent = text;
    els.signinError.hidden = false;
    els.signinSubmit.disabled = false;
    els.signinToken.focus();
  };
  if (!t) { fail('Enter your access token.'); return; }
  els.signinSubmit.disabled = true;
  els.signinError.hidden = true;
  let me;
  try {
    me = await api.meWith(t);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) fail('That token was not accepted. Check it and try again.');
    else if (err instanceof ApiError && err.status === 429) fail('Too many failed attempts from this address: wait a minute, then try again.');
    else if (err instanceof ApiError && err.status === 0) fail('The gateway could not be reached.');
    else fail('Could not sign in: ' + errorText(err));
    return;
  }
  setToken(t);
  signedIn(me);
}

/** A credential was accepted: hide the view and (re)load what it lets the page see, the open session included. */
function signedIn(me) {
  state.signedOut = false;
  els.signin.hidden = true;
  els.app.inert = false;
  applyMe(me);
  loadAgents();
  refreshSessions();
  if (!state.started) {
    state.started = true;
    route();
  } else {
    // Its socket was refused or closed by policy: open the session afresh (the composer and the queue stay).
    if (state.cur) state.cur.dispose();
    state.cur = null;
    route();
  }
  els.input.focus();
}

function signOut() {
  setToken('');
  if (state.cur) state.cur.dispose();
  state.cur = null;
  state.me = null;
  page.dispatch({ type: 'signedOut' });
  state.queue = new PromptQueue(); // what one person typed is not left for the next one
  els.input.value = '';
  tray.clear();
  history.replaceState(null, '', location.pathname + location.search);
  els.me.hidden = true;
  els.sideAccount.hidden = true;
  renderAll();
  setConn('idle');
  if (isNarrow()) setSidebar(false);
  showSignIn('signedout');
}

/** Shows whether waiting requests are announced by the browser, and whether the browser lets them be. */
function renderNotifyToggle() {
  const b = els.notifyToggle;
  b.hidden = !notifier.supported;
  const p = notifier.permission;
  b.setAttribute('aria-pressed', notifier.on ? 'true' : 'false');
  b.title = notifier.on ? 'Notifications on: the browser tells you when an agent waits for you (click to turn off)'
    : p === 'denied' ? 'Notifications are blocked for this site in the browser\'s settings'
      : 'Notify me when an agent waits for me';
}

async function toggleNotifications() {
  if (notifier.on) {
    notifier.disable();
  } else {
    const p = await notifier.enable();
    if (p === 'denied') toast('The browser blocks notifications for this page; allow them in its site settings.', 'error');
  }
  renderNotifyToggle();
}

async function loadAgents() {
  try {
    const res = await api.agents();
    page.dispatch({ type: 'agents', agents: res && res.agents, default: res && res.default });
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
  page.dispatch({ type: 'listed', session: s });
  refreshSessions();
}

let creating = null; // {agent} while the dialog's POST /v1/sessions is in flight

function openNewDialog(agent) {
  if (isNarrow()) setSidebar(false);
  if (creating) {
    els.newDialog.showModal();
    els.newStarting.focus();
    return;
  }
  els.newError.hidden = true;
  cwdPicker.reset();
  if (agent) els.newAgent.value = agent;
  else if (page.state.defaultAgent) els.newAgent.value = page.state.defaultAgent;
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
  creating = { agent: body.agent || page.state.defaultAgent };
  els.newError.hidden = true;
  els.newCreate.hidden = true;
  const stop = showStarting(els.newStarting, body.agent || page.state.defaultAgent);
  els.newStarting.focus();
  try {
    const s = await withLogin(() => api.createSession(body));
    // The dialog may have been dismissed while the agent started: then list the session but stay where we are,
    // unless prompts typed meanwhile in the empty state wait for it.
    const wanted = els.newDialog.open || state.queue.of(NEW_SESSION).length > 0;
    if (els.newDialog.open) els.newDialog.close();
    if (wanted) openCreated(s);
    else {
      adoptSession(s);
      toast(`The session with ${s.agent || 'the agent'} is ready.`, 'info');
    }
  } catch (err) {
    if (!state.starting) restoreQueued(NEW_SESSION);
    if (els.newDialog.open) {
      els.newError.textContent = errorText(err);
      els.newError.hidden = false;
    } else {
      toast('Could not create the session: ' + errorText(err), 'error');
    }
  } finally {
    stop();
    els.newCreate.hidden = false;
    creating = null;
    renderComposer();
  }
}

/**
 * The empty state's prompt: starts a session with the default agent and opens it; the prompts queued for the new
 * session are sent there once it is live. If it cannot start, they go back into the composer.
 */
async function quickStart() {
  const agent = page.state.defaultAgent;
  if (!agent || state.starting || creating) return;
  state.starting = { agent };
  const stop = showStarting(els.emptyStarting, agent);
  renderComposer();
  let s;
  try {
    s = await withLogin(() => api.createSession({ agent, permissionPolicy: 'ask' }));
  } catch (err) {
    toast(`Could not start a session with ${agent}: ` + errorText(err), 'error');
    return;
  } finally {
    stop();
    state.starting = null;
    if (!s && !creating) restoreQueued(NEW_SESSION);
    renderComposer();
  }
  openCreated(s);
}

/** Lists and opens a session just created; the prompts queued for "the new session" now wait for this one. */
function openCreated(s) {
  adoptSession(s);
  state.queue.retarget(NEW_SESSION, s.id);
  location.hash = '#/s/' + encodeURIComponent(s.id);
  route();
}

/** Forks the current session and opens the fork. */
async function forkCurrent() {
  const cur = state.cur;
  if (!cur) return;
  els.forkSession.disabled = true;
  try {
    openCreated(await api.forkSession(cur.id));
    toast('Forked: this session starts with the conversation so far.', 'info');
  } catch (err) {
    if (isForbidden(err)) cur.setReadOnly();
    toast(forkErrorText(err) || 'Could not fork the session: ' + errorText(err), 'error');
  } finally {
    els.forkSession.disabled = false;
  }
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
    this.disposed = false;
    this.sending = false; // a POST …/prompt from this page is in flight
    this.held = false; // the gateway refused a queued prompt as too early: wait for the next turn or status frame
    // The transcript's rows live in the store (state.js); the transcript view renders them.
    this.store = createStore({ ...initialState(), detail: { id } }); // the detail until GET …/{id} answers
    this.transcript = new Transcript(els.transcript, {
      onReviewPermission: (pid) => this.review(pid),
      meId: () => state.me && state.me.id,
      onEarlier: () => this.earlier.load(),
    });
    this.store.subscribe((st, frame, fresh = !frame) => this.transcript.show(st, fresh));
    this.earlier = new EarlierLoader(this.store, (after, limit) => api.events(this.id, after, limit));
    // How many questions wait is the store's (the list and the tab's title count them); not once disposed.
    this.elicit = new Elicitations(id, els.composer, api.answerElicitation, (count) => {
      if (!this.disposed) this.store.dispatch({ type: 'questions', count });
    });
    this.socket = null;
  }

  async start() {
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
    // A long log opens from the snapshot and streams on after its seq; a short one is replayed whole, which also
    // says who prompted each turn and who answered each permission (a snapshot names nobody).
    const fromSnap = s.snapshot && s.lastSeq > FULL_REPLAY_MAX;
    if (fromSnap) this.loadSnapshot(s);
    this.applySession(s, fromSnap);
    shares.probe(this.id);
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
    page.dispatch({ type: 'title', id: this.id, title: this.store.state.title }); // the list keeps it
  }

  applySession(s, fromSnapshot) {
    this.session = s;
    this.loadedAt = Date.now();
    this.store.dispatch({ type: 'session', view: s, fromSnapshot }); // status, its reason, the last turn's end
    if (fromSnapshot) this.elicit.reset();
    this.elicit.load(s.pendingElicitations);
    page.dispatch({ type: 'listed', session: s });
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
    renderAll();
  }

  onConnState(st, detail) {
    if (this.disposed) return;
    if (st === 'replaying' || st === 'resyncing') this.store.dispatch({ type: 'replaying' });
    setConn(st, detail);
    if (st === 'closed' && detail && detail.code === 4009) this.setStatus('closed');
    if (st === 'closed' && detail && detail.code === 4004) this.setStatus('closed', 'not found');
    // 1008 after the upgrade: the credential was revoked or expired (or the origin refused). Ask who we are.
    if (st === 'closed' && detail && detail.code === 1008) checkCredential();
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
          if (p.error) toast('The turn failed: ' + (typeof p.error === 'string' ? p.error : p.error.message || 'error'), 'error');
        }
        break;
      case '_gateway/session_status':
        if (this.replayed) renderAll();
        break;
      case '_gateway/replay_complete':
        this.transcript.flush();
        if (!this.opened) this.transcript.scrollToEnd(); // a session opens at its end; a resume keeps the row read
        this.opened = true;
        renderAll();
        break;
      case '_gateway/presence':
        break; // the watchers: state.js
      case '_gateway/slow_client':
        toast('This page is falling behind the session; it may reconnect.', 'warn');
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
    const v = permissionVerdict(p, (req && req.options) || [], state.me && state.me.id);
    if (this.replayed && !mine) {
      const title = (req && req.toolCall && req.toolCall.title) || 'a tool call';
      if (by === 'deadline') toast(`The permission request for “${title}” timed out and was denied.`, 'warn');
      else if (by === 'client' || by === 'rest' || by === 'acp') {
        // Brief: the tool card keeps who answered; this only says why the dialog went away.
        toast(`“${title}” was answered ${v.name ? `by ${v.name}` : 'in another client'}: ${v.choice || v.text}.`, 'info', 4000);
      }
    }
  }

  review(pid) {
    if (state.cur === this) permission.review(this.store, pid);
  }

  async answer(pid, optionId) {
    this.store.dispatch({ type: 'permAnswer', id: pid }); // hidden here until the gateway confirms
    try {
      await api.answerPermission(this.id, pid, optionId);
    } catch (err) {
      if (err instanceof ApiError && (err.status === 409 || err.status === 404)) {
        toast('That permission request was already answered or is gone.', 'info');
        this.store.dispatch({ type: 'permAnswerFailed', id: pid, outcome: 'gone' });
      } else if (isForbidden(err)) {
        this.store.dispatch({ type: 'permAnswerFailed', id: pid, outcome: 'forbidden' });
        this.setReadOnly();
      } else {
        this.store.dispatch({ type: 'permAnswerFailed', id: pid, outcome: 'error' });
        toast('Could not answer the permission request: ' + errorText(err), 'error');
      }
    }
  }

  /** The gateway refused an act with 403 forbidden: the session is shared with us to watch only. */
  setReadOnly() {
    this.store.dispatch({ type: 'readOnly' });
    renderComposer();
  }

  // What the session's frames (or its snapshot) say, folded by state.js.
  get plan() { return this.store.state.plan; }
  get usage() { return this.store.state.usage; }
  get commands() { return this.store.state.commands; }
  get status() { return this.store.state.status; }
  get statusReason() { return this.store.state.statusReason; }
  get readOnly() { return this.store.state.readOnly; }
  get replayed() { return this.store.state.replayed; }
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

// --- rendering of the current session ------------------------------------------------------------------------------

function renderAll() {
  const store = state.cur ? state.cur.store : null;
  for (const r of regions) r.bind(store);
  renderComposer();
}

/** Draws the header again for what its slice does not hold (who is signed in). */
function renderHeader() {
  header.redraw();
}

/** Draws the composer again for what its slice does not hold (the empty state, the queue, the agents). */
function renderComposer() {
  composer.redraw();
}

// --- queued prompts ------------------------------------------------------------------------------------------------

/** The queue's target on screen: the open session, or the session the empty state is starting. */
function queueTarget() {
  return state.cur ? state.cur.id : NEW_SESSION;
}

/** What canSendQueued needs to know of a session. */
function sendability(cur) {
  return {
    loaded: !!cur.session && cur.replayed, status: cur.status, running: cur.turn.running, sending: cur.sending,
    readOnly: cur.readOnly, held: cur.held,
  };
}

/** Why the queued prompts wait, said above them. */
function queueWaitText(items, startingAgent) {
  const failed = items.find((x) => x.error);
  if (failed) return `Not sent: ${failed.error} Retry, edit or remove it.`;
  const cur = state.cur;
  if (!cur) return startingAgent ? `Sends when ${startingAgent} is ready.` : 'Sends when the session is ready.';
  if (cur.readOnly) return 'This session is shared with you as viewer: these prompts cannot be sent.';
  if (!cur.usable) return `This session is ${cur.status}: edit these prompts into another one.`;
  if (cur.turn.running) return 'Sends when the turn ends.';
  return 'Sends when the session is ready.';
}

function renderQueue(startingAgent) {
  const items = state.queue.of(queueTarget());
  clear(els.queue);
  els.queue.hidden = !items.length;
  if (!items.length) return;
  els.queue.appendChild(h('li.queue-wait', { role: 'status' }, icon('clock'), h('span', queueWaitText(items, startingAgent))));
  for (const it of items) {
    const extra = it.attachments.length ? ` + ${it.attachments.length} attachment${it.attachments.length > 1 ? 's' : ''}` : '';
    els.queue.appendChild(h('li.queue-item', { dataset: { queueKey: String(it.key), failed: String(!!it.error) } },
      h('span.queue-badge', it.error ? 'Not sent' : 'Queued'),
      h('span.queue-text', { title: it.text }, it.text),
      extra ? h('span.queue-extra', extra) : null,
      it.error ? h('button.btn.btn-small.queue-retry', { type: 'button', on: { click: () => retryQueued(it) } }, 'Retry') : null,
      h('button.icon-btn.queue-edit', { type: 'button', 'aria-label': 'Edit this queued prompt', title: 'Edit: back into the composer', on: { click: () => editQueued(it.key) } }, icon('edit')),
      h('button.icon-btn.queue-remove', { type: 'button', 'aria-label': 'Remove this queued prompt', title: 'Remove: it is not sent', on: { click: () => removeQueued(it.key) } }, icon('close'))));
  }
}

/** Queues what the composer holds (its text and attachments) for target and empties the composer. */
function queueComposer(target, text) {
  const attached = tray.items.slice();
  tray.discard(attached);
  state.queue.add(target, text, attached);
  els.input.value = '';
  updateHint();
}

/** Puts every prompt queued for target back into the composer (a session that could not start). */
function restoreQueued(target) {
  const items = [];
  for (let it = state.queue.take(target); it; it = state.queue.take(target)) items.push(it);
  if (!items.length) return;
  els.input.value = [...items.map((x) => x.text), els.input.value].filter((t) => t.trim()).join('\n\n');
  tray.restore(items.flatMap((x) => x.attachments));
  updateHint();
}

function editQueued(key) {
  const it = state.queue.remove(key);
  if (!it) return;
  els.input.value = [it.text, els.input.value].filter((t) => t.trim()).join('\n');
  tray.restore(it.attachments);
  renderComposer();
  els.input.focus();
}

function removeQueued(key) {
  state.queue.remove(key);
  renderComposer();
  els.input.focus();
}

function retryQueued(it) {
  it.error = '';
  renderComposer();
}

/** Sends the open session's oldest queued prompt when the session can take it. */
function drainQueue() {
  const cur = state.cur;
  if (!cur || cur.disposed || state.signedOut || !canSendQueued(sendability(cur))) return;
  const first = state.queue.of(cur.id)[0];
  if (!first || first.error) return;
  state.queue.take(cur.id);
  submitPrompt(cur, first.text, first.attachments, first);
}

/** What the agent of the current session (or the default agent, for the empty state) accepts beyond text. */
function promptCaps() {
  const cur = state.cur;
  const name = cur ? cur.session && cur.session.agent : page.state.defaultAgent;
  const agent = page.state.agents.find((a) => a.name === name);
  return attachCaps((cur && cur.session && cur.session.agentCapabilities) || (agent && agent.capabilities));
}

function updateHint() {
  const cur = state.cur;
  const v = els.input.value;
  let text = '';
  const picked = cur && /^\/\S+\s/.test(v) ? commandHint(cur.commands, v.slice(1).split(/\s/)[0]) : '';
  if (picked) {
    text = picked; // the list of commands is slash.js's; once one is written, what it takes
  } else if (cur && cur.turn.running) {
    text = cur.turn.cancelRequested ? 'Stopping the turn…' : 'The agent is working. Esc stops it; Enter queues a prompt.';
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

// --- composer ------------------------------------------------------------------------------------------------------

/**
 * Enter or Send: the prompt goes now when the session can take it; otherwise (the session is starting, a turn runs,
 * a prompt is in flight, or others wait before it) it is queued and sent in its turn. Nothing typed is dropped.
 */
async function sendPrompt() {
  const cur = state.cur;
  const text = els.input.value;
  if (!text.trim() && !tray.items.length) return;
  if (!cur) {
    if (!page.state.defaultAgent && !creating) return;
    queueComposer(NEW_SESSION, text);
    if (!creating) quickStart();
    renderComposer();
    return;
  }
  if (!cur.usable || cur.readOnly) return;
  if (state.queue.of(cur.id).length || !canSendQueued(sendability(cur))) {
    queueComposer(cur.id, text);
    renderComposer();
    return;
  }
  const attached = tray.items.slice();
  els.input.value = '';
  updateHint();
  await submitPrompt(cur, text, attached, null);
}

/**
 * POST …/prompt. item is the queued prompt being sent (null for one straight from the composer, whose attachments
 * stay in the tray until the gateway took them). A prompt refused as too early (a turn started elsewhere, the
 * session is not ready) is queued to go later; other refusals keep the text where the person can act on it.
 */
async function submitPrompt(cur, text, attached, item) {
  cur.sending = true;
  if (state.cur === cur) renderComposer();
  let err = null;
  let res;
  try {
    // With attachments the prompt goes as ACP content blocks.
    // A prompt that re-attaches a detached session may need the agent's login again (a restart forgets logins).
    res = await withLogin(() => (attached.length ? api.promptBlocks(cur.id, promptBlocks(text, attached)) : api.prompt(cur.id, text)));
  } catch (e) {
    err = e;
  }
  cur.sending = false;
  if (!err) {
    if (!item && attached.length) tray.discard(attached);
    if (!cur.turn.running && res && res.turnId && !cur.store.state.ended[res.turnId]) {
      // The turn_started frame normally arrives first; this covers the gap. A fast turn may have ended already.
      cur.store.dispatch({ type: 'prompted', turnId: res.turnId, at: Date.now() });
    }
  } else if (err instanceof ApiError && (refusedAsTooEarly(err.code) || err.status === 401)) {
    // Too early, or signed out meanwhile: it waits in the queue for the next chance (or the next sign-in).
    cur.held = true;
    if (!item) tray.discard(attached);
    const again = item || state.queue.remove(state.queue.add(cur.id, text, attached).key);
    state.queue.putBack(again);
  } else if (item) {
    state.queue.putBack(item);
    if (isForbidden(err)) cur.setReadOnly();
    else {
      item.error = promptErrorText(err).replace(/^Could not send the prompt: /, '');
      toast(promptErrorText(err), 'error', 12000);
    }
  } else {
    // The text goes back into the composer; if the person typed meanwhile (or left), it waits in the queue.
    // A login the person dismissed: the prompt waits in the queue, not sent, with its reason and Retry.
    if (isLoginRequired(err)) tray.discard(attached);
    if (state.cur === cur && !els.input.value && !isLoginRequired(err)) els.input.value = text;
    else state.queue.add(cur.id, text, isLoginRequired(err) ? attached : []).error = promptErrorText(err).replace(/^Could not send the prompt: /, '');
    if (isForbidden(err)) {
      cur.setReadOnly();
    } else {
      // A detached session whose agent cannot come back refuses every prompt: say so in the header too.
      if (err instanceof ApiError && err.code === 'session_not_resumable') {
        cur.store.dispatch({ type: 'notResumable', text: promptErrorText(err) });
      }
      toast(promptErrorText(err), 'error', 12000);
    }
  }
  if (state.cur === cur) renderComposer();
}

/** Blocks of a sent message as composer items (the shape of attachments), to send or edit again. */
function itemsOf(blocks) {
  return (blocks || []).filter((b) => b && typeof b === 'object' && b.type)
    .map((b) => ({ kind: b.type === 'resource_link' ? 'mention' : b.type, name: b.name || '', size: 0, block: b }));
}

/** Edit and resend: a sent prompt goes back into the composer; sending it makes a new turn. */
function editPrompt(text, blocks) {
  const cur = state.cur;
  if (!cur || !cur.usable || cur.readOnly) return;
  els.input.value = text;
  tray.restore(itemsOf(blocks));
  updateHint();
  els.input.focus();
  els.input.setSelectionRange(text.length, text.length);
}

/** Retry: the same prompt again, now or (a turn runs, others wait) queued. */
function resendPrompt(text, blocks) {
  const cur = state.cur;
  if (!cur || !cur.usable || cur.readOnly || (!text.trim() && !blocks.length)) return;
  const items = itemsOf(blocks);
  if (state.queue.of(cur.id).length || !canSendQueued(sendability(cur))) {
    state.queue.add(cur.id, text, items);
    renderComposer();
    return;
  }
  submitPrompt(cur, text, items, null);
}

async function cancelTurn() {
  const cur = state.cur;
  if (!cur || !cur.turn.running || cur.turn.cancelRequested || cur.readOnly) return;
  cur.store.dispatch({ type: 'cancel', requested: true });
  try {
    await api.cancel(cur.id);
  } catch (err) {
    if (isForbidden(err)) {
      cur.store.dispatch({ type: 'cancel', requested: false });
      cur.setReadOnly();
    } else if (!(err instanceof ApiError && err.code === 'no_turn')) {
      cur.store.dispatch({ type: 'cancel', requested: false });
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
  agents.bind(page);
  onLoginChange(() => agents.redraw()); // the sidebar's "Log out" follows what the caller holds
  els.menu.addEventListener('click', () => setSidebar(!els.app.classList.contains('sidebar-open')));
  els.sidebarClose.addEventListener('click', () => { setSidebar(false); els.menu.focus(); });
  els.backdrop.addEventListener('click', () => setSidebar(false));
  els.newSession.addEventListener('click', () => openNewDialog());
  els.emptyNew.addEventListener('click', () => openNewDialog());
  els.newForm.addEventListener('submit', createSession);
  els.newCancel.addEventListener('click', () => els.newDialog.close());
  els.closeSession.addEventListener('click', confirmClose);
  els.forkSession.addEventListener('click', forkCurrent);
  els.shareSession.addEventListener('click', () => shares.open());
  els.signinForm.addEventListener('submit', submitSignIn);
  els.signOut.addEventListener('click', signOut);
  els.notifyToggle.addEventListener('click', toggleNotifications);

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
    if (cur) cur.store.dispatch({ type: 'permDefer', id: cur.store.state.showing });
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

  window.addEventListener('hashchange', () => { if (state.started && !state.signedOut) route(); });
  // Queued prompts live in the page: leaving it (reload, close) asks first rather than drop them.
  window.addEventListener('beforeunload', (ev) => {
    if (!state.queue.items.length) return;
    ev.preventDefault();
    ev.returnValue = '';
  });
  window.matchMedia('(max-width: 860px)').addEventListener('change', () => setSidebar(false));
  // A hidden tab keeps listing only to notify: markers are redrawn when it is shown.
  const poll = () => { if ((!document.hidden || notifier.on) && state.started && !state.signedOut) refreshSessions(); };
  setInterval(poll, 5000);
  document.addEventListener('visibilitychange', poll);
}

/** Who is calling decides what loads: without an accepted credential, only the sign-in view. */
async function boot() {
  wire();
  renderNotifyToggle();
  setUnauthorizedHandler(onUnauthorized);
  if (!(await loadMe())) return; // the sign-in view is up; signedIn() loads the rest
  state.started = true;
  loadAgents();
  refreshSessions();
  route();
}

boot();
