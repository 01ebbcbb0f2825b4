// The gateway's web UI: the page's wiring. The open session (session.js) folds its socket and REST answers into its
// store (state.js), the page's store (pagestate.js) holds the agents and sessions listed, and the views (views/)
// draw the regions from both; this file creates them, hands each what it needs and routes. Talks only to /v1/... .

import { api, ApiError, errorText, token, setToken, setUnauthorizedHandler } from './api.js';
import { createStore } from './state.js';
import { h, icon } from './dom.js';
import { attachCaps } from './attach.js';
import { AttachmentTray } from './attachview.js';
import { logoutAction, onLoginChange } from './login.js';
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
import { queueView } from './views/queue.js';
import { connPill } from './views/connpill.js';
import { notifyToggle } from './views/notify.js';
import { initialPage, reducePage } from './pagestate.js';
import { NEW_SESSION } from './queue.js';
import { WaitNotifier } from './markers.js';
import { canFork, forkErrorText } from './fork.js';
import { SlashMenu } from './slash.js';
import { MentionMenu } from './mentions.js';
import { MessageActions } from './msgactions.js';
import { OpenSession } from './session.js';
import { SessionStarter } from './newsession.js';
import { PromptSender } from './prompts.js';
import { SignIn } from './signin.js';

const $ = (id) => document.getElementById(id);

// The page's own controls; the views and modules find the elements they draw into.
const els = {
  app: $('app'), sidebar: $('sidebar'), backdrop: $('backdrop'), menu: $('menu-toggle'), sidebarClose: $('sidebar-close'),
  newSession: $('new-session'), emptyNew: $('empty-new-session'), closeSession: $('close-session'),
  forkSession: $('fork-session'), shareSession: $('share-session'), transcript: $('transcript'), composer: $('composer'),
  input: $('prompt-input'), attach: $('attach'), permDialog: $('perm-dialog'), permLater: $('perm-later'),
  confirmDialog: $('confirm-dialog'), toasts: $('toasts'),
};

const state = {
  me: null, // the caller as GET /v1/me says: {id, name, role, via}; null until known
  cur: null, // the open session (session.js), or null
  started: false, // agents, sessions and the route have been loaded once (after the first accepted credential)
};

// The regions drawn from the open session's store (views/); renderAll binds them to it.
const header = headerRegion({ meId: () => state.me && state.me.id, canFork });
const selectors = selectorsRegion({
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
const composer = composerRegion({
  empty: () => ({ usable: !!page.state.defaultAgent || !!starter.creating, startingAgent: starter.startingAgent, defaultAgent: page.state.defaultAgent }),
  setCaps: (on) => tray.setCaps(on ? promptCaps() : { image: false, file: false }),
  after: (startingAgent) => {
    sender.updateHint();
    queue.draw(sender.queue.of(state.cur ? state.cur.id : NEW_SESSION), state.cur, startingAgent);
    queueMicrotask(() => sender.drainQueue());
  },
});

// The agents and sessions listed and the titles learnt (pagestate.js): the sidebar and the tab's title follow it.
const page = createStore(initialPage(), reducePage);
const sidebar = sidebarRegion(page, {
  onPick: () => { if (isNarrow()) setSidebar(false); },
  rename: async (id, title) => (await api.rename(id, title)).title,
  renamed: (id, title) => {
    page.dispatch({ type: 'renamed', id, title });
    if (state.cur && state.cur.id === id) state.cur.store.dispatch({ type: 'renamed', title });
  },
  onError: (err) => toast('Could not rename: ' + errorText(err), 'error'),
  watching: () => !document.hidden,
});
const agents = agentsRegion({ open: (name) => starter.open(name), logout: (a) => logoutAction(a, toast) });
const permission = permissionRegion((pid, optionId) => { if (state.cur) state.cur.answer(pid, optionId); });
const regions = [header, selectors, planRegion(), usageView($('usage')), composer, sidebar, permission, titleRegion(document, page)];


const notifier = new WaitNotifier({
  storage: localStorageOrNull(),
  onOpen: (id) => { location.hash = '#/s/' + encodeURIComponent(id); },
});

function localStorageOrNull() {
  try { return window.localStorage; } catch { return null; }
}

const tray = new AttachmentTray(
  { list: $('attachments'), error: $('attach-error'), button: els.attach, input: $('attach-input') },
  () => renderComposer(),
);

// Starting sessions (the new-session dialog, the empty state's prompt) and sending prompts, now or queued.
const starter = new SessionStarter({
  api, page, toast, errorText,
  queue: () => sender.queue,
  beforeOpen: () => { if (isNarrow()) setSidebar(false); },
  listed: (s) => adoptSession(s),
  opened: (s) => openCreated(s),
  restoreQueued: (target) => sender.restoreQueued(target),
  changed: () => renderComposer(),
});
const sender = new PromptSender({
  api, page, tray, starter, toast,
  cur: () => state.cur,
  signedOut: () => signin.signedOut,
  changed: () => renderComposer(),
});
const queue = queueView($('queue'), {
  retry: (it) => sender.retryQueued(it),
  edit: (key) => sender.editQueued(key),
  remove: (key) => sender.removeQueued(key),
});

// Who is calling, and the sign-in view when the gateway refuses the page's credential.
const signin = new SignIn({
  api, token, setToken, errorText,
  started: () => state.started,
  onMe: (me) => applyMe(me),
  onSignedIn: (me) => signedIn(me),
});
const pill = connPill();

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
  edit: (text, blocks) => sender.editPrompt(text, blocks),
  resend: (text, blocks) => sender.resendPrompt(text, blocks),
});

