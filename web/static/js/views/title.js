// The tab's title: the open session's title, after the count of every request waiting for the person, in the
// open session and in the others listed, so a person in another tab sees that an agent waits for them.

import { waitingRequests } from '../markers.js';
import { sessionTitle, openId } from './sidebar.js';
import { region } from './region.js';

/** The document's title for the page's state and the open session's (st). */
export function docTitle(page, st) {
  const id = openId(st);
  let n = id ? st.pending.length + st.questions : 0;
  for (const s of page.sessions) if (s.id !== id) n += waitingRequests(s).length;
  const count = n ? `(${n}) ` : '';
  if (!id) return `${count}ACP Gateway`;
  return `${count}${sessionTitle(st.detail, page, st)} — ACP Gateway`;
}

/** Sets doc.title from page (the page's store) and the open session's store (bind). */
export function titleRegion(doc, page) {
  const r = region((st) => ({
    sessions: page.state.sessions, titles: page.state.titles, detail: st.detail, title: st.title,
    pending: st.pending, questions: st.questions,
  }), (sl, st) => {
    const t = docTitle(page.state, st);
    if (doc.title !== t) doc.title = t;
  });
  page.subscribe(() => r.refresh());
  return r;
}
