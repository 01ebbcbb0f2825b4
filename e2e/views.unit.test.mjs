// Unit tests of what the sidebar, the permission dialog and the tab's title show for a state (their pure parts),
// and of the page's state (pagestate.js), in node: no browser.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initialState, reduce } from '../web/static/js/state.js';
import { initialPage, reducePage } from '../web/static/js/pagestate.js';
import { SeenTurns } from '../web/static/js/markers.js';
import { sessionRows, sessionTitle, listedSessions } from '../web/static/js/views/sidebar.js';
import { permissionShown, deadlineText } from '../web/static/js/views/permission.js';
import { docTitle } from '../web/static/js/views/title.js';

const perm = (id, title) => ({ jsonrpc: '2.0', id, method: 'session/request_permission', params: { toolCall: { toolCallId: 'tc_' + id, title }, options: [{ optionId: 'allow', kind: 'allow_once', name: 'Allow' }] } });

/** The state of open session id: loaded (GET answered) with status, live after its replay. */
function openState(id, status = 'idle', frames = []) {
  let s = reduce(initialState(), { type: 'session', view: { id, agent: 'demo', status } });
  for (const f of frames) s = reduce(s, f);
  return reduce(s, { jsonrpc: '2.0', method: '_gateway/replay_complete', params: {} });
}

const listing = [
  { id: 'a', agent: 'demo', title: 'Alpha', status: 'idle', createdAt: '2026-01-01T10:00:00Z', lastTurn: { turnId: 't1' } },
  { id: 'b', agent: 'demo', status: 'closed', createdAt: '2026-01-03T10:00:00Z' },
  { id: 'c', agent: 'demo', title: 'Gamma', status: 'running', currentTurn: { turnId: 'x' }, createdAt: '2026-01-02T10:00:00Z', pendingPermissions: [{ id: 'p9', toolCall: { title: 'Edit' } }], pendingElicitations: [{ id: 'e1', message: 'Name?' }] },
];

test('sidebar: live sessions newest first, closed last; the open one stays listed once loaded', () => {
  const page = reducePage(initialPage(), { type: 'sessions', sessions: listing });
  assert.deepEqual(listedSessions(page, initialState()).map((s) => s.id), ['c', 'a', 'b']);
  const gone = openState('z', 'closed');
  assert.deepEqual(listedSessions(page, gone).map((s) => s.id), ['c', 'a', 'b', 'z']);
  const notLoaded = { ...initialState(), detail: { id: 'z' } };
  assert.deepEqual(listedSessions(page, notLoaded).map((s) => s.id), ['c', 'a', 'b']);
});

test('sidebar: needs-you counts the listing for others and the live requests and questions for the open one', () => {
  const page = reducePage(initialPage(), { type: 'sessions', sessions: listing });
  const seen = new SeenTurns(null, 'ann');
  let st = openState('a', 'idle', [perm('p1', 'Write'), perm('p2', 'Run')]);
  st = reduce(st, { type: 'questions', count: 1 });
  const rows = Object.fromEntries(sessionRows(page, st, seen, true).map((r) => [r.id, r]));
  assert.equal(rows.a.waiting, 3);
  assert.equal(rows.a.current, true);
  assert.equal(rows.c.waiting, 2);
  assert.equal(rows.c.view.key, 'running');
  assert.equal(rows.b.waiting, 0);
  // Resolved: the open session's count drops with its frame, not with the next listing.
  st = reduce(st, { jsonrpc: '2.0', method: '_gateway/permission_resolved', params: { permissionId: 'p1', outcome: { outcome: 'selected', optionId: 'allow' } } });
  assert.equal(sessionRows(page, st, seen, true).find((r) => r.id === 'a').waiting, 2);
});

