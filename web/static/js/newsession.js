// Starting sessions: the new-session dialog (agent, working directory, permission policy) and the empty state's
// prompt, which starts one with the default agent. An agent may take seconds to start, so both show it starting.
// It reaches the API and the page through the ctx it is given.

import { h, clear, icon } from './dom.js';
import { Ticker, fmtElapsed } from './elapsed.js';
import { withLogin } from './login.js';
import { CwdPicker } from './cwdpicker.js';
import { NEW_SESSION } from './queue.js';

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

const $ = (id) => document.getElementById(id);

/**
 * ctx: api; page, the page's store; queue() the prompt queue; toast(text, kind); errorText(err); beforeOpen() what
 * the page does before the dialog shows (the sidebar closes on a narrow screen); listed(session) a session was
 * created; opened(session) open the session created; restoreQueued(target); changed() the composer is drawn again.
 */
export class SessionStarter {
  constructor(ctx) {
    this.ctx = ctx;
    this.creating = null; // {agent} while the dialog's POST /v1/sessions is in flight
    this.starting = null; // {agent} while the empty state's prompt starts a session
    this.els = {
      dialog: $('new-dialog'), form: $('new-form'), agent: $('new-agent'), cwd: $('new-cwd'), policy: $('new-policy'),
      error: $('new-error'), cancel: $('new-cancel'), create: $('new-create'), starting: $('new-starting'),
      emptyStarting: $('empty-starting'),
    };
    this.cwdPicker = new CwdPicker(this.els.cwd, (path) => ctx.api.workspaceDirs(path), (err) => {
      this.els.error.textContent = 'Could not list folders: ' + ctx.errorText(err);
      this.els.error.hidden = false;
    });
    this.els.form.addEventListener('submit', (ev) => this.create(ev));
    this.els.cancel.addEventListener('click', () => this.els.dialog.close());
  }

  /** The agent of the session being started (by the dialog or the empty state), or null. */
  get startingAgent() {
    const s = this.starting || this.creating;
    return s ? s.agent : null;
  }

  /** Opens the dialog (with agent chosen, else the default); while one is created, shows that it is starting. */
  open(agent) {
    const e = this.els;
    this.ctx.beforeOpen();
    if (this.creating) {
      e.dialog.showModal();
      e.starting.focus();
      return;
    }
    e.error.hidden = true;
    this.cwdPicker.reset();
    const defaultAgent = this.ctx.page.state.defaultAgent;
    if (agent) e.agent.value = agent;
    else if (defaultAgent) e.agent.value = defaultAgent;
    e.dialog.showModal();
    e.agent.focus();
  }

  /** The dialog's form: POST /v1/sessions, then open the session (or list it, if the dialog was dismissed). */
  async create(ev) {
    ev.preventDefault();
    if (this.creating) return;
    const e = this.els;
    const { ctx } = this;
    const body = { agent: e.agent.value || undefined, permissionPolicy: e.policy.value };
    const cwd = e.cwd.value.trim();
    if (cwd) {
      if (!cwd.startsWith('/')) {
        e.error.textContent = 'The working directory must be an absolute path.';
        e.error.hidden = false;
        e.cwd.focus();
        return;
      }
      body.cwd = cwd;
    }
    this.creating = { agent: body.agent || ctx.page.state.defaultAgent };
    e.error.hidden = true;
    e.create.hidden = true;
    const stop = showStarting(e.starting, body.agent || ctx.page.state.defaultAgent);
    e.starting.focus();
    try {
      const s = await withLogin(() => ctx.api.createSession(body));
      // The dialog may have been dismissed while the agent started: then list the session but stay where we are,
      // unless prompts typed meanwhile in the empty state wait for it.
      const wanted = e.dialog.open || ctx.queue().of(NEW_SESSION).length > 0;
      if (e.dialog.open) e.dialog.close();
      if (wanted) ctx.opened(s);
      else {
        ctx.listed(s);
        ctx.toast(`The session with ${s.agent || 'the agent'} is ready.`, 'info');
      }
    } catch (err) {
      if (!this.starting) ctx.restoreQueued(NEW_SESSION);
      if (e.dialog.open) {
        e.error.textContent = ctx.errorText(err);
        e.error.hidden = false;
      } else {
        ctx.toast('Could not create the session: ' + ctx.errorText(err), 'error');
      }
    } finally {
      stop();
      e.create.hidden = false;
      this.creating = null;
      ctx.changed();
    }
  }

  /**
   * The empty state's prompt: starts a session with the default agent and opens it; the prompts queued for the new
   * session are sent there once it is live. If it cannot start, they go back into the composer.
   */
  async quickStart() {
    const { ctx } = this;
    const agent = ctx.page.state.defaultAgent;
    if (!agent || this.starting || this.creating) return;
    this.starting = { agent };
    const stop = showStarting(this.els.emptyStarting, agent);
    ctx.changed();
    let s;
    try {
      s = await withLogin(() => ctx.api.createSession({ agent, permissionPolicy: 'ask' }));
    } catch (err) {
      ctx.toast(`Could not start a session with ${agent}: ` + ctx.errorText(err), 'error');
      return;
    } finally {
      stop();
      this.starting = null;
      if (!s && !this.creating) ctx.restoreQueued(NEW_SESSION);
      ctx.changed();
    }
    ctx.opened(s);
  }
}
