// The session header: its title, status badge, what it runs (agent, cwd, node, policy), why it ended or cannot
// restart, who watches it, and the Close, Fork and Share buttons a page that may act on it gets.

import { h, clear, icon } from '../dom.js';
import { statusView, acceptsPrompt } from '../status.js';
import { watcherRows } from '../people.js';
import { region, byId } from './region.js';

const POLICY_LABEL = {
  ask: 'Ask', 'approve-reads': 'Approve reads', 'approve-all': 'Approve all', 'deny-all': 'Deny all',
};

/** The title a session shows: its live title (frames, snapshot, a rename), else its listed one, else its agent and id. */
export function headerTitle(detail, liveTitle) {
  const id = String((detail && detail.id) || '');
  return liveTitle || (detail && detail.title) || `${(detail && detail.agent) || 'agent'} · ${id.length > 10 ? id.slice(0, 8) : id}`;
}

// The elements it draws into, by id.
const IDS = { closeSession: 'close-session', emptyState: 'empty-state', forkSession: 'fork-session', meta: 'session-meta', shareSession: 'share-session', title: 'session-title', toolbar: 'toolbar' };

/**
 * els: emptyState, title, meta, toolbar, closeSession, forkSession, shareSession. ctx: meId() the signed-in
 * principal, canFork(detail). Follows a session's store (bind); redraw() after who is signed in changed.
 */
export function headerRegion(ctx, els = byId(IDS)) {
  return region((st) => ({
    detail: st.detail, title: st.title, status: st.status, statusReason: st.statusReason, running: !!st.turn,
    readOnly: st.readOnly, sharing: st.sharing, notResumable: st.notResumable, watchers: st.watchers,
  }), (sl) => {
    const open = !!sl.detail;
    const usable = open && acceptsPrompt(sl.status);
    els.emptyState.hidden = open;
    // A viewer may not close the session nor switch its mode or options: only the owner or an admin may.
    els.closeSession.hidden = !usable || sl.readOnly;
    els.forkSession.hidden = !usable || sl.readOnly || !ctx.canFork(sl.detail);
    els.shareSession.hidden = !usable || !sl.sharing;
    clear(els.meta);
    if (!open) {
      els.title.textContent = 'No session';
      els.toolbar.hidden = true;
      return;
    }
    const s = sl.detail;
    els.title.textContent = headerTitle(s, sl.title);
    const view = statusView(sl.status, sl.running && usable);
    els.meta.appendChild(h('span.status-chip', { dataset: { status: view.key }, id: 'session-status', title: view.title || null }, view.label));
    if (s.agent) els.meta.appendChild(h('span.meta-item', icon('bot'), s.agent));
    if (s.cwd) els.meta.appendChild(h('span.meta-item', { title: s.cwd }, icon('folder'), h('code', s.cwd)));
    if (s.node) els.meta.appendChild(h('span.meta-item', { id: 'session-node', title: 'The gateway node that runs this session\'s agent' }, icon('server'), s.node));
    if (s.permissionPolicy) els.meta.appendChild(h('span.meta-item', { title: 'Permission policy' }, icon('shield'), POLICY_LABEL[s.permissionPolicy] || s.permissionPolicy));
    if (sl.statusReason && (sl.status === 'failed' || sl.status === 'closed')) els.meta.appendChild(h('span.meta-item.muted', sl.statusReason));
    if (sl.notResumable && sl.status === 'detached') els.meta.appendChild(h('span.meta-item.meta-problem', { id: 'session-problem', role: 'alert' }, sl.notResumable));
    const watchers = watcherRows(sl.watchers);
    if (watchers.length) {
      const me = ctx.meId();
      els.meta.appendChild(h('span.meta-item.watchers', { id: 'session-watchers', 'aria-label': 'Watching now' },
        ...watchers.map((w) => h('span.watcher', {
          dataset: { principal: w.principal, role: w.role },
          title: `${w.name}${w.principal === me ? ' (you)' : ''} · ${w.role}${w.faces > 1 ? ` · ${w.faces} connections` : ''}`,
        }, h('span.avatar', { 'aria-hidden': 'true' }, w.initials), h('span.watcher-name', w.name), h('span.watcher-role', w.role)))));
    }
  });
}