test('sidebar: unread once a turn ended after the last one shown; the watched open session is read', () => {
  const seen = new SeenTurns(null, 'ann');
  let page = reducePage(initialPage(), { type: 'sessions', sessions: listing });
  const none = initialState();
  assert.equal(sessionRows(page, none, seen, true).some((r) => r.unread), false, 'a first sight counts as read');
  page = reducePage(page, { type: 'sessions', sessions: listing.map((s) => (s.id === 'a' ? { ...s, lastTurn: { turnId: 't2' } } : s)) });
  assert.equal(sessionRows(page, none, seen, true).find((r) => r.id === 'a').unread, true);
  assert.equal(sessionRows(page, openState('a'), seen, false).find((r) => r.id === 'a').unread, true, 'open in a hidden tab');
  assert.equal(sessionRows(page, openState('a'), seen, true).find((r) => r.id === 'a').unread, false, 'open and watched');
  assert.equal(sessionRows(page, none, seen, true).find((r) => r.id === 'a').unread, false, 'seen stays seen');
});

test('sidebar and title: the open session shows its live title; a rename and a left session keep theirs', () => {
  let page = reducePage(initialPage(), { type: 'sessions', sessions: listing });
  const st = reduce(openState('a'), { jsonrpc: '2.0', method: 'session/update', params: { update: { sessionUpdate: 'session_info_update', title: 'Live A' } } });
  assert.equal(sessionTitle(listing[0], page, st), 'Live A');
  assert.equal(sessionTitle(listing[0], page, initialState()), 'Alpha');
  assert.equal(sessionTitle(listing[1], page, initialState()), 'demo · b');
  page = reducePage(page, { type: 'title', id: 'b', title: 'Left B' });
  assert.equal(sessionTitle(page.sessions[1], page, initialState()), 'Left B');
  page = reducePage(page, { type: 'renamed', id: 'a', title: 'Renamed' });
  assert.equal(page.sessions[0].title, 'Renamed');
  assert.equal(sessionTitle(page.sessions[0], page, initialState()), 'Renamed');
  assert.deepEqual(reducePage(page, { type: 'signedOut' }), initialPage());
});

test('title: counts the requests waiting here and in the other listed sessions', () => {
  const page = reducePage(initialPage(), { type: 'sessions', sessions: listing });
  assert.equal(docTitle(page, initialState()), '(2) ACP Gateway');
  assert.equal(docTitle(initialPage(), initialState()), 'ACP Gateway');
  const st = reduce(openState('a', 'idle', [perm('p1', 'Write')]), { jsonrpc: '2.0', method: 'session/update', params: { update: { sessionUpdate: 'session_info_update', title: 'Live A' } } });
  assert.equal(docTitle(page, st), '(3) Live A — ACP Gateway');
  // The open session's requests are counted from its store (its questions from the page's cards), not its listing.
  const openC = reduce(openState('c', 'running'), { type: 'session', view: listing[2] });
  assert.equal(docTitle(page, openC), '(1) Gamma — ACP Gateway');
  assert.equal(docTitle(page, reduce(openC, { type: 'questions', count: 1 })), '(2) Gamma — ACP Gateway');
});

test('permission dialog: the first request not put aside, with its place; none while replaying, ended or viewer', () => {
  let st = openState('a', 'running', [perm('p1', 'Write'), perm('p2', 'Run')]);
  assert.equal(permissionShown(st).request.id, 'p1');
  assert.equal(permissionShown(st).position, '1 of 2 requests');
  st = reduce(st, { type: 'permDefer', id: 'p1' });
  assert.equal(permissionShown(st).request.id, 'p2');
  assert.equal(permissionShown(st).position, '2 of 2 requests');
  st = reduce(st, { type: 'permReview', id: 'p1' });
  assert.equal(permissionShown(st).request.id, 'p1', 'Review brings a put-aside request back');
  st = reduce(st, { type: 'permAnswer', id: 'p1' });
  assert.equal(permissionShown(st).request.id, 'p2', 'an answered request is hidden until confirmed');
  assert.equal(reduce(st, { type: 'permAnswerFailed', id: 'p1', outcome: 'error' }).showing, 'p2', 'the one shown stays');
  assert.equal(permissionShown(reduce(reduce(st, { type: 'permDefer', id: 'p2' }), { type: 'permAnswerFailed', id: 'p1', outcome: 'error' })).request.id, 'p1', 'a failed answer is asked again');
  st = reduce(st, { jsonrpc: '2.0', method: '_gateway/permission_resolved', params: { permissionId: 'p2' } });
  assert.equal(st.pending.length, 1);
  assert.equal(permissionShown(st), null, 'p1 waits for its confirmation');

  const one = openState('a', 'running', [perm('p3', 'Write')]);
  assert.equal(permissionShown(one).position, '');
  assert.equal(permissionShown(reduce(one, { type: 'replaying' })), null);
  assert.equal(permissionShown(reduce(one, { type: 'readOnly' })), null);
  assert.equal(permissionShown(reduce(one, { type: 'status', status: 'closed' })), null);
  assert.equal(permissionShown(initialState()), null);
});

