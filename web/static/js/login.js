// Agent login: when creating a session answers 409 agent_login_required, a dialog lists the agent's auth methods
// (as the agent described them) and lets the user complete one: an env_var form (secret values in password
// fields, sent once and never shown again), an agent method's button (ACP authenticate, its result shown), or a
// terminal login (loginterm.js). Once one succeeds, the session creation (or the prompt that re-attaches a
// session) is tried again. The sidebar's "Log out" action (logoutAction) forgets a login the caller holds.

import { api } from './api.js';
import { h } from './dom.js';
import { safeHref } from './href.js';
import { renderTerminalLogin } from './loginterm.js';

/** Whether err is the gateway's 409 agent_login_required. */
export function isLoginRequired(err) {
  return !!err && err.status === 409 && err.code === 'agent_login_required';
}

/** The kind of an ACP auth method: 'agent' when the agent gave no type. */
export function methodType(m) {
  return m && (m.type === 'env_var' || m.type === 'terminal') ? m.type : 'agent';
}

// Called after a login or logout changed what the caller holds (the sidebar shows it).
const changed = new Set();

/** Registers fn to run whenever a login succeeded or was forgotten. */
export function onLoginChange(fn) {
  changed.add(fn);
}

function notifyChange() {
  for (const fn of changed) fn();
}

/**
 * Runs create() (a session creation, or a prompt that may re-attach a session); while it fails with
 * agent_login_required, shows the login dialog and tries again once the user completed a method. A dismissed
 * dialog rethrows the 409, so the caller shows it as any other failure.
 */
export async function withLogin(create) {
  let note = '';
  for (;;) {
    try {
      return await create();
    } catch (err) {
      if (!isLoginRequired(err)) throw err;
      const done = await showLogin(err.problem, note);
      if (!done) throw err;
      notifyChange();
      note = 'The agent still asks for a login: ' + (err.problem.detail || 'try another method.');
    }
  }
}

/**
 * Opens the login dialog for a 409 problem ({agent, authMethods, detail}). Resolves true once a method
 * succeeded, false when the user dismissed it. note, when set, is shown first (a previous login did not do).
 */
export function showLogin(problem, note = '') {
  const agent = String(problem.agent || '');
  const methods = Array.isArray(problem.authMethods) ? problem.authMethods : [];
  return new Promise((resolve) => {
    let settled = false;
    const finish = (ok) => {
      if (settled) return;
      settled = true;
      if (dlg.open) dlg.close();
      dlg.remove();
      resolve(ok);
    };
    const error = h('p.form-error', { role: 'alert', hidden: true });
    const fail = (msg) => { error.textContent = msg; error.hidden = false; };
    const ctx = { agent, succeeded: () => finish(true), fail };
    const list = h('div.login-methods');
    for (const m of methods) list.append(renderMethod(m, ctx));
    if (!methods.length) list.append(h('p.muted', 'The agent names no way to log in. Ask the operator to configure it.'));
    const dlg = h('dialog.dialog.login-dialog', { id: 'login-dialog', 'aria-labelledby': 'login-title' },
      h('div.dialog-inner',
        h('div.dialog-head', h('div',
          h('h2', { id: 'login-title' }, `Log in to ${agent || 'the agent'}`),
          h('p.muted', 'The agent needs a login before it opens a session. What you enter here is kept for your sessions only, in the gateway\'s memory.'))),
        note ? h('p.form-error', { role: 'status' }, note) : null,
        error,
        list,
        h('div.dialog-actions', h('button.btn.btn-ghost', { type: 'button', on: { click: () => finish(false) } }, 'Cancel'))));
    dlg.addEventListener('close', () => finish(false));
    document.body.append(dlg);
    dlg.showModal();
    const first = dlg.querySelector('input, button.btn-primary');
    if (first) first.focus();
  });
}

/** One method's section: a form, a button or a terminal, by its type. */
function renderMethod(m, ctx) {
  const type = methodType(m);
  const sec = h('section.login-method', { dataset: { method: String(m.id || ''), type } },
    h('h3', String(m.name || m.id || 'Login')),
    typeof m.description === 'string' && m.description ? h('p.muted', m.description) : null);
  if (type === 'env_var') renderEnvVarLogin(sec, ctx, m);
  else if (type === 'terminal') renderTerminalMethod(sec, ctx, m);
  else renderAgentLogin(sec, ctx, m);
  return sec;
}

