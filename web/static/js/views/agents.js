// The agent list: a row per agent the gateway runs (click: a new session with it), the default one marked, and
// the agent's "Log out" where the caller holds a login (login.js); the new-session dialog's choice follows it.

import { h, clear, icon } from '../dom.js';
import { region, byId } from './region.js';

/** The rows the list shows for the page's state: {agent, name, kind, isDefault}. */
export function agentRows(page) {
  return page.agents.map((a) => ({ agent: a, name: a.name, kind: a.kind || '', isDefault: !!a.default || a.name === page.defaultAgent }));
}

// The elements it draws into, by id.
const IDS = { agentList: 'agent-list', newAgent: 'new-agent' };

/**
 * els: agentList, newAgent. ctx: open(name) a new session with the agent, logout(agent) → a Promise of its "Log
 * out" button or null. Follows the page's store (bind); redraw() when the logins held changed.
 */
export function agentsRegion(ctx, els = byId(IDS)) {
  return region((pg) => ({ agents: pg.agents, defaultAgent: pg.defaultAgent }), (sl, pg) => {
    clear(els.agentList);
    for (const row of agentRows(pg)) {
      const li = els.agentList.appendChild(h('li.agent-row',
        h('button.agent-item', {
          type: 'button',
          title: `New session with ${row.name}`,
          dataset: { agent: row.name },
          on: { click: () => ctx.open(row.name) },
        },
        icon('bot'),
        h('span.agent-name', row.name),
        h('span.agent-kind', row.kind),
        row.isDefault ? h('span.badge', 'default') : null)));
      ctx.logout(row.agent).then((btn) => { if (btn && li.isConnected) li.append(btn); });
    }
    clear(els.newAgent);
    for (const a of pg.agents) els.newAgent.appendChild(h('option', { value: a.name, selected: a.name === pg.defaultAgent }, a.name));
  });
}
