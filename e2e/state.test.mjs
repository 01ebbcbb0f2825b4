// Unit tests of the UI's state core (web/static/js/state.js) in node: every golden scenario of internal/translate,
// its frames folded one by one with reduce(), must show what the gateway's own snapshot of the same scenario shows,
// and the state built from that snapshot must show the same again.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  initialState, reduce, fromSnapshot, createStore, boundaryOf, foldEarlier, mergeEarlier, keepSession,
} from '../web/static/js/state.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const goldenDir = path.join(here, '..', 'internal', 'translate', 'testdata');
const goldens = readdirSync(goldenDir).filter((f) => f.endsWith('.golden.json')).sort();

/** The frames a session's log holds for a golden scenario's steps, as its WebSocket sends them. */
function framesOf(doc) {
  const frames = [];
  let seq = 0;
  let turnId = null;
  let perm = 0;
  const meta = () => ({ gateway: { seq: ++seq, epoch: 'e', ...(turnId ? { turnId } : {}) } });
  for (const st of doc.steps) {
    const [kind, ...rest] = st.step.split(' ');
    const out = st.out || [];
    switch (kind) {
      case 'BeginTurn':
        turnId = rest[0];
        break;
      case 'Update':
      case 'UserPrompt':
      case 'EndTurn':
        for (const p of out) frames.push({ jsonrpc: '2.0', method: 'session/update', params: { ...p, _meta: meta() } });
        break;
      case 'PermissionToolCall':
        for (const tc of out) {
          const id = `perm-${++perm}`;
          frames.push({ jsonrpc: '2.0', id, method: 'session/request_permission', params: { sessionId: 's', toolCall: tc, options: [], _meta: meta() } });
        }
        break;
      case 'Note': {
        const method = rest[0];
        const params = JSON.parse(rest.slice(1).join(' '));
        frames.push({ jsonrpc: '2.0', method, params: { ...params, _meta: meta() } });
        break;
      }
      default:
        throw new Error(`unknown step ${st.step}`);
    }
  }
  return frames;
}

const TOOL_FIELDS = ['toolCallId', 'title', 'kind', 'status', 'content', 'locations', 'rawInput', 'rawOutput'];

/** What the transcript shows of a state, to compare: messages with their text and other blocks, tool calls. */
function shown(state) {
  const rows = [];
  for (const r of state.rows) {
    if (r.type === 'message') rows.push({ kind: r.kind, messageId: r.messageId, turnId: r.turnId, text: r.text, extras: r.extras });
    else if (r.type === 'tool') {
      const tc = {};
      for (const k of TOOL_FIELDS) if (r.tc[k] !== undefined) tc[k] = r.tc[k];
      rows.push({ kind: 'tool', turnId: r.turnId, tc, terminal: r.termId ? terminalOf(state, r.termId) : null });
    }
  }
  return rows;
}

function terminalOf(state, id) {
  const t = state.terminals[id];
  return t ? { data: t.data, exit: t.exit } : null;
}

/** The golden snapshot's entries in the same shape (a message's text blocks joined, as the transcript shows them). */
function snapshotShown(snap) {
  const kinds = { user_message: 'user', agent_message: 'agent', agent_thought: 'thought' };
  return snap.entries.map((e) => {
    if (e.kind === 'tool_call') {
      const tc = {};
      for (const k of TOOL_FIELDS) if (e.toolCall[k] !== undefined) tc[k] = e.toolCall[k];
      return { kind: 'tool', turnId: e.turnId, tc };
    }
    const blocks = e.content || [];
    return {
      kind: kinds[e.kind], messageId: e.messageId, turnId: e.turnId,
      text: blocks.filter((b) => b.type === 'text').map((b) => b.text).join(''),
      extras: blocks.filter((b) => b.type !== 'text'),
    };
  });
}

const withoutTerminals = (rows) => rows.map(({ terminal, ...r }) => r);