/** An env_var method: one field per declared variable (password fields for secrets), sent with PUT …/login/env. */
function renderEnvVarLogin(sec, ctx, m) {
  const vars = Array.isArray(m.vars) ? m.vars.filter((v) => v && typeof v.name === 'string') : [];
  const href = typeof m.link === 'string' ? safeHref(m.link) : '';
  const form = h('form.login-form', { autocomplete: 'off' },
    href ? h('a.login-link', { href, target: '_blank', rel: 'noopener noreferrer' }, 'Get credentials') : null,
    vars.map((v) => {
      const secret = v.secret !== false;
      return h('label.field',
        h('span', String(v.label || v.name), v.optional ? h('span.muted', ' (optional)') : null),
        h('input', { name: v.name, type: secret ? 'password' : 'text', required: !v.optional, autocomplete: 'off', spellcheck: 'false', dataset: { var: v.name } }));
    }),
    h('div.dialog-actions', h('button.btn.btn-primary', { type: 'submit' }, 'Save and retry')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const values = {};
    for (const input of form.querySelectorAll('input[data-var]')) {
      if (input.value !== '') values[input.dataset.var] = input.value;
    }
    const btn = form.querySelector('button[type=submit]');
    btn.disabled = true;
    try {
      await api.loginEnv(ctx.agent, m.id, values);
      for (const input of form.querySelectorAll('input')) input.value = ''; // nothing typed outlives the dialog
      ctx.succeeded();
    } catch (err) {
      ctx.fail(err.message || 'The login was refused.');
    } finally {
      btn.disabled = false;
    }
  });
  sec.append(form);
}

/** An agent method: the agent's own authenticate, run by the gateway; its result is shown before the retry. */
function renderAgentLogin(sec, ctx, m) {
  const result = h('pre.login-result', { hidden: true });
  const btn = h('button.btn.btn-primary', { type: 'button' }, 'Log in');
  btn.addEventListener('click', async () => {
    btn.disabled = true;
    try {
      const res = await api.loginAgent(ctx.agent, m.id);
      result.textContent = 'The agent answered: ' + JSON.stringify(res && res.result !== undefined ? res.result : {});
      result.hidden = false;
      const next = h('button.btn.btn-primary.login-continue', { type: 'button', on: { click: () => ctx.succeeded() } }, 'Continue');
      btn.replaceWith(next);
      next.focus();
    } catch (err) {
      ctx.fail(err.message || 'The agent refused the login.');
    } finally {
      btn.disabled = false;
    }
  });
  sec.append(result, h('div.dialog-actions', btn));
}

/**
 * A terminal method: the agent's login command runs in a terminal (loginterm.js) once the user asks for it, so
 * opening the dialog starts no process; its exit 0 retries the creation.
 */
function renderTerminalMethod(sec, ctx, m) {
  const box = h('div.login-term-box');
  const btn = h('button.btn.btn-primary.login-term-start', {
    type: 'button',
    on: {
      click: () => {
        btn.remove();
        renderTerminalLogin(box, ctx.agent, m, { onDone: () => ctx.succeeded() });
      },
    },
  }, 'Open the login terminal');
  sec.append(box, h('div.dialog-actions', btn));
}

/**
 * A "Log out" button for agent a's entry in the sidebar, or null when the caller holds no login of it. Only agents
 * that offer authMethods (GET /v1/agents, once probed) are asked for the caller's login state. say(text, kind)
 * reports what happened, including whether the agent itself was told (its ACP logout).
 */
export async function logoutAction(a, say) {
  if (!a || !Array.isArray(a.authMethods) || !a.authMethods.length) return null;
  let st;
  try {
    st = await api.agentLogin(a.name);
  } catch (err) {
    console.warn(`login state of ${a.name}:`, err && err.message); // the list still works; no action shown
    return null;
  }
  const held = (Array.isArray(st && st.satisfied) && st.satisfied.length) || (Array.isArray(st && st.vars) && st.vars.length);
  if (!held) return null;
  const btn = h('button.btn.btn-ghost.btn-small.agent-logout', {
    type: 'button',
    title: `Forget your login to ${a.name}`,
    dataset: { agent: a.name },
  }, 'Log out');
  btn.addEventListener('click', async () => {
    btn.disabled = true;
    try {
      const res = await api.logout(a.name);
      say(logoutText(a.name, res), 'info');
      notifyChange();
    } catch (err) {
      btn.disabled = false;
      say(`Could not log out of ${a.name}: ${(err && err.message) || err}`, 'error');
    }
  });
  return btn;
}

/** What a DELETE …/login answer means for the person: the login is gone, and whether the agent was told. */
export function logoutText(agent, res) {
  if (res && typeof res.detail === 'string' && res.detail) return `Logged out of ${agent}: ${res.detail}.`;
  return `Logged out of ${agent}: ` + (res && res.agentLogout
    ? 'the agent was told to log out too.'
    : 'the gateway forgot your login; the agent itself was not told.');
}
