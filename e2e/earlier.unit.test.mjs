// Unit tests (node, no browser) of "Show earlier messages" against a full replay: a session's log folded from
// seq 1 with reduce() is what the page must show; a snapshot of the same log (its oldest entries evicted, as the
// gateway's snapshot evicts them) plus the earlier rows the EarlierLoader folds from the events pages must show
// the same rows before the snapshot's, with the same card states — also after a resync reloads a later snapshot.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initialState, reduce, fromSnapshot, createStore } from '../web/static/js/state.js';
import { EarlierLoader } from '../web/static/js/earlier.js';

/** A log being written: f appends a frame stamped with the next seq (and turnId), up a session/update. */
function logWriter() {
  const frames = [];
  let seq = 0;
  const f = (method, params, turnId, id) => {
    const fr = { jsonrpc: '2.0', method, params: { sessionId: 's', ...params, _meta: { gateway: { seq: ++seq, epoch: 'e', ...(turnId ? { turnId } : {}) } } } };
    if (id !== undefined) fr.id = id;
    frames.push(fr);
  };
  const up = (turnId, u) => f('session/update', { update: u }, turnId);
  return { frames, f, up };
}

/** A session's log: three turns. In t1 tool call X starts (in_progress) and asks permission P1; both are settled
 * only after five more messages (answered, then completed with a diff). In t2 tool call Y is left open when the
 * turn ends. t3 is plain messages and tool calls. turns: how many more plain turns to add at the end. */
function sessionLog(turns = 0) {
  const { frames, f, up } = logWriter();
  const msg = (turnId, kind, id, text) => up(turnId, { sessionUpdate: kind, messageId: id, content: { type: 'text', text } });
  const done = (turnId, id) => up(turnId, { sessionUpdate: 'tool_call', toolCallId: id, title: `Edit ${id}`, kind: 'edit', status: 'completed' });
  const plain = (t, n) => {
    for (let i = 1; i <= n; i++) {
      msg(t, 'agent_message_chunk', `${t}-a${i}`, `answer ${t}.${i}`);
      done(t, `${t}-c${i}`);
    }
  };
  const turn = (t, body) => {
    f('_gateway/turn_started', { turnId: t, actor: { principal: 'ann', name: 'Ann' } }, t);
    msg(t, 'user_message_chunk', `${t}-u`, `prompt ${t}`);
    body(t);
    f('_gateway/turn_ended', { turnId: t, stopReason: 'end_turn' }, t);
  };
  turn('t1', (t) => {
    up(t, { sessionUpdate: 'tool_call', toolCallId: 'X', title: 'Edit main.go', kind: 'edit', status: 'in_progress' });
    const options = [{ optionId: 'ok', name: 'Allow', kind: 'allow_once' }, { optionId: 'no', name: 'Reject', kind: 'reject_once' }];
    f('session/request_permission', { toolCall: { toolCallId: 'X', title: 'Edit main.go' }, options }, t, 'P1');
    plain(t, 5);
    f('_gateway/permission_resolved', { permissionId: 'P1', outcome: { outcome: 'selected', optionId: 'ok' }, by: 'rest', actor: { principal: 'ann', name: 'Ann' } }, t);
    up(t, { sessionUpdate: 'tool_call_update', toolCallId: 'X', status: 'completed', content: [{ type: 'diff', path: '/w/main.go', oldText: 'a', newText: 'b' }] });
    msg(t, 'agent_message_chunk', `${t}-a6`, 'answer t1.6');
  });
  turn('t2', (t) => {
    up(t, { sessionUpdate: 'tool_call', toolCallId: 'Y', title: 'Run tests', kind: 'execute', status: 'in_progress' });
    plain(t, 3);
  });
  turn('t3', (t) => plain(t, 4));
  for (let i = 4; i < 4 + turns; i++) turn(`t${i}`, (t) => plain(t, 2));
  return frames;
}

/** The gateway's snapshot of frames (translate/snapshot.go, for what these frames use): entries in order of first
 * appearance, the oldest evicted past maxEntries. An evicted message is forgotten; an evicted tool call of the
 * running turn is remembered until the turn ends, and a later update gives it a new entry with its whole state,
 * marked `continued` (its card starts before the window). */