for (const file of goldens) {
  test(`reduce: ${file} folds to the gateway's snapshot`, () => {
    const doc = JSON.parse(readFileSync(path.join(goldenDir, file), 'utf8'));
    const frames = framesOf(doc);
    let s = initialState();
    for (const f of frames) s = reduce(s, f);
    assert.equal(s.seq, frames.length);
    assert.deepEqual(withoutTerminals(shown(s)), snapshotShown(doc.snapshot));

    const fromSnap = fromSnapshot(doc.snapshot);
    assert.deepEqual(withoutTerminals(shown(fromSnap)), snapshotShown(doc.snapshot));
    assert.equal(fromSnap.seq, doc.snapshot.seq);

    // Session-level state: what the snapshot carries, the frames give too.
    const snap = doc.snapshot;
    for (const st of [s, fromSnap]) {
      assert.deepEqual(st.plan, snap.plan ?? null);
      assert.equal(st.currentModeId, snap.currentModeId ?? null);
      assert.deepEqual(st.configOptions, snap.configOptions ?? null);
      assert.deepEqual(st.commands, snap.availableCommands ?? []);
      assert.equal(st.title, (snap.sessionInfo && snap.sessionInfo.title) || null);
      if (snap.usage) {
        assert.deepEqual({ used: st.usage.used, size: st.usage.size, cost: st.usage.cost }, { used: snap.usage.used, size: snap.usage.size, cost: snap.usage.cost });
      }
    }
    // Gateway terminals: the same output and exit from the frames as from the snapshot.
    for (const t of snap.terminals || []) {
      const a = s.terminals[t.terminalId];
      const b = fromSnap.terminals[t.terminalId];
      assert.ok(a && b, t.terminalId);
      assert.ok(b.data.endsWith(t.output));
      assert.ok(a.data.replace('\r\n[output not kept]\r\n', '').endsWith(t.output), `${t.terminalId}: ${JSON.stringify(a.data)}`);
      assert.deepEqual(a.exit, t.exitStatus ?? null);
      assert.deepEqual(b.exit, t.exitStatus ?? null);
    }
    // Terminals named in tool calls' _meta: the frames' output ends as the snapshot's merged output does (which
    // may be cut at its front with a marker).
    const live = shown(s);
    const snapRows = shown(fromSnap);
    live.forEach((r, i) => {
      if (r.kind !== 'tool' || !snapRows[i].terminal) return;
      const tail = snapRows[i].terminal.data.replace(/^…\[gateway: truncated \d+ bytes\]/, '');
      assert.ok(r.terminal && r.terminal.data.endsWith(tail), `${r.tc.toolCallId}: ${JSON.stringify(r.terminal)} vs ${JSON.stringify(tail)}`);
      assert.deepEqual(r.terminal.exit, snapRows[i].terminal.exit);
    });
  });
}

test('reduce: turns add separators and end rows; open tool calls go stale at the end', () => {
  const f = (method, params, seq, turnId) => ({ jsonrpc: '2.0', method, params: { ...params, _meta: { gateway: { seq, epoch: 'e', turnId } } } });
  let s = initialState();
  const frames = [
    f('_gateway/turn_started', { turnId: 't1', actor: { principal: 'ann', name: 'Ann' } }, 1, 't1'),
    f('session/update', { update: { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'hi' } } }, 2, 't1'),
    f('session/update', { update: { sessionUpdate: 'tool_call', toolCallId: 'a', title: 'Run', status: 'in_progress' } }, 3, 't1'),
    f('_gateway/turn_ended', { turnId: 't1', stopReason: 'cancelled' }, 4, 't1'),
    f('_gateway/turn_ended', { turnId: 't1', stopReason: 'cancelled' }, 5, 't1'),
    f('_gateway/turn_started', { turnId: 't2' }, 6, 't2'),
    f('session/update', { update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'x' } } }, 7, 't2'),
    f('_gateway/turn_ended', { turnId: 't2', stopReason: 'end_turn', error: { message: 'boom' } }, 8, 't2'),
  ];
  const states = [];
  for (const fr of frames) { s = reduce(s, fr); states.push(s); }
  assert.deepEqual(s.rows.map((r) => r.type), ['message', 'tool', 'end', 'sep', 'message', 'end']);
  assert.equal(s.rows[1].stale, true);
  assert.equal(s.rows[2].label, 'Cancelled');
  assert.equal(s.rows[5].reason, 'error');
  assert.equal(s.rows[5].detail, 'boom');
  assert.deepEqual(s.actors.t1, { principal: 'ann', name: 'Ann' });
  assert.equal(s.turn, null);
  assert.equal(s.lastStop, 'end_turn');
  // Rows are immutable: the state before the turn's end still has the card as it was.
  assert.equal(states[2].rows[1].stale, false);
  assert.equal(states[2].rows.length, 2);
});

