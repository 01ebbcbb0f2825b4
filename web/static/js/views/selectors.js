// The session bar's selectors: the agent's modes (unless a config option of category "mode" supersedes them) and
// its select config options, each disabled for an ended session or a viewer.

import { h, clear } from '../dom.js';
import { acceptsPrompt } from '../status.js';
import { legacyModesSuperseded } from '../modes.js';
import { region, byId } from './region.js';

/** Select options may be grouped ({group, name, options:[…]}) in newer ACP schemas. */
export function flattenOptions(options) {
  const out = [];
  for (const o of options) {
    if (o && Array.isArray(o.options)) out.push(...flattenOptions(o.options));
    else if (o && o.value !== undefined) out.push(o);
  }
  return out;
}

// The elements it draws into, by id.
const IDS = { selectors: 'selectors', toolbar: 'toolbar' };

/**
 * els: selectors, toolbar. on: setMode(modeId, select) and setConfig(option, value, select), called when the person
 * picks one (the select is disabled until the view draws again). Follows a session's store (bind).
 */
export function selectorsRegion(on, els = byId(IDS)) {
  return region((st) => ({
    open: !!st.detail, modes: st.availableModes, currentModeId: st.currentModeId, configOptions: st.configOptions,
    status: st.status, readOnly: st.readOnly,
  }), (sl) => {
    clear(els.selectors);
    if (!sl.open) { els.toolbar.hidden = true; return; }
    const off = !acceptsPrompt(sl.status) || sl.readOnly;
    const modes = Array.isArray(sl.modes) ? sl.modes : [];
    let any = false;
    if (modes.length && !legacyModesSuperseded(sl.configOptions)) {
      any = true;
      const sel = h('select', {
        id: 'mode-select',
        disabled: off,
        on: { change: (ev) => { ev.target.disabled = true; on.setMode(ev.target.value); } },
      }, modes.map((m) => h('option', { value: m.id, selected: m.id === sl.currentModeId, title: m.description || '' }, m.name || m.id)));
      els.selectors.appendChild(h('label.selector', h('span.selector-label', 'Mode'), sel));
    }
    for (const opt of sl.configOptions || []) {
      if (!opt || opt.type !== 'select' || !Array.isArray(opt.options)) continue;
      any = true;
      const sel = h('select', {
        dataset: { configId: opt.id },
        title: opt.description || '',
        disabled: off,
        on: { change: (ev) => { ev.target.disabled = true; on.setConfig(opt, ev.target.value); } },
      }, flattenOptions(opt.options).map((o) => h('option', { value: o.value, selected: o.value === opt.currentValue, title: o.description || '' }, o.name || o.value)));
      els.selectors.appendChild(h('label.selector', h('span.selector-label', opt.name || opt.id), sel));
    }
    els.toolbar.hidden = !any;
  });
}
