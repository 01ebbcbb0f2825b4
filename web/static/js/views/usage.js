// The usage meter: the context window's fill, the session's cost and the last turn's tokens, from state.usage.

import { h, clear } from '../dom.js';
import { region } from './region.js';

export function fmtTokens(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '?';
  if (n >= 1e6) return (n / 1e6).toFixed(n >= 1e7 ? 0 : 1) + 'M';
  if (n >= 1e3) return (n / 1e3).toFixed(n >= 1e4 ? 0 : 1) + 'k';
  return String(n);
}

export function fmtCost(c) {
  if (!c || typeof c.amount !== 'number') return '';
  const cur = c.currency || 'USD';
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency: cur, maximumFractionDigits: c.amount < 1 ? 4 : 2 }).format(c.amount);
  } catch {
    return `${c.amount} ${cur}`;
  }
}

/** The meter in el, following a session's store (bind). */
export function usageView(el) {
  return region((st) => ({ usage: st.usage }), ({ usage: u }) => {
    if (!u) { el.hidden = true; return; }
    clear(el);
    el.hidden = false;
    const pct = typeof u.used === 'number' && typeof u.size === 'number' && u.size > 0 ? Math.min(100, Math.round((u.used / u.size) * 100)) : null;
    const last = u.lastTurn && typeof u.lastTurn.totalTokens === 'number' ? u.lastTurn : null;
    const hasContext = u.used !== undefined || u.size !== undefined;
    el.title = [hasContext && `Context: ${u.used ?? '?'} of ${u.size ?? '?'} tokens${u.cost ? ', cost ' + fmtCost(u.cost) : ''}`,
      last && `Last turn: ${last.inputTokens} in, ${last.outputTokens} out, ${last.totalTokens} tokens in all`].filter(Boolean).join('; ');
    if (hasContext) el.appendChild(h('span.usage-tokens', `${fmtTokens(u.used)} / ${fmtTokens(u.size)} tokens`));
    if (pct !== null) el.appendChild(h('progress.usage-bar', { max: '100', value: String(pct), 'aria-label': `${pct}% of the context used` }));
    if (u.cost) el.appendChild(h('span.usage-cost', fmtCost(u.cost)));
    if (last) el.appendChild(h('span.usage-turn', `last turn ${fmtTokens(last.totalTokens)} tokens`));
  });
}
