// Who is calling: GET /v1/me and the account area that shows it, the sign-in view the page shows when the gateway
// refuses its credential (or it has none), and the check again when a socket is closed by policy or an OIDC token
// ends. It reaches the API and the page through the ctx it is given.

import { initials } from './people.js';

// Why the sign-in view is up, as it says.
export const SIGNIN_REASON = {
  needed: 'This gateway needs an access token.',
  expired: 'Your sign-in is no longer accepted: the token expired or was revoked. Sign in again; what you typed is kept.',
  rejected: 'The token this tab had was not accepted. Enter yours.',
  signedout: 'You signed out. Sign in again to go on.',
};

// How the gateway identified the caller (GET /v1/me `via`), as the account area says it.
const VIA_TEXT = { token: 'the gateway token', users: 'users file', oidc: 'OIDC', proxy: 'via your proxy', none: '' };

/** The account area's second line: role, how the gateway knows the caller, and until when (until: a time, or ''). */
export function accountLine(me, until = '') {
  return `${me.role}${VIA_TEXT[me.via] ? ' · ' + VIA_TEXT[me.via] : ''}${until ? ` · until ${until}` : ''}`;
}

/** What the sign-in view says when the gateway refused a token typed into it (err: the API's error), or ''. */
export function signInFailure(err, errorText) {
  const status = err && err.status;
  if (status === 401) return 'That token was not accepted. Check it and try again.';
  if (status === 429) return 'Too many failed attempts from this address: wait a minute, then try again.';
  if (status === 0) return 'The gateway could not be reached.';
  return 'Could not sign in: ' + errorText(err);
}

const $ = (id) => document.getElementById(id);

/**
 * The credential flow. ctx: api; token(), setToken(t) the tab's token; errorText(err); started() whether the page
 * loaded once; onMe(me) the caller is known; onSignedIn(me) a token typed in was accepted.
 */
export class SignIn {
  constructor(ctx) {
    this.ctx = ctx;
    this.signedOut = false; // the sign-in view is up: the gateway refused the page's credential, or it has none
    this.expiryTimer = 0;
    this.els = {
      app: $('app'), view: $('signin'), form: $('signin-form'), token: $('signin-token'), reason: $('signin-reason'),
      error: $('signin-error'), submit: $('signin-submit'), me: $('me'), account: $('side-account'),
      initials: $('account-initials'), name: $('account-name'), via: $('account-via'), signOut: $('sign-out'),
    };
    this.els.form.addEventListener('submit', (ev) => this.submit(ev));
  }

  /** Shows who is signed in: the name in the top bar and the sidebar's account area (sign-out where the tab holds a token). */
  showAccount(me) {
    const e = this.els;
    const name = me.name || me.id;
    e.me.textContent = name;
    e.me.title = `Signed in as ${me.id} (${me.role}, ${me.via})`;
    e.me.hidden = me.via === 'none';
    e.account.hidden = me.via === 'none';
    e.initials.textContent = initials(name);
    e.name.textContent = name;
    e.name.title = me.id;
    const exp = me.expiresAt ? new Date(me.expiresAt) : null;
    const until = exp && !Number.isNaN(exp.getTime()) ? exp.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : '';
    e.via.textContent = accountLine(me, until);
    // A proxy's identity is not the page's to forget; a token the tab keeps is.
    e.signOut.hidden = !this.ctx.token();
    this.scheduleExpiry(exp);
  }

  /** Nobody is signed in: the top bar and the account area show no one. */
  hideAccount() {
    this.els.me.hidden = true;
    this.els.account.hidden = true;
  }

  /** An OIDC token ends at expiresAt: ask the gateway again then, so the page says so before the next click fails. */
  scheduleExpiry(exp) {
    clearTimeout(this.expiryTimer);
    const ms = exp ? exp.getTime() - Date.now() + 1000 : NaN;
    if (Number.isFinite(ms) && ms > 0 && ms < 2 ** 31) this.expiryTimer = setTimeout(() => this.check(), ms);
  }

  /** GET /v1/me: who is calling. A 401 brings up the sign-in view (through the API's unauthorized handler). */
  async loadMe() {
    try {
      this.ctx.onMe(await this.ctx.api.me());
      return true;
    } catch (err) {
      if (err && err.status === 401) return false;
      if (!(err && err.status === 0)) console.warn('GET /v1/me:', this.ctx.errorText(err));
      return true; // the gateway is unreachable or old: carry on; the calls that matter will say so
    }
  }

  /** Asks the gateway whether the page's credential still holds (a socket closed by policy, an OIDC expiry). */
  check() {
    if (!this.signedOut) this.loadMe();
  }

  /** Covers the app with the sign-in view; why: needed, expired, rejected or signedout. */
  show(why) {
    if (this.signedOut && why !== 'signedout') return;
    const e = this.els;
    this.signedOut = true;
    clearTimeout(this.expiryTimer);
    e.reason.textContent = SIGNIN_REASON[why] || SIGNIN_REASON.needed;
    e.error.hidden = true;
    e.token.value = '';
    e.submit.disabled = false;
    e.app.inert = true;
    for (const d of document.querySelectorAll('dialog[open]')) d.close();
    e.view.hidden = false;
    e.token.focus();
  }

  /** The API refused the page's credential: a tab without a token was never signed in; one with a token lost it. */
  unauthorized() {
    this.show(this.ctx.started() ? 'expired' : this.ctx.token() ? 'rejected' : 'needed');
  }

  /** A credential was accepted: the view goes and the page may be used again. */
  hide() {
    this.signedOut = false;
    this.els.view.hidden = true;
    this.els.app.inert = false;
  }

  /** The view's form: the token typed is tried with GET /v1/me and kept in the tab only once accepted. */
  async submit(ev) {
    ev.preventDefault();
    const e = this.els;
    const t = e.token.value.trim();
    const fail = (text) => {
      e.error.textContent = text;
      e.error.hidden = false;
      e.submit.disabled = false;
      e.token.focus();
    };
    if (!t) { fail('Enter your access token.'); return; }
    e.submit.disabled = true;
    e.error.hidden = true;
    let me;
    try {
      me = await this.ctx.api.meWith(t);
    } catch (err) {
      fail(signInFailure(err, this.ctx.errorText));
      return;
    }
    this.ctx.setToken(t);
    this.ctx.onSignedIn(me);
  }
}
