// The plan: one line (the step in progress and the count) that opens into the checklist on demand, so it does not
// take the transcript's room; the person's choice to open it holds for the session. Only a running turn spins.

import { h, clear, icon } from '../dom.js';
import { planView } from '../plan.js';
import { acceptsPrompt } from '../status.js';
import { region, byId } from './region.js';

// The elements it draws into, by id.
const IDS = { plan: 'plan', planCurrent: 'plan-current', planDetails: 'plan-details', planList: 'plan-list', planProgress: 'plan-progress', planState: 'plan-state' };

/** els: plan, planDetails, planList, planProgress, planCurrent, planState. Follows a session's store (bind). */
export function planRegion(els = byId(IDS)) {
  let open = false; // the person opened the checklist, for the session bound
  const view = region((st) => ({ plan: st.plan, turn: st.turn, status: st.status, lastStop: st.lastStop }), (sl) => {
    const entries = sl.plan && Array.isArray(sl.plan.entries) ? sl.plan.entries : [];
    if (!entries.length) { els.plan.hidden = true; clear(els.planList); return; }
    const v = planView(entries, !!sl.turn && acceptsPrompt(sl.status), sl.lastStop);
    els.plan.hidden = false;
    els.plan.dataset.state = v.state;
    if (els.planDetails.open !== open) els.planDetails.open = open;
    clear(els.planList);
    for (const e of entries) {
      const st = e.status || 'pending';
      const spin = st === 'in_progress' && v.state === 'running';
      const ic = st === 'completed' ? icon('check') : spin ? icon('spinner', 'spin') : null;
      els.planList.appendChild(h('li.plan-entry', { dataset: { status: st, priority: e.priority || '' } },
        h('span.plan-check', { role: 'img', 'aria-label': st.replace('_', ' ') }, ic),
        h('span.plan-text', String(e.content ?? '')),
        e.priority ? h('span.plan-prio', e.priority) : null));
    }
    els.planProgress.textContent = v.progress;
    els.planCurrent.textContent = v.current;
    els.planCurrent.title = v.current;
    clear(els.planState);
    if (v.state === 'running') els.planState.appendChild(icon('spinner', 'spin'));
  });
  els.planDetails.addEventListener('toggle', () => { open = els.planDetails.open; });
  let bound;
  return {
    bind(store) {
      if (store === bound) return;
      bound = store;
      open = false;
      view.bind(store);
    },
  };
}