test('permission dialog: a request made live again comes back even if put aside; replayed ones stay aside', () => {
  let st = reduce(initialState(), { type: 'session', view: { id: 'a', status: 'running' } });
  st = reduce(st, perm('p1', 'Write'));
  st = reduce(st, { type: 'permDefer', id: 'p1' });
  st = reduce(st, perm('p1', 'Write')); // replayed again (a reconnect): still aside
  assert.equal(st.deferred.p1, true);
  st = reduce(st, { jsonrpc: '2.0', method: '_gateway/replay_complete', params: {} });
  assert.equal(permissionShown(st), null);
  st = reduce(st, perm('p1', 'Write'));
  assert.equal(permissionShown(st).request.id, 'p1');
});

test('permission dialog: the deadline counts down, then says the gateway denies it', () => {
  const at = Date.parse('2026-01-01T10:00:00Z');
  assert.equal(deadlineText('2026-01-01T10:01:05Z', at), 'Expires in 1:05 — then it is denied.');
  assert.equal(deadlineText('2026-01-01T09:59:00Z', at), 'Expired: the gateway denies it now.');
  assert.equal(deadlineText(undefined, at), '');
});

test('a session detail lists its pending requests, in place, with their deadlines', () => {
  let st = reduce(initialState(), perm('p1', 'Write'));
  st = reduce(st, perm('p2', 'Run'));
  st = reduce(st, { type: 'session', view: { id: 'a', status: 'running', pendingPermissions: [{ id: 'p1', toolCall: { title: 'Write' }, options: [], deadline: '2026-01-01T10:00:00Z' }, { id: 'p3', toolCall: {} }] } });
  assert.deepEqual(st.pending.map((p) => p.id), ['p1', 'p2', 'p3']);
  assert.equal(st.pending[0].deadline, '2026-01-01T10:00:00Z');
  assert.equal(st.loaded, true);
});

test('agents: the listing marks its default (named, flagged, else the first); signing out forgets it', async () => {
  const { agentRows } = await import('../web/static/js/views/agents.js');
  let page = reducePage(initialPage(), { type: 'agents', agents: [{ name: 'demo', kind: 'builtin' }, { name: 'claude', kind: 'acp', default: true }] });
  assert.equal(page.defaultAgent, 'claude');
  assert.deepEqual(agentRows(page).map((r) => [r.name, r.kind, r.isDefault]), [['demo', 'builtin', false], ['claude', 'acp', true]]);
  page = reducePage(page, { type: 'agents', agents: [{ name: 'demo' }, { name: 'x' }], default: 'x' });
  assert.deepEqual(agentRows(page).map((r) => r.isDefault), [false, true]);
  assert.equal(reducePage(page, { type: 'agents', agents: [{ name: 'only' }] }).defaultAgent, 'only');
  assert.equal(reducePage(page, { type: 'agents', agents: null }).defaultAgent, null);
  assert.deepEqual(reducePage(page, { type: 'signedOut' }).agents, []);
});
