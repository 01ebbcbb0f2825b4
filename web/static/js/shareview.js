// The sharing dialog of the open session: lists the owner and the shares (GET …/shares), adds a principal as
// viewer or collaborator (PUT), removes one (DELETE). Failures are said in the dialog as sharing.js words them.
// What the gateway allows is the gateway's to decide: the dialog offers, the answer (403, 404) says.

import { api } from './api.js';
import { h, clear, icon } from './dom.js';
import { SHARE_ROLES, ROLE_HINT, shareRows, principalIdProblem, shareErrorText, sharingOffered, isForbidden } from './sharing.js';

export class ShareDialog {
  /**
   * els: {dialog, owner, list, form, principal, role, add, error, close}. onAvailability(sessionId, offered) runs
   * when a listing says whether the session's Share button should show (a 403 or 404 hides it).
   */
  constructor(els, onAvailability = () => {}, me = () => null) {
    this.me = me; // Static after construction; the caller as GET /v1/me said (null until known).
    this.els = els; // Static after construction.
    this.onAvailability = onAvailability; // Static after construction.
    this.sessionId = null; // the session the dialog is for
    this.listing = null; // the last GET …/shares answer
    this.manage = true; // false once the gateway said the caller may not change the shares
    this.busy = false; // a request of the dialog is in flight
    for (const r of SHARE_ROLES) els.role.appendChild(h('option', { value: r, title: ROLE_HINT[r] }, r));
    els.form.addEventListener('submit', (ev) => { ev.preventDefault(); this.add(); });
    els.close.addEventListener('click', () => els.dialog.close());
  }

  /** Forgets the previous session's listing; then asks whether sharing is offered for this one. */
  async probe(sessionId) {
    this.sessionId = sessionId;
    this.listing = null;
    this.manage = true;
    if (this.els.dialog.open) this.els.dialog.close();
    await this.refresh();
  }

  /** GET …/shares: renders it and reports whether the button shows. Returns whether it answered. */
  async refresh() {
    const id = this.sessionId;
    if (!id) return false;
    try {
      const listing = await api.shares(id);
      if (id !== this.sessionId) return false;
      this.listing = listing;
      this.onAvailability(id, sharingOffered(listing, this.me()));
      this.render();
      return true;
    } catch (err) {
      if (id !== this.sessionId) return false;
      this.listing = null;
      if (err && (err.status === 403 || err.status === 404)) this.manage = false;
      this.onAvailability(id, false);
      if (this.els.dialog.open) this.showError(shareErrorText(err, 'list'));
      return false;
    }
  }

  async open() {
    this.showError('');
    this.render();
    this.els.dialog.showModal();
    this.els.principal.focus();
    await this.refresh();
  }

  render() {
    const rows = shareRows(this.listing);
    const list = clear(this.els.list);
    const owner = rows.find((r) => r.role === 'owner');
    this.els.owner.textContent = owner ? `Owned by ${owner.name}.` : 'Nobody owns this session: only admins see it.';
    const shares = rows.filter((r) => r.role !== 'owner');
    if (!shares.length) list.appendChild(h('li.share-empty.muted', 'Not shared with anyone.'));
    for (const r of shares) {
      list.appendChild(h('li.share-row', { dataset: { principal: r.principal, role: r.role } },
        h('span.share-principal', { title: r.principal }, r.principal),
        h('span.share-role', { title: ROLE_HINT[r.role] || '' }, r.role),
        h('button.icon-btn.share-remove', {
          type: 'button',
          disabled: !this.manage || this.busy,
          'aria-label': `Stop sharing with ${r.principal}`,
          title: `Stop sharing with ${r.principal}`,
          on: { click: () => this.remove(r.principal) },
        }, icon('trash'))));
    }
    for (const el of [this.els.principal, this.els.role, this.els.add]) el.disabled = !this.manage || this.busy;
  }

  async add() {
    const id = this.sessionId;
    const who = this.els.principal.value.trim();
    const problem = principalIdProblem(who);
    if (problem) {
      this.showError(problem);
      this.els.principal.focus();
      return;
    }
    await this.send(id, 'share', () => api.share(id, who, this.els.role.value));
    if (!this.els.error.textContent) this.els.principal.value = '';
  }

  async remove(principal) {
    const id = this.sessionId;
    await this.send(id, 'unshare', () => api.unshare(id, principal));
  }

  // Runs one change, then lists again; a refusal is said and, when it is the caller's role, disables the controls.
  async send(id, action, call) {
    if (this.busy) return;
    this.busy = true;
    this.showError('');
    this.render();
    try {
      await call();
    } catch (err) {
      if (id !== this.sessionId) return;
      if (isForbidden(err)) this.manage = false;
      this.showError(shareErrorText(err, action));
    } finally {
      this.busy = false;
    }
    if (id !== this.sessionId) return;
    const keep = this.els.error.textContent;
    await this.refresh();
    if (keep && !this.els.error.textContent) this.showError(keep);
    this.render();
  }

  showError(text) {
    this.els.error.textContent = text;
    this.els.error.hidden = !text;
  }
}
