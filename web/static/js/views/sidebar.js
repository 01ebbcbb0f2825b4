// The session list: every session the gateway lists (the open one live from its store), closed ones last, each
// with its status, a "needs you" count of the requests waiting in it and an "unread" mark (markers.js), and the
// list's search box and inline rename (sessionsearch.js).

import { h, clear } from '../dom.js';
import { statusView } from '../status.js';
import { SeenTurns, waitingRequests } from '../markers.js';
import { SessionTools } from '../sessionsearch.js';
import { region, byId } from './region.js';

function shortId(id) {
  const s = String(id || '');
  return s.length > 10 ? s.slice(0, 8) : s;
}

function baseName(p) {
  const s = String(p || '').replace(/\/+$/, '');
  return s.slice(s.lastIndexOf('/') + 1) || s || '/';
}

function fmtTime(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const sameDay = d.toDateString() === new Date().toDateString();
  return sameDay ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : d.toLocaleDateString();
}

/** The id of the session open in st (its store's state), or null. */
export function openId(st) {
  return (st.detail && st.detail.id) || null;
}

/** The title a listed session shows: the open one's live title, else its listed one, else one the page learnt. */
export function sessionTitle(s, page, st) {
  const live = openId(st) === s.id ? st.title || page.titles[s.id] : '';
  return live || s.title || page.titles[s.id] || `${s.agent || 'agent'} · ${shortId(s.id)}`;
}

/**
 * The sessions to list, in order: live ones newest first, then closed ones. The open session stays listed once
 * loaded even when the gateway forgot it (closed), until the person leaves it.
 */
export function listedSessions(page, st) {
  const all = [...page.sessions];
  const id = openId(st);
  if (id && st.loaded && !all.some((s) => s.id === id)) all.push({ ...st.detail, status: st.status || 'closed' });
  return all.sort((a, b) => {
    const ca = a.status === 'closed' ? 1 : 0;
    const cb = b.status === 'closed' ? 1 : 0;
    if (ca !== cb) return ca - cb;
    return String(b.createdAt || '').localeCompare(String(a.createdAt || ''));
  });
}

/**
 * What each row of the list shows: {session, id, title, status, view, waiting, unread, current}. seen remembers
 * the turns shown (markers.js): the open session, while the page is watched, has been seen.
 */
export function sessionRows(page, st, seen, watching) {
  const curId = openId(st);
  return listedSessions(page, st).map((s) => {
    let status = s.status;
    let waiting = waitingRequests(s).length;
    let running = !!s.currentTurn;
    let unread = false;
    if (s.id === curId) {
      status = st.status || status;
      waiting = st.pending.length + st.questions;
      running = !!st.turn;
      if (watching) seen.see(s);
      else unread = seen.unread(s);
    } else {
      unread = seen.unread(s);
    }
    return { session: s, id: s.id, title: sessionTitle(s, page, st), status, view: statusView(status, running), waiting, unread, current: s.id === curId };
  });
}

// The elements it draws into, by id.
const IDS = { sessionList: 'session-list', sessionsEmpty: 'sessions-empty' };

/**
 * els: sessionList, sessionsEmpty. page: the page's store (pagestate.js). ctx: onPick() a session was clicked,
 * rename(id, title) → the stored title, renamed(id, title), onError(err), watching() whether the page is seen.
 * Follows the open session's store (bind); setPrincipal(id, storage) when who is signed in changed.
 */
export function sidebarRegion(page, ctx, els = byId(IDS)) {
  let seen = new SeenTurns(null, '');
  let principal;
  let last = null; // the open session's state the list was last drawn from
  const tools = new SessionTools(els.sessionList, els.sessionList, {
    rename: ctx.rename,
    renamed: ctx.renamed,
    canRename: (s) => s.status !== 'closed' && !(last && openId(last) === s.id && last.readOnly),
    onError: ctx.onError,
  });
  // The open session's replayed frames do not redraw the list one by one: the replay's end does.
  const r = region((st) => ({
    sessions: page.state.sessions, titles: page.state.titles, detail: st.detail, loaded: st.loaded, replayed: st.replayed,
    ...(st.replayed ? { status: st.status, pending: st.pending, questions: st.questions, turn: st.turn, title: st.title, readOnly: st.readOnly } : {}),
  }), (sl, st) => {
    if (tools.editing) return; // a title is being edited in the list: the next draw follows it
    last = st;
    const rows = sessionRows(page.state, st, seen, ctx.watching());
    clear(els.sessionList);
    els.sessionsEmpty.hidden = rows.length > 0;
    for (const row of rows) els.sessionList.appendChild(rowItem(row, tools, ctx));
    tools.filter();
  });
  page.subscribe(() => r.refresh());
  return {
    bind: (store) => r.bind(store),
    redraw: () => r.redraw(),
    /** The turns shown are remembered per signed-in principal (and browser). */
    setPrincipal(id, storage) {
      if (id === principal) return;
      principal = id;
      seen = new SeenTurns(storage, id);
    },
  };
}

function rowItem(row, tools, ctx) {
  const s = row.session;
  const view = row.view;
  const a = h('a.session-item', {
    href: '#/s/' + encodeURIComponent(s.id),
    dataset: { sessionId: s.id, status: row.status || '', needsYou: row.waiting ? 'true' : null, unread: row.unread ? 'true' : null },
    'aria-current': row.current ? 'page' : null,
    on: { click: () => ctx.onPick() },
  },
  h('span.session-dot', { dataset: { status: view.key }, title: view.title || null, 'aria-hidden': 'true' }),
  h('span.session-item-main',
    h('span.session-item-title', row.unread ? h('span.unread-mark', { title: 'A turn ended here since you last looked', 'aria-label': 'unread' }) : null, row.title),
    h('span.session-item-meta', view.key === 'detached' ? h('span.status-badge', { dataset: { status: 'detached' }, title: view.title }, view.label) : view.label,
      ` · ${baseName(s.cwd)}${s.node ? ` · on ${s.node}` : ''} · ${fmtTime(s.createdAt)}`)),
  row.waiting ? h('span.badge.badge-warn.needs-you', { title: `Needs you: ${row.waiting} request(s) waiting for an answer`, 'aria-label': `needs you: ${row.waiting} waiting` }, String(row.waiting)) : null);
  const li = h('li', a);
  tools.decorate(li, s, row.title);
  return li;
}