function snapshotOf(frames, maxEntries) {
  const entries = [];
  const msgs = new Map();
  const tools = new Map(); // toolCallId → {e: its live entry or null once evicted, tc, turnId}
  let truncated = false;
  let running = null;
  const add = (e) => {
    entries.push(e);
    while (entries.length > maxEntries) {
      const gone = entries.shift();
      truncated = true;
      for (const [k, v] of msgs) if (v === gone) msgs.delete(k);
      for (const [k, v] of tools) {
        if (v.e !== gone) continue;
        if (v.turnId && v.turnId === running) v.e = null;
        else tools.delete(k);
      }
    }
  };
  const kinds = { user_message_chunk: 'user_message', agent_message_chunk: 'agent_message' };
  for (const fr of frames) {
    const turnId = fr.params._meta.gateway.turnId;
    if (fr.method === '_gateway/turn_started') running = turnId;
    if (fr.method === '_gateway/turn_ended') {
      running = null;
      for (const [k, v] of tools) if (!v.e) tools.delete(k);
    }
    if (fr.method !== 'session/update') continue;
    const u = fr.params.update;
    if (kinds[u.sessionUpdate]) {
      const key = `${u.sessionUpdate}/${turnId}/${u.messageId}`;
      let e = msgs.get(key);
      if (!e) {
        e = { kind: kinds[u.sessionUpdate], messageId: u.messageId, turnId, content: [{ type: 'text', text: '' }] };
        msgs.set(key, e);
        add(e);
      }
      e.content[0].text += u.content.text;
    } else if (u.sessionUpdate === 'tool_call' || u.sessionUpdate === 'tool_call_update') {
      let t = tools.get(u.toolCallId);
      if (t && !(u.sessionUpdate === 'tool_call_update' || t.turnId === turnId)) t = null;
      if (!t) {
        t = { e: null, tc: {}, turnId };
        tools.set(u.toolCallId, t);
        t.e = { kind: 'tool_call', turnId, toolCall: t.tc };
        add(t.e);
      } else if (!t.e) {
        t.e = { kind: 'tool_call', turnId: t.turnId, toolCall: t.tc, continued: true };
        add(t.e);
      }
      const { sessionUpdate, ...rest } = u; // eslint-disable-line no-unused-vars
      Object.assign(t.tc, rest);
    }
  }
  const seq = frames[frames.length - 1].params._meta.gateway.seq;
  return JSON.parse(JSON.stringify({ seq, entries, ...(truncated ? { truncated: true } : {}) }));
}

/** An events API over frames, giving at most `most` frames a page (fewer than asked, as a page may). */
function eventsOf(frames, most = 3) {
  return async (after, limit) => {
    const page = frames.filter((fr) => fr.params._meta.gateway.seq > after).slice(0, Math.min(limit, most));
    return { frames: page, lastSeq: page.length ? page[page.length - 1].params._meta.gateway.seq : after };
  };
}

/** A row as the transcript shows it, its key's early: prefix left out. */
function view(r) {
  const { key, ...rest } = r;
  return { key: key.replace(/^early:/, ''), ...rest };
}

const replay = (frames) => frames.reduce((s, fr) => reduce(s, fr), initialState());

async function loadAll(loader, store) {
  for (let i = 0; i < 100 && store.state.rows[store.state.early] && store.state.rows[store.state.early].noteKind === 'truncated'; i++) await loader.load();
}

test('earlier rows show their cards as a replay from seq 1 does, whatever entry the snapshot starts at', async () => {
  const frames = sessionLog();
  const full = replay(frames);
  const cards = (st) => st.rows.filter((r) => r.type === 'tool').map((r) => `${r.id}:${r.tc.status}:${r.stale}:${r.perm ? r.perm.state : '-'}`);
  assert.deepEqual(cards(full).filter((c) => /^[XY]:/.test(c)), ['X:completed:false:resolved', 'Y:in_progress:true:-']);
  // 11 entries and more keep X's entry until its completion (the gateway then keeps its final state or evicts it
  // whole); fewer than the 30 entries of the log leave out some.
  for (let max = 11; max < 30; max++) {
    const snap = snapshotOf(frames, max);
    assert.equal(snap.truncated, true);
    const store = createStore(fromSnapshot(snap));
    const loader = new EarlierLoader(store, eventsOf(frames));
    await loadAll(loader, store);
    const st = store.state;
    assert.equal(st.rows.filter((r) => r.type === 'note').length, 0, `max ${max}: the gap is closed`);
    // The earlier rows are the replay's first rows, card states and all.
    const early = st.rows.slice(0, st.early).map(view);
    assert.deepEqual(early, full.rows.slice(0, st.early).map(view), `max ${max}: earlier rows differ from the replay`);
    // Every card either part shows has the replay's status and content; the earlier ones its permission
    // verdict and "not finished" mark too (a snapshot carries neither).
    st.rows.forEach((r, i) => {
      if (r.type !== 'tool') return;
      const want = full.rows.find((x) => x.type === 'tool' && x.id === r.id);
      assert.deepEqual([r.tc.status, r.tc.content], [want.tc.status, want.tc.content], `max ${max}: card ${r.id}`);
      if (i < st.early) assert.deepEqual([r.stale, r.perm], [want.stale, want.perm], `max ${max}: card ${r.id}`);
    });
  }
});

