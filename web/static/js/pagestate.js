// The page's state beyond the open session's (whose state is its store's, state.js): the agents and the sessions
// the gateway lists, and the titles this page learnt. Pure like state.js: the sidebar and the tab's title are
// drawn from both.

/** The page before anything is listed. */
export function initialPage() {
  return {
    agents: [], // GET /v1/agents
    defaultAgent: null, // the agent a session starts with when none is named
    sessions: [], // GET /v1/sessions, plus the sessions this page opened or created since
    titles: {}, // session id → a title this page learnt (a rename, the live title of a session it left)
  };
}

/**
 * Folds an action into the page's state; returns the new state (the same object when nothing changed).
 * agents: the agents listing ({agents, default}); sessions: a listing; listed: one session's view (created, opened) in place of its entry; renamed: the person
 * renamed a session; title: the live title of a session the page leaves; signedOut: nothing listed or learnt stays.
 */
export function reducePage(page, a) {
  if (!a || typeof a !== 'object') return page;
  switch (a.type) {
    case 'agents': {
      const agents = Array.isArray(a.agents) ? a.agents : [];
      const defaultAgent = a.default || (agents.find((x) => x && x.default) || agents[0] || {}).name || null;
      return { ...page, agents, defaultAgent };
    }
    case 'sessions':
      return { ...page, sessions: Array.isArray(a.sessions) ? a.sessions : [] };
    case 'listed': {
      const s = a.session;
      if (!s || !s.id) return page;
      const { snapshot, ...listed } = s; // eslint-disable-line no-unused-vars
      const i = page.sessions.findIndex((x) => x.id === s.id);
      const sessions = i < 0 ? page.sessions.concat([listed]) : page.sessions.map((x, j) => (j === i ? listed : x));
      return { ...page, sessions };
    }
    case 'renamed':
      if (!a.id || typeof a.title !== 'string' || !a.title) return page;
      return {
        ...page,
        titles: { ...page.titles, [a.id]: a.title },
        sessions: page.sessions.map((x) => (x.id === a.id ? { ...x, title: a.title } : x)),
      };
    case 'title':
      if (!a.id || typeof a.title !== 'string' || !a.title || page.titles[a.id] === a.title) return page;
      return { ...page, titles: { ...page.titles, [a.id]: a.title } };
    case 'signedOut':
      return initialPage();
    default:
      return page;
  }
}