test('reduce: permissions mark their tool card pending, then resolved with the frame', () => {
  let s = initialState();
  s = reduce(s, { jsonrpc: '2.0', id: 'p1', method: 'session/request_permission', params: { toolCall: { toolCallId: 'e', title: 'Edit' }, options: [{ optionId: 'y', kind: 'allow_once', name: 'Yes' }], _meta: { gateway: { seq: 1 } } } });
  assert.equal(s.rows[0].perm.state, 'pending');
  assert.equal(s.rows[0].tc.title, 'Edit');
  const resolved = { permissionId: 'p1', outcome: { outcome: 'selected', optionId: 'y', allowed: true }, by: 'rest' };
  s = reduce(s, { jsonrpc: '2.0', method: '_gateway/permission_resolved', params: { ...resolved, _meta: { gateway: { seq: 2 } } } });
  assert.equal(s.rows[0].perm.state, 'resolved');
  assert.equal(s.rows[0].perm.resolution.by, 'rest');
  assert.equal(s.rows[0].perm.options[0].optionId, 'y');
});

test('reduce: unknown frames and variants leave the state alone; the store tells its subscribers', () => {
  const s0 = initialState();
  assert.equal(reduce(s0, { jsonrpc: '2.0', method: '_gateway/whatever', params: {} }), s0);
  const s1 = reduce(s0, { jsonrpc: '2.0', method: 'session/update', params: { update: { sessionUpdate: 'future_thing' }, _meta: { gateway: { seq: 3 } } } });
  assert.equal(s1.rows.length, 0);
  assert.equal(s1.seq, 3);
  const store = createStore();
  const seen = [];
  store.subscribe((st, fr) => seen.push([st.rows.length, fr && fr.method]));
  store.dispatch({ jsonrpc: '2.0', method: 'session/update', params: { update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'a' } } } });
  store.dispatch({ jsonrpc: '2.0', method: '_gateway/nothing', params: {} });
  store.reset(initialState());
  assert.deepEqual(seen, [[1, 'session/update'], [0, null]]);
});

test('reduce: a terminal keeps its last output and counts all of it', () => {
  let s = initialState();
  const big = 'x'.repeat(200 << 10);
  for (let i = 0; i < 3; i++) s = reduce(s, { jsonrpc: '2.0', method: '_gateway/terminal_output', params: { terminalId: 't', data: big } });
  assert.equal(s.terminals.t.total, 3 * big.length);
  assert.equal(s.terminals.t.data.length, 256 << 10);
  s = reduce(s, { jsonrpc: '2.0', method: '_gateway/terminal_output', params: { terminalId: 't', data: '', truncated: true } });
  s = reduce(s, { jsonrpc: '2.0', method: '_gateway/terminal_output', params: { terminalId: 't', data: '', truncated: true } });
  assert.equal(s.terminals.t.data.split('[output not kept]').length, 2);
});

test('listWindow: the rows near the viewport, measured or estimated', async () => {
  const { listWindow } = await import('../web/static/js/vlist.js');
  const est = new Array(10000).fill(undefined);
  // Pinned: the last rows, enough for the viewport and the overscan above it.
  assert.deepEqual(listWindow(est, 100, 0, 800, 1000, true), { first: 9982, end: 10000, before: 998200, after: 0, total: 1000000 });
  // At the top and in the middle.
  assert.deepEqual(listWindow(est, 100, 0, 800, 1000, false), { first: 0, end: 19, before: 0, after: 998100, total: 1000000 });
  const mid = listWindow(est, 100, 50000, 800, 1000, false);
  assert.deepEqual([mid.first, mid.end], [490, 519]);
  // Measured heights count: one tall row above pushes the window's rows down.
  const hs = est.slice();
  hs[0] = 10100;
  const w = listWindow(hs, 100, 50000, 800, 1000, false);
  assert.deepEqual([w.first, w.end, w.before], [390, 419, 10100 + 389 * 100]);
  assert.deepEqual(listWindow([], 100, 0, 800, 1000, true), { first: 0, end: 0, before: 0, after: 0, total: 0 });
});