test('a live update of an earlier card that was still open at the snapshot reaches that card', async () => {
  // The snapshot is taken in t2 while Y runs, with Y's entry already evicted; Y's end comes live, after the load.
  const frames = sessionLog();
  const cut = frames.findIndex((fr) => fr.params.update && fr.params.update.messageId === 't2-a3');
  const before = frames.slice(0, cut + 1);
  const snap = snapshotOf(before, 3);
  const store = createStore(fromSnapshot(snap));
  const loader = new EarlierLoader(store, eventsOf(before));
  await loadAll(loader, store);
  for (const fr of frames.slice(cut + 1)) store.dispatch(fr);
  const ys = store.state.rows.filter((r) => r.type === 'tool' && r.id === 'Y');
  assert.equal(ys.length, 1, 'one card for Y');
  assert.equal(ys[0].stale, true, 'the turn ended with Y open: its card says it did not finish');
});

test('a resync to a later snapshot keeps the earlier rows the person loaded, as a replay shows them', async () => {
  const frames = sessionLog();
  const store = createStore(fromSnapshot(snapshotOf(frames, 20)));
  const loader = new EarlierLoader(store, eventsOf(frames));
  await loadAll(loader, store);
  const shownBefore = store.state.rows.filter((r) => r.type !== 'sep' && r.type !== 'end').length;

  // The log grew by two turns; the page lost its place and reloads the session's snapshot.
  const longer = sessionLog(2);
  loader.fetchPage = eventsOf(longer);
  const was = store.state;
  const next = await loader.refold(fromSnapshot(snapshotOf(longer, 20)), loader.kept(was));
  const full = replay(longer);
  assert.ok(next.early > 0, 'earlier rows are shown again');
  assert.equal(next.rows.filter((r) => r.type === 'note').length, 0, 'the whole log is shown, as before');
  assert.deepEqual(next.rows.slice(0, next.early).map(view), full.rows.slice(0, next.early).map(view));
  assert.ok(next.rows.filter((r) => r.type !== 'sep' && r.type !== 'end').length > shownBefore);

  // Loaded only in part (one click of a bound smaller than the gap): the same part comes back, the note after it.
  const s2 = createStore(fromSnapshot(snapshotOf(frames, 12)));
  const l2 = new EarlierLoader(s2, eventsOf(frames), { perClick: 4 });
  await l2.load();
  const part = s2.state.rows.slice(0, s2.state.early).map(view);
  assert.ok(part.length > 0 && s2.state.rows[s2.state.early].noteKind === 'truncated');
  l2.fetchPage = eventsOf(longer);
  const n2 = await l2.refold(fromSnapshot(snapshotOf(longer, 12)), l2.kept(s2.state));
  assert.deepEqual(n2.rows.slice(0, n2.early).map(view), part);
  assert.equal(n2.rows[n2.early].noteKind, 'truncated');

  // Nothing loaded: nothing to keep.
  const s3 = createStore(fromSnapshot(snapshotOf(frames, 12)));
  const l3 = new EarlierLoader(s3, eventsOf(frames));
  assert.equal(l3.kept(s3.state), null);
  // A snapshot that left nothing out needs no page, whatever was shown before.
  const whole = fromSnapshot(snapshotOf(frames, 100));
  l3.fetchPage = async () => { throw new Error('no page is needed'); };
  assert.equal(await l3.refold(whole, { whole: true }), whole);
});

// The cards of a state in order, one string each: turn, tool call id, status, content.
const cardList = (st) => st.rows.filter((r) => r.type === 'tool').map((r) => `${r.turnId}/${r.id}:${r.tc.status}:${JSON.stringify(r.tc.content || null)}`);