// The open session's sharing dialog; a listing the gateway refuses (403, 404) hides the Share button.
const shares = new ShareDialog({
  dialog: $('share-dialog'), owner: $('share-owner'), list: $('share-list'), form: $('share-form'),
  principal: $('share-principal'), role: $('share-role'), add: $('share-add'), error: $('share-error'), close: $('share-close'),
}, (id, offered) => {
  if (state.cur && state.cur.id === id) {
    state.cur.store.dispatch({ type: 'sharing', offered });
  }
}, () => state.me);

// --- toasts --------------------------------------------------------------------------------------------------------

function toast(text, kind = 'info', ms = 6000) {
  // While signed out, the sign-in view says what is wrong; the calls it refused need no toasts of their own.
  if (signin.signedOut && kind === 'error') return null;
  const el = h('div.toast', { class: 'toast-' + kind, dataset: { kind } },
    h('span.toast-text', text),
    h('button.icon-btn.toast-close', { type: 'button', 'aria-label': 'Dismiss', on: { click: () => el.remove() } }, icon('close')));
  els.toasts.appendChild(el);
  while (els.toasts.childElementCount > 4) els.toasts.firstElementChild.remove();
  setTimeout(() => el.remove(), ms);
  return el;
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


// --- who is signed in ----------------------------------------------------------------------------------------------

/** The caller is known: the account area, the sidebar's markers (kept per person) and the header follow. */
function applyMe(me) {
  sidebar.setPrincipal(me.id, localStorageOrNull());
  state.me = me;
  signin.showAccount(me);
  if (state.cur) shares.refresh();
  header.redraw();
}

/** A credential was accepted: hide the view and (re)load what it lets the page see, the open session included. */
function signedIn(me) {
  signin.hide();
  applyMe(me);
  loadAgents();
  refreshSessions();
  if (!state.started) {
    state.started = true;
  } else {
    // Its socket was refused or closed by policy: open the session afresh (the composer and the queue stay).
    if (state.cur) state.cur.dispose();
    state.cur = null;
  }
  route();
  els.input.focus();
}

function signOut() {
  setToken('');
  if (state.cur) state.cur.dispose();
  state.cur = null;
  state.me = null;
  page.dispatch({ type: 'signedOut' });
  sender.reset(); // what one person typed is not left for the next one
  tray.clear();
  history.replaceState(null, '', location.pathname + location.search);
  signin.hideAccount();
  renderAll();
  pill.set('idle');
  if (isNarrow()) setSidebar(false);
  signin.show('signedout');
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

// --- sessions created, forked, closed ------------------------------------------------------------------------------

/** Lists a session the gateway just created. */
function adoptSession(s) {
  page.dispatch({ type: 'listed', session: s });
  refreshSessions();
}

/** Lists and opens a session just created; the prompts queued for "the new session" now wait for this one. */
function openCreated(s) {
  adoptSession(s);
  sender.queue.retarget(NEW_SESSION, s.id);
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

// --- the open session ----------------------------------------------------------------------------------------------

/** What an open session may reach of the page (session.js). */
const sessionCtx = {
  api, page, toast,
  transcriptEl: els.transcript,
  composerEl: els.composer,
  meId: () => state.me && state.me.id,
  setConn: (st, detail) => pill.set(st, detail),
  changed: (all = true) => (all ? renderAll() : renderComposer()),
  checkCredential: () => signin.check(),
  probeShares: (id) => shares.probe(id),
  review: (cur, pid) => { if (state.cur === cur) permission.review(cur.store, pid); },
};

/** Binds the regions to the open session's store (none: the empty state) and draws the composer. */
function renderAll() {
  const store = state.cur ? state.cur.store : null;
  for (const r of regions) r.bind(store);
  renderComposer();
}

/** Draws the composer again for what its slice does not hold (the empty state, the queue, the agents). */
function renderComposer() {
  composer.redraw();
}

/** What the agent of the current session (or the default agent, for the empty state) accepts beyond text. */
function promptCaps() {
  const cur = state.cur;
  const name = cur ? cur.session && cur.session.agent : page.state.defaultAgent;
  const agent = page.state.agents.find((a) => a.name === name);
  return attachCaps((cur && cur.session && cur.session.agentCapabilities) || (agent && agent.capabilities));
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
  pill.set('idle');
  if (id) {
    state.cur = new OpenSession(id, sessionCtx);
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
  els.newSession.addEventListener('click', () => starter.open());
  els.emptyNew.addEventListener('click', () => starter.open());
  els.closeSession.addEventListener('click', confirmClose);
  els.forkSession.addEventListener('click', forkCurrent);
  els.shareSession.addEventListener('click', () => shares.open());
  $('sign-out').addEventListener('click', signOut);
  notifyToggle($('notify-toggle'), notifier, toast);


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
      sender.cancelTurn();
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

  window.addEventListener('hashchange', () => { if (state.started && !signin.signedOut) route(); });
  // Queued prompts live in the page: leaving it (reload, close) asks first rather than drop them.
  window.addEventListener('beforeunload', (ev) => {
    if (!sender.queue.items.length) return;
    ev.preventDefault();
    ev.returnValue = '';
  });
  window.matchMedia('(max-width: 860px)').addEventListener('change', () => setSidebar(false));
  // A hidden tab keeps listing only to notify: markers are redrawn when it is shown.
  const poll = () => { if ((!document.hidden || notifier.on) && state.started && !signin.signedOut) refreshSessions(); };
  setInterval(poll, 5000);
  document.addEventListener('visibilitychange', poll);
}

/** Who is calling decides what loads: without an accepted credential, only the sign-in view. */
async function boot() {
  wire();
  setUnauthorizedHandler(() => signin.unauthorized());
  if (!(await signin.loadMe())) return; // the sign-in view is up; signedIn() loads the rest
  state.started = true;
  loadAgents();
  refreshSessions();
  route();
}

boot();