test('mergeEarlier: the frames before a snapshot fold into rows put before its own, in pages, keys apart', () => {
  let seq = 0;
  const f = (method, params, turnId) => ({ jsonrpc: '2.0', method, params: { ...params, _meta: { gateway: { seq: ++seq, epoch: 'e', turnId } } } });
  const msg = (turnId, kind, id, text) => f('session/update', { update: { sessionUpdate: kind, messageId: id, content: { type: 'text', text } } }, turnId);
  const frames = [];
  for (const t of ['t1', 't2', 't3']) {
    frames.push(f('_gateway/turn_started', { turnId: t }, t));
    frames.push(msg(t, 'user_message_chunk', `${t}-user`, `prompt ${t}`));
    frames.push(msg(t, 'agent_message_chunk', `${t}-m1`, `answer ${t}`));
    frames.push(f('session/update', { update: { sessionUpdate: 'tool_call', toolCallId: 'call_1', title: `edit ${t}`, status: 'completed' } }, t));
    frames.push(f('_gateway/turn_ended', { turnId: t, stopReason: 'end_turn' }, t));
  }
  // The snapshot kept only turn t3's answer and tool call (its oldest entries were evicted).
  const snap = {
    seq, truncated: true, plan: null,
    entries: [
      { kind: 'agent_message', messageId: 't3-m1', turnId: 't3', content: [{ type: 'text', text: 'answer t3' }] },
      { kind: 'tool_call', turnId: 't3', toolCall: { toolCallId: 'call_1', title: 'edit t3', status: 'completed' } },
    ],
  };
  const snapState = fromSnapshot(snap);
  assert.deepEqual(snapState.rows.map((r) => r.type), ['note', 'message', 'tool']);
  const b = boundaryOf(snapState);
  assert.deepEqual(b, { type: 'message', kind: 'agent', messageId: 't3-m1', turnId: 't3' });

  // First page: six frames, not yet at the snapshot; the note moves between the loaded rows and the snapshot's.
  let res = foldEarlier(initialState(), frames.slice(0, 6), b, snap.seq);
  assert.equal(res.end, false);
  assert.equal(res.lastSeq, 6);
  let s = mergeEarlier(snapState, res.state.rows, { status: 'idle', text: 'more' });
  assert.deepEqual(s.rows.map((r) => r.type), ['message', 'message', 'tool', 'end', 'sep', 'note', 'message', 'tool']);
  assert.equal(s.early, 5);
  assert.equal(s.rows[5].text, 'more');
  assert.ok(s.rows.slice(0, 5).every((r) => r.key.startsWith('early:')));
  // Second page: reaches the snapshot's first row (t3's answer); what comes after is the snapshot's already.
  res = foldEarlier(res.state, frames.slice(6), b, snap.seq);
  assert.equal(res.found, true);
  assert.equal(res.lastSeq, 13);
  s = mergeEarlier(s, res.rows, null);
  assert.deepEqual(s.rows.map((r) => `${r.type}:${r.text || (r.tc && r.tc.title) || ''}`), [
    'message:prompt t1', 'message:answer t1', 'tool:edit t1', 'end:', 'sep:', 'message:prompt t2', 'message:answer t2',
    'tool:edit t2', 'end:', 'sep:', 'message:prompt t3', 'message:answer t3', 'tool:edit t3',
  ]);
  const keys = s.rows.map((r) => r.key);
  assert.equal(new Set(keys).size, keys.length, 'keys are unique');
  for (const [k, i] of s.at) assert.equal(s.rows[i].key, k);
  assert.equal(s.at.size, s.rows.length);

  // Live frames go on from the merged state: a chunk of the snapshot's message extends it; a new turn appends.
  s = reduce(s, msg('t3', 'agent_message_chunk', 't3-m1', ' more'));
  assert.equal(s.rows[11].text, 'answer t3 more');
  s = reduce(s, f('_gateway/turn_started', { turnId: 't4' }, 't4'));
  s = reduce(s, msg('t4', 'user_message_chunk', 't4-user', 'prompt t4'));
  assert.deepEqual(s.rows.slice(-2).map((r) => r.type), ['sep', 'message']);
  assert.equal(s.rows.length, 15);

  // A merge without a note to replace (a session whose snapshot kept everything) changes nothing.
  const whole = fromSnapshot({ ...snap, truncated: false });
  assert.equal(mergeEarlier(whole, res.rows, null), whole);
  // A status change keeps the rows and the note's place.
  const loading = mergeEarlier(snapState, null, { status: 'loading' });
  assert.equal(loading.rows[0].earlier.status, 'loading');
  assert.equal(loading.rows[0].text, snapState.rows[0].text);
  assert.equal(loading.rows.length, 3);
});