test('a tool call updated after its snapshot entry was evicted shows one card, at its first position', async () => {
  const all = sessionLog();
  const upd = all.findIndex((fr) => fr.params.update && fr.params.update.sessionUpdate === 'tool_call_update' && fr.params.update.toolCallId === 'X');
  // Fewer than 11 entries evict X's entry before its completion: a snapshot taken after it (and before the
  // continued entry is evicted in turn) gives X a continued entry.
  let continued = 0;
  for (let end = upd + 1; end <= all.length; end++) {
    const frames = all.slice(0, end);
    const full = replay(frames);
    for (let max = 1; max < 30; max++) {
      const snap = snapshotOf(frames, max);
      if (!snap.truncated) continue;
      if (snap.entries.some((e) => e.continued)) continued++;
      const store = createStore(fromSnapshot(snap));
      const loader = new EarlierLoader(store, eventsOf(frames));
      await loadAll(loader, store);
      const st = store.state;
      const at = `end ${end} max ${max}`;
      assert.equal(st.rows.filter((r) => r.type === 'note').length, 0, `${at}: the gap is closed`);
      assert.deepEqual(cardList(st), cardList(full), `${at}: the cards differ from the replay's`);
      assert.deepEqual(st.rows.slice(0, st.early).map(view), full.rows.slice(0, st.early).map(view), `${at}: earlier rows differ from the replay`);
      // Live frames reach the one card.
      const x = st.rows.find((r) => r.type === 'tool' && r.id === 'X');
      assert.equal(st.toolKey.get('X'), x.key, `${at}: X's updates reach its card`);
    }
  }
  assert.ok(continued >= 5, 'some snapshots continue X');
  // The continued entry first in the snapshot: the earlier rows read on past X's first position.
  const before = all.slice(0, upd + 1);
  const snap = snapshotOf(before, 1);
  assert.equal(snap.entries[0].continued, true);
  const store = createStore(fromSnapshot(snap));
  await loadAll(new EarlierLoader(store, eventsOf(before)), store);
  assert.deepEqual(cardList(store.state), cardList(replay(before)));
  assert.deepEqual(store.state.rows.map(view), replay(before).rows.map(view).filter((r) => r.type !== 'end'));
});

test('a permission still pending at the snapshot whose card is before the window shows one card', async () => {
  // The snapshot is taken while P1 waits, X's entry evicted; the page adds the pending request as app.js does.
  const frames = sessionLog();
  const cut = frames.findIndex((fr) => fr.method === '_gateway/permission_resolved');
  const before = frames.slice(0, cut);
  const full = replay(before);
  for (let max = 2; max < 10; max++) {
    const store = createStore(fromSnapshot(snapshotOf(before, max)));
    const loader = new EarlierLoader(store, eventsOf(before));
    store.dispatch({ jsonrpc: '2.0', id: 'P1', method: 'session/request_permission', params: { toolCall: { toolCallId: 'X', title: 'Edit main.go' }, options: [] } });
    await loadAll(loader, store);
    const st = store.state;
    const xs = st.rows.filter((r) => r.type === 'tool' && r.id === 'X');
    assert.equal(xs.length, 1, `max ${max}: one card for X`);
    assert.deepEqual(cardList(st), cardList(full), `max ${max}: the cards differ from the replay's`);
    assert.equal(xs[0].perm && xs[0].perm.state, 'pending', `max ${max}: X's card waits for the answer`);
    // The answer, live, reaches that card.
    store.dispatch(frames[cut]);
    const after = store.state.rows.filter((r) => r.type === 'tool' && r.id === 'X');
    assert.deepEqual(after.map((r) => r.perm && r.perm.state), ['resolved'], `max ${max}: the answer reaches X's card`);
  }
});

/** A log whose snapshot window starts early and spans many frames: turn t1 runs tool call X (left in_progress, or
 * only asked permission for when `permOnly`), then one message streamed in `chunks` chunks; a snapshot of one
 * entry keeps only that message. `ended`: t1 ends before the message, which then comes in a second turn. */
function longWindowLog(chunks, { permOnly = false, ended = false } = {}) {
  const { frames, f, up } = logWriter();
  f('_gateway/turn_started', { turnId: 't1' }, 't1');
  up('t1', { sessionUpdate: 'user_message_chunk', messageId: 'u1', content: { type: 'text', text: 'prompt' } });
  if (permOnly) {
    f('session/request_permission', { toolCall: { toolCallId: 'Z', title: 'Write file' }, options: [{ optionId: 'ok', name: 'Allow', kind: 'allow_once' }] }, 't1', 'P1');
    f('_gateway/permission_resolved', { permissionId: 'P1', outcome: { outcome: 'selected', optionId: 'ok' }, by: 'rest' }, 't1');
  } else {
    up('t1', { sessionUpdate: 'tool_call', toolCallId: 'X', title: 'Run server', kind: 'execute', status: 'in_progress' });
  }
  let t = 't1';
  if (ended) {
    f('_gateway/turn_ended', { turnId: 't1', stopReason: 'end_turn' }, 't1');
    t = 't2';
    f('_gateway/turn_started', { turnId: t }, t);
  }
  for (let i = 0; i < chunks; i++) up(t, { sessionUpdate: 'agent_message_chunk', messageId: 'long', content: { type: 'text', text: '.' } });
  return frames;
}

