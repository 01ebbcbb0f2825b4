// The permission dialog: the open session's first request waiting for the person (or the one they brought up),
// its tool call, the options the agent offered, and how long until the gateway denies it. Put aside ("Later",
// Escape), a request keeps a Review button on its tool card.

import { h, clear } from '../dom.js';
import { acceptsPrompt } from '../status.js';
import { pickPermission } from '../state.js';
import { renderToolContent, kindIcon } from '../transcript.js';
import { region, byId } from './region.js';

/**
 * What the dialog shows for a session's state: {request, position ("2 of 3 requests", or '' for one)}, or null
 * (none waits, or the session is replaying, ended, or only watched).
 */
export function permissionShown(st) {
  if (!st.detail || !st.replayed || !acceptsPrompt(st.status) || st.readOnly) return null;
  const p = pickPermission(st);
  if (!p) return null;
  const n = st.pending.length;
  return { request: p, position: n > 1 ? `${st.pending.indexOf(p) + 1} of ${n} requests` : '' };
}

/** What the dialog says of a request's deadline (an ISO time) at now (ms since the epoch). */
export function deadlineText(deadline, now) {
  const t = deadline ? new Date(deadline).getTime() : NaN;
  if (!Number.isFinite(t)) return '';
  const s = Math.round((t - now) / 1000);
  return s > 0 ? `Expires in ${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')} — then it is denied.` : 'Expired: the gateway denies it now.';
}

// The elements it draws into, by id.
const IDS = { permDeadline: 'perm-deadline', permDialog: 'perm-dialog', permLater: 'perm-later', permOptions: 'perm-options', permQueue: 'perm-queue', permTool: 'perm-tool' };

/**
 * els: permDialog, permTool, permDeadline, permOptions, permQueue, permLater. answer(permissionId, optionId):
 * the person picked an option. Follows a session's store (bind); review(store, id) brings a request up, focused.
 */
export function permissionRegion(answer, els = byId(IDS)) {
  let timer = 0;
  let shownId = null;
  let focusNext = false;
  const close = () => {
    clearInterval(timer);
    shownId = null;
    if (els.permDialog.open) els.permDialog.close();
  };
  const r = region((st) => ({
    detail: st.detail, replayed: st.replayed, status: st.status, readOnly: st.readOnly, pending: st.pending,
    deferred: st.deferred, showing: st.showing,
  }), (sl, st) => {
    const focus = focusNext;
    focusNext = false;
    const v = permissionShown(st);
    if (!v) { close(); return; }
    const p = v.request;
    els.permQueue.textContent = v.position;
    if (shownId === p.id && els.permDialog.open) return;
    shownId = p.id;
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
    for (const o of opts) {
      const kind = String(o.kind || '');
      els.permOptions.appendChild(h('button.btn', {
        type: 'button',
        class: kind.startsWith('allow') ? 'btn-primary' : kind.startsWith('reject') ? 'btn-danger-outline' : 'btn-ghost',
        dataset: { optionId: o.optionId, kind },
        on: { click: () => { for (const x of els.permOptions.querySelectorAll('button')) x.disabled = true; answer(p.id, o.optionId); } },
      }, o.name || o.optionId));
    }
    if (!opts.length) els.permOptions.appendChild(h('p.muted', 'The agent offered no options.'));
    clearInterval(timer);
    const tick = () => { els.permDeadline.textContent = deadlineText(p.deadline, Date.now()); };
    tick();
    timer = setInterval(tick, 1000);
    if (!els.permDialog.open) els.permDialog.showModal();
    if (focus || document.activeElement === document.body || !els.permDialog.contains(document.activeElement)) {
      (els.permOptions.querySelector('button') || els.permLater).focus();
    }
  });
  return {
    bind: (store) => r.bind(store),
    /** Shows request id of store's session (a tool card's Review), its first option focused. */
    review(store, id) {
      focusNext = true;
      store.dispatch({ type: 'permReview', id });
      focusNext = false;
    },
  };
}