test('foldEarlier: stops at the snapshot seq when its first row never comes (a log trimmed past it)', () => {
  const frames = [3, 4, 5].map((seq) => ({ jsonrpc: '2.0', method: 'session/update', params: { update: { sessionUpdate: 'agent_message_chunk', messageId: `m${seq}`, content: { type: 'text', text: 'x' } }, _meta: { gateway: { seq } } } }));
  const res = foldEarlier(initialState(), frames, { type: 'message', kind: 'agent', messageId: 'gone', turnId: null }, 4);
  assert.equal(res.end, true);
  assert.equal(res.found, false);
  assert.equal(res.used, 2);
  assert.equal(res.lastSeq, 4);
});

test('EarlierLoader: pages up to its bound per click, shows loading and errors in the note, says where a trimmed log starts', async () => {
  const { EarlierLoader, EARLIER_FRAMES } = await import('../web/static/js/earlier.js');
  // A log of 12 000 one-message frames; the snapshot kept the last message only.
  const N = 12000;
  const frame = (seq) => ({ jsonrpc: '2.0', method: 'session/update', params: { update: { sessionUpdate: 'agent_message_chunk', messageId: `m${seq}`, content: { type: 'text', text: `Message ${seq}` } }, _meta: { gateway: { seq } } } });
  const snapState = () => fromSnapshot({ seq: N, truncated: true, entries: [{ kind: 'agent_message', messageId: `m${N}`, content: [{ type: 'text', text: `Message ${N}` }] }] });
  let first = 1; // the log's first seq
  let fail = false;
  const asked = [];
  const fetchPage = async (after, limit) => {
    asked.push([after, limit]);
    if (fail) throw new Error('HTTP 502');
    if (after + 1 < first) return { frames: [], notes: [{ jsonrpc: '2.0', method: '_gateway/resync_required', params: { reason: 'log_truncated', earliestSeq: first, headSeq: N } }] };
    const frames = [];
    for (let s = after + 1; s <= Math.min(N, after + limit); s++) frames.push(frame(s));
    return { frames, lastSeq: frames.length ? after + frames.length : after };
  };
  const store = createStore(snapState());
  const statuses = [];
  store.subscribe((st) => statuses.push(st.rows[st.early] && st.rows[st.early].earlier && st.rows[st.early].earlier.status));
  const loader = new EarlierLoader(store, fetchPage);
  await loader.load();
  assert.equal(asked.length, 5, 'five pages of 1 000');
  assert.ok(asked.every(([, limit]) => limit <= 1000));
  assert.deepEqual(statuses, ['loading', 'idle']);
  let st = store.state;
  assert.equal(st.early, EARLIER_FRAMES);
  assert.equal(st.rows[0].text, 'Message 1');
  assert.match(st.rows[st.early].text, /not shown yet/);
  // A failure shows in the note; Retry goes on from where the last page ended.
  fail = true;
  await loader.load();
  assert.equal(store.state.rows[store.state.early].earlier.status, 'error');
  assert.match(store.state.rows[store.state.early].earlier.error, /HTTP 502/);
  assert.equal(store.state.early, EARLIER_FRAMES, 'the rows loaded stay');
  fail = false;
  asked.length = 0;
  await loader.load();
  assert.equal(asked[0][0], EARLIER_FRAMES);
  await loader.load();
  // The gap is closed: every message once, in order, and no note.
  st = store.state;
  assert.equal(st.rows.length, N);
  assert.ok(st.rows.every((r, i) => r.type === 'message' && r.text === `Message ${i + 1}`));

  // A log trimmed to seq 9 001: the note says where it starts, and the rows begin there.
  first = 9001;
  const trimmed = createStore(snapState());
  const l2 = new EarlierLoader(trimmed, fetchPage);
  await l2.load();
  st = trimmed.state;
  assert.equal(st.rows[0].text, 'Message 9001');
  const note = st.rows[st.early];
  assert.equal(note.noteKind, 'truncated');
  assert.equal(note.earlier.status, 'done');
  assert.match(note.text, /before seq 9001 are no longer kept/);
  assert.equal(st.rows.length, N - 9000 + 1);
});