/** eventsOf, counting the frames it hands out in count.n. */
function countingEvents(frames, count) {
  const get = eventsOf(frames, 1000);
  return async (after, limit) => {
    const page = await get(after, limit);
    count.n += page.frames.length;
    return page;
  };
}

test('one click reads at most its bound and its read-ahead when an earlier card stays open in a running turn', async () => {
  const frames = longWindowLog(3000);
  const snap = snapshotOf(frames, 1);
  assert.equal(snap.entries.length, 1);
  const store = createStore(fromSnapshot(snap));
  const count = { n: 0 };
  const loader = new EarlierLoader(store, countingEvents(frames, count), { perClick: 50 });
  await loader.load();
  assert.ok(count.n <= 100, `one click read ${count.n} frames (bound 50, read-ahead 50)`);
  const st = store.state;
  const x = st.rows.slice(0, st.early).find((r) => r.type === 'tool' && r.id === 'X');
  assert.ok(x, 'the earlier card is shown');
  assert.equal(st.rows[st.early].noteKind, 'truncated', 'the note stays: the card may not be final yet');
  assert.match(st.rows[st.early].text, /final/);
  // Further clicks read on to the snapshot; the turn's end, live, then leaves X's card unfinished.
  await loadAll(loader, store);
  assert.equal(store.state.rows.filter((r) => r.type === 'note').length, 0, 'the gap is closed');
  store.dispatch({ jsonrpc: '2.0', method: '_gateway/turn_ended', params: { sessionId: 's', turnId: 't1', stopReason: 'end_turn', _meta: { gateway: { seq: frames.length + 1, epoch: 'e', turnId: 't1' } } } });
  const xs = store.state.rows.filter((r) => r.type === 'tool' && r.id === 'X');
  assert.deepEqual(xs.map((r) => [r.tc.status, r.stale]), [['in_progress', true]]);
});

test('a card made only by a permission request settles at its turn end: one click reads no further', async () => {
  const frames = longWindowLog(3000, { permOnly: true, ended: true });
  const full = replay(frames);
  const store = createStore(fromSnapshot(snapshotOf(frames, 1)));
  const count = { n: 0 };
  const loader = new EarlierLoader(store, countingEvents(frames, count), { perClick: 50 });
  await loader.load();
  assert.ok(count.n <= 50, `one click read ${count.n} frames (bound 50)`);
  const st = store.state;
  assert.equal(st.rows.filter((r) => r.type === 'note').length, 0, 'the gap is closed');
  assert.deepEqual(st.rows.slice(0, st.early).map(view), full.rows.slice(0, st.early).map(view));
  const z = st.rows.find((r) => r.type === 'tool' && r.id === 'Z');
  assert.deepEqual([z.perm && z.perm.state, z.stale], ['resolved', true], 'the turn ended: the card is final');
});

test('a live frame that settled an earlier card before the gap closed stays on that card as the next clicks read on', async () => {
  const frames = longWindowLog(3000);
  const store = createStore(fromSnapshot(snapshotOf(frames, 1)));
  const loader = new EarlierLoader(store, countingEvents(frames, { n: 0 }), { perClick: 50 });
  await loader.load();
  assert.equal(store.state.rows[store.state.early].noteKind, 'truncated', 'the first click leaves the gap open');
  store.dispatch({ jsonrpc: '2.0', method: '_gateway/turn_ended', params: { sessionId: 's', turnId: 't1', stopReason: 'end_turn', _meta: { gateway: { seq: frames.length + 1, epoch: 'e', turnId: 't1' } } } });
  await loadAll(loader, store);
  assert.equal(store.state.rows.filter((r) => r.type === 'note').length, 0, 'the gap is closed');
  const xs = store.state.rows.filter((r) => r.type === 'tool' && r.id === 'X');
  assert.deepEqual(xs.map((r) => [r.tc.status, r.stale]), [['in_progress', true]], 'the turn ended with X open');
  assert.equal(store.state.open.X, undefined, 'a later turn end does not reach X again');
});