test('actions: the session detail, a status and a prompt fold in like frames', () => {
  let s = reduce(initialState(), { type: 'session', view: { status: 'running', currentTurn: { turnId: 't1' }, lastTurn: { stopReason: 'cancelled' } } });
  assert.equal(s.status, 'running');
  assert.deepEqual(s.turn, { turnId: 't1' });
  assert.equal(s.lastStop, 'cancelled');
  s = reduce(s, { jsonrpc: '2.0', method: '_gateway/turn_ended', params: { turnId: 't1', stopReason: 'end_turn' } });
  assert.equal(s.status, 'idle');
  assert.equal(s.turn, null);
  // A detail read while no turn runs leaves a turn from frames alone, unless the state came from its snapshot.
  s = reduce(s, { jsonrpc: '2.0', method: '_gateway/turn_started', params: { turnId: 't2' } });
  assert.equal(s.status, 'running');
  assert.deepEqual(reduce(s, { type: 'session', view: { status: 'running' } }).turn, { turnId: 't2' });
  assert.equal(reduce(s, { type: 'session', view: { status: 'idle' }, fromSnapshot: true }).turn, null);
  // An ended session runs no turn, whether a frame or the page says so.
  const closed = reduce(s, { jsonrpc: '2.0', method: '_gateway/session_status', params: { status: 'closed', reason: 'agent exited' } });
  assert.equal(closed.status, 'closed');
  assert.equal(closed.statusReason, 'agent exited');
  assert.equal(closed.turn, null);
  assert.equal(reduce(closed, { jsonrpc: '2.0', method: '_gateway/turn_started', params: { turnId: 't3' } }).status, 'closed');
  const gone = reduce(s, { type: 'status', status: 'closed', reason: 'not found' });
  assert.deepEqual([gone.status, gone.statusReason, gone.turn], ['closed', 'not found', null]);
  // POST …/prompt answered before turn_started: the turn runs, unless it already ended or another one runs.
  const idle = reduce(initialState(), { type: 'session', view: { status: 'idle' } });
  assert.deepEqual(reduce(idle, { type: 'prompted', turnId: 't9' }).turn, { turnId: 't9' });
  const ended = reduce(idle, { jsonrpc: '2.0', method: '_gateway/turn_ended', params: { turnId: 't9' } });
  assert.equal(reduce(ended, { type: 'prompted', turnId: 't9' }), ended);
  assert.equal(reduce(s, { type: 'prompted', turnId: 't9' }), s);
  // Unknown actions leave the state alone; the store tells its subscribers of the known ones.
  assert.equal(reduce(s, { type: 'nope' }), s);
  const store = createStore(idle);
  const seen = [];
  store.subscribe((st, a) => seen.push([st.status, a.type]));
  store.dispatch({ type: 'status', status: 'failed' });
  store.dispatch({ type: 'nope' });
  assert.deepEqual(seen, [['failed', 'status']]);
});

test('actions: what the header shows — detail, watchers, viewer, sharing, a refused restart, a rename', () => {
  let s = reduce(initialState(), { type: 'session', view: { id: 's1', agent: 'a', status: 'detached', watchers: [{ principal: 'p' }], snapshot: { entries: [] } } });
  assert.deepEqual(s.detail, { id: 's1', agent: 'a', status: 'detached', watchers: [{ principal: 'p' }] });
  assert.deepEqual(s.watchers, [{ principal: 'p' }]);
  s = reduce(s, { jsonrpc: '2.0', method: '_gateway/presence', params: { watchers: [] } });
  assert.deepEqual(s.watchers, []);
  s = reduce(s, { type: 'notResumable', text: 'cannot restart' });
  assert.equal(s.notResumable, 'cannot restart');
  s = reduce(s, { type: 'sharing', offered: true });
  assert.equal(reduce(s, { type: 'sharing', offered: true }), s);
  s = reduce(s, { type: 'readOnly' });
  assert.deepEqual([s.sharing, s.readOnly], [true, true]);
  s = reduce(s, { type: 'renamed', title: 'Mine' });
  assert.equal(s.title, 'Mine');
  // A snapshot rebuilds the log's slices and keeps the session's.
  const again = keepSession(fromSnapshot({ seq: 3, entries: [] }), s);
  assert.deepEqual([again.detail, again.watchers, again.readOnly, again.sharing, again.notResumable, again.status, again.title],
    [s.detail, s.watchers, true, true, 'cannot restart', 'detached', null]);
  // Once the session is no longer detached, a refused restart is no longer news.
  assert.equal(reduce(s, { jsonrpc: '2.0', method: '_gateway/session_status', params: { status: 'idle' } }).notResumable, null);
});

test('actions: the modes and options the selectors show, from the detail, its snapshot and the answers', () => {
  const view = { status: 'idle', modes: { currentModeId: 'ask', availableModes: [{ id: 'ask' }, { id: 'code' }] }, configOptions: [{ id: 'model', currentValue: 'a' }] };
  let s = reduce(initialState(), { type: 'session', view });
  assert.deepEqual([s.availableModes.length, s.currentModeId, s.configOptions[0].currentValue], [2, 'ask', 'a']);
  // A snapshot's mode and options are as new as the detail's: they stay.
  const snap = fromSnapshot({ seq: 1, entries: [], currentModeId: 'code', configOptions: [{ id: 'model', currentValue: 'b' }] });
  const t = reduce(snap, { type: 'session', view, fromSnapshot: true });
  assert.deepEqual([t.availableModes.length, t.currentModeId, t.configOptions[0].currentValue], [2, 'code', 'b']);
  s = reduce(s, { jsonrpc: '2.0', method: 'session/update', params: { update: { sessionUpdate: 'current_mode_update', currentModeId: 'code' } } });
  assert.equal(s.currentModeId, 'code');
  s = reduce(s, { type: 'mode', currentModeId: 'ask' });
  assert.equal(s.currentModeId, 'ask');
  const before = s.configOptions;
  s = reduce(s, { type: 'configValue', id: 'model', value: 'c' });
  assert.equal(s.configOptions[0].currentValue, 'c');
  assert.equal(before[0].currentValue, 'a'); // states are not changed in place
  s = reduce(s, { type: 'configOptions', configOptions: [{ id: 'model', currentValue: 'd' }] });
  assert.equal(s.configOptions[0].currentValue, 'd');
  assert.equal(keepSession(initialState(), s).availableModes, s.availableModes);
});

test('actions: the running turn\'s clock and a cancel, as the composer shows them', () => {
  const startedAt = '2026-01-02T03:04:05Z';
  let s = reduce(initialState(), { type: 'session', view: { status: 'running', currentTurn: { turnId: 't1', startedAt, cancelRequested: true } } });
  assert.deepEqual([s.turnStartedAt, s.cancelRequested], [Date.parse(startedAt), true]);
  s = reduce(s, { jsonrpc: '2.0', method: '_gateway/turn_ended', params: { turnId: 't1' } });
  assert.deepEqual([s.turnStartedAt, s.cancelRequested], [null, false]);
  // A turn the detail knows starts at its startedAt; another one waits for the page's clock.
  const withDetail = reduce(initialState(), { type: 'session', view: { status: 'idle', currentTurn: { turnId: 't2', startedAt } } });
  assert.equal(reduce(withDetail, { jsonrpc: '2.0', method: '_gateway/turn_started', params: { turnId: 't2' } }).turnStartedAt, Date.parse(startedAt));
  s = reduce(s, { jsonrpc: '2.0', method: '_gateway/turn_started', params: { turnId: 't3' } });
  assert.equal(s.turnStartedAt, null);
  s = reduce(s, { type: 'turnClock', at: 1000 });
  assert.equal(s.turnStartedAt, 1000);
  assert.equal(reduce(s, { type: 'turnClock', at: 2000 }), s);
  s = reduce(s, { type: 'cancel', requested: true });
  assert.equal(s.cancelRequested, true);
  assert.equal(reduce(s, { type: 'cancel', requested: false }).cancelRequested, false);
  const closed = reduce(s, { type: 'status', status: 'failed' });
  assert.deepEqual([closed.turn, closed.turnStartedAt, closed.cancelRequested], [null, null, false]);
  const idle = reduce(initialState(), { type: 'prompted', turnId: 't4', at: 5 });
  assert.deepEqual([idle.turn, idle.turnStartedAt], [{ turnId: 't4' }, 5]);
  assert.equal(reduce(initialState(), { type: 'cancel', requested: true }).cancelRequested, false);
});
