// The state core of one open session: `reduce(state, frame)` folds the frames of the session's WebSocket (or a
// snapshot, `fromSnapshot`) into what the views show — transcript rows, plan, usage, mode, options, title,
// commands, terminals, the permission requests waiting. Pure: no DOM, no I/O, no clock, so node tests it against the gateway's golden frames.
//
// Each reduce returns a new state object. Rows are immutable: a changed row is a new object, so a view knows
// what to render again by identity. The row index (`state.at`, key → position) only grows and is shared by the
// states of one store: rows never move, and a state never looks past its own rows, so a store that only moves
// forward can share it (two branches from one state cannot).

const TERMINAL_KEEP = 256 << 10; // characters of a terminal's output kept in state (the pane keeps 2 000 lines)

const STOP_LABEL = {
  end_turn: 'Done', cancelled: 'Cancelled', max_tokens: 'Stopped: token limit', max_turn_requests: 'Stopped: request limit',
  refusal: 'The agent refused', error: 'Failed',
};

/** The state of a session before any frame. */
export function initialState() {
  return {
    seq: 0, // the seq of the last logged frame folded in
    rows: [], // transcript rows in order: message, tool, sep, end, note (see the row makers below)
    at: new Map(), // row key → index in rows (append-only, shared; see above)
    toolKey: new Map(), // toolCallId → the key of its latest card (shared like at)
    last: -1, // index of the message row that chunks without a messageId extend, or -1
    open: {}, // toolCallId → true for tool calls not yet completed or failed
    nextKey: 0, // counter for rows without an identity of their own
    actors: {}, // turnId → {principal, name}: who prompted it (`_gateway/turn_started`)
    permTool: {}, // permissionId → the key of its tool card
    ended: {}, // turnId → true once its end row is in
    turn: null, // {turnId} while a turn runs
    lastStop: null, // stopReason of the last turn that ended
    plan: null,
    currentModeId: null,
    configOptions: null,
    usage: null,
    title: null,
    commands: [],
    terminals: {}, // terminalId → {data, total, exit, gap}
    truncated: false, // the snapshot this state started from left entries out
    absorbed: [], // snapshot rows mergeEarlier folded into the earlier cards they continue (see there)
    early: 0, // rows before the 'truncated' note: loaded from the log's start (mergeEarlier)
    status: null, // the session's status (GET /v1/sessions/{id}, `_gateway/session_status`, turns)
    statusReason: null,
    detail: null, // the session's detail (GET /v1/sessions/{id} without its snapshot): agent, cwd, node, policy …
    watchers: [], // who streams the session now: the detail's `watchers`, then `_gateway/presence`
    readOnly: false, // the gateway refused an act with 403 forbidden: shared with this page to watch only
    sharing: false, // the gateway lists the session's shares for this page
    notResumable: null, // why a prompt to this detached session was refused (409 session_not_resumable)
    availableModes: [], // the agent's modes (the detail's `modes`; frames only switch between them)
    turnStartedAt: null, // when the running turn started (ms since the epoch), null when unknown
    cancelRequested: false, // the page asked to cancel the running turn
    loaded: false, // GET /v1/sessions/{id} answered (the detail is more than the id)
    replayed: false, // the socket's replay is complete: what follows is live
    pending: [], // permission requests waiting for an answer, in order: {id, toolCall, options, deadline, turnId, createdAt}
    deferred: {}, // permission id → true: put aside by the person ("decide later"), or answered and not yet confirmed
    answered: {}, // permission id → true: answered from this page
    showing: null, // the permission id the dialog shows (or would show)
    questions: 0, // the agent's questions (elicitations) waiting in the page
  };
}

function metaOf(params) {
  return (params && params._meta && params._meta.gateway) || {};
}

// --- rows ----------------------------------------------------------------------------------------------------------

function put(s, row) {
  const i = s.at.get(row.key);
  if (i !== undefined && i < s.rows.length && s.rows[i].key === row.key) {
    if (s.rows === s.prevRows) s.rows = s.rows.slice();
    s.rows[i] = row;
    return i;
  }
  if (s.rows === s.prevRows) s.rows = s.rows.slice();
  s.rows.push(row);
  s.at.set(row.key, s.rows.length - 1);
  return s.rows.length - 1;
}

function rowAt(s, key) {
  const i = s.at.get(key);
  return i !== undefined && i < s.rows.length && s.rows[i].key === key ? s.rows[i] : null;
}

const MESSAGE_KIND = { user_message_chunk: 'user', agent_message_chunk: 'agent', agent_thought_chunk: 'thought' };

function chunk(s, kind, messageId, block, turnId) {
  let row = null;
  // Message ids are unique per turn (as the gateway's snapshot merges them).
  const idKey = messageId ? `m:${kind}:${turnId || ''}:${messageId}` : null;
  if (idKey) row = rowAt(s, idKey);
  else if (s.last >= 0 && s.rows[s.last] && s.rows[s.last].kind === kind) row = s.rows[s.last];
  if (!row) {
    const key = idKey || `m:${kind}:#${s.nextKey++}`;
    row = { key, type: 'message', kind, messageId: messageId || null, turnId: turnId || null, text: '', extras: [] };
  }
  if (block && typeof block === 'object') {
    if (block.type === 'text') row = { ...row, text: row.text + String(block.text ?? '') };
    else row = { ...row, extras: row.extras.concat([block]) };
  }
  s.last = put(s, row);
}

/** Merges a tool_call or tool_call_update into the card's tool call, as the transcript shows it. */
export function mergeToolCall(old, upd) {
  const tc = { ...(old || {}) };
  for (const [k, v] of Object.entries(upd || {})) {
    if (k === 'sessionUpdate' || v === undefined) continue;
    if ((k === 'content' || k === 'locations') && v === null) tc[k] = [];
    else if (v === null && (k === 'title' || k === 'kind' || k === 'status')) continue;
    else tc[k] = v;
  }
  return tc;
}

function toolRowOf(s, id) {
  const key = s.toolKey.get(id);
  return key ? rowAt(s, key) : null;
}

function newToolRow(s, id, turnId) {
  const key = s.toolKey.has(id) ? `t:${id}#${s.nextKey++}` : 't:' + id;
  s.toolKey.set(id, key);
  return { key, type: 'tool', id, tc: { toolCallId: id }, termId: null, stale: false, perm: null, turnId: turnId || null };
}

// A `tool_call` starts a new card unless its id is known in the running turn: ids are unique per turn only (the
// SDK's example agent reuses call_1 every turn), as the gateway's snapshot has it. An update for an unknown id
// creates the card, since it may overtake its `tool_call`.
function toolCall(s, u, isUpdate, turnId) {
  const id = u.toolCallId;
  if (!id) return;
  let row = toolRowOf(s, id);
  const fresh = !row || (!isUpdate && !(turnId && row.turnId === turnId));
  if (fresh) row = newToolRow(s, id, turnId);
  row = { ...row, tc: mergeToolCall(row.tc, u) };
  row.termId = terminalMeta(s, row.termId || null, id, u._meta);
  const st = row.tc.status;
  if (st === 'completed' || st === 'failed') {
    row.stale = false;
    if (s.open[id]) { s.open = { ...s.open }; delete s.open[id]; }
  } else if (!s.open[id]) s.open = { ...s.open, [id]: true };
  put(s, row);
  s.last = -1;
}

// --- terminals -----------------------------------------------------------------------------------------------------

function writeTerminal(s, id, text) {
  if (!text) return;
  const t = s.terminals[id] || { data: '', total: 0, exit: null, gap: false };
  let data = t.data + text;
  if (data.length > TERMINAL_KEEP) data = data.slice(data.length - TERMINAL_KEEP);
  s.terminals = { ...s.terminals, [id]: { ...t, data, total: t.total + text.length, gap: false } };
}

function exitTerminal(s, id, exitCode, signal) {
  const t = s.terminals[id] || { data: '', total: 0, exit: null, gap: false };
  s.terminals = { ...s.terminals, [id]: { ...t, exit: { exitCode: exitCode ?? null, signal: signal ?? null } } };
}

// The terminal fields of a tool call's _meta (claude-agent-acp, codex-acp): terminal_info names the terminal,
// terminal_output carries new output, terminal_exit its end. Returns the terminal id the card shows.
function terminalMeta(s, termId, toolId, meta) {
  if (!meta || typeof meta !== 'object') return termId;
  const idOf = (o) => (o && typeof o.terminal_id === 'string' && o.terminal_id) || termId || toolId;
  if (meta.terminal_info && typeof meta.terminal_info === 'object') termId = idOf(meta.terminal_info);
  const out = meta.terminal_output;
  if (out && typeof out === 'object' && typeof out.data === 'string') {
    termId = idOf(out);
    writeTerminal(s, termId, out.data);
  }
  const ex = meta.terminal_exit;
  if (ex && typeof ex === 'object') {
    termId = idOf(ex);
    exitTerminal(s, termId, ex.exit_code, ex.signal);
  }
  return termId;
}

// --- frames --------------------------------------------------------------------------------------------------------

function update(s, u, turnId) {
  if (!u || typeof u !== 'object') return;
  const kind = MESSAGE_KIND[u.sessionUpdate];
  if (kind) return chunk(s, kind, u.messageId, u.content, turnId);
  switch (u.sessionUpdate) {
    case 'tool_call': return toolCall(s, u, false, turnId);
    case 'tool_call_update': return toolCall(s, u, true, turnId);
    case 'plan': s.plan = { entries: Array.isArray(u.entries) ? u.entries : [] }; return;
    case 'current_mode_update': s.currentModeId = u.currentModeId ?? null; return;
    case 'config_option_update': if (Array.isArray(u.configOptions)) s.configOptions = u.configOptions; return;
    case 'session_info_update': // a null title clears it, as the gateway's snapshot merges it
      if ('title' in u) s.title = typeof u.title === 'string' && u.title ? u.title : null;
      return;
    case 'usage_update':
      s.usage = { used: u.used, size: u.size, cost: u.cost, lastTurn: s.usage ? s.usage.lastTurn : undefined };
      return;
    case 'available_commands_update':
      s.commands = Array.isArray(u.availableCommands) ? u.availableCommands : [];
      return;
    default:
      return; // unknown variants are tolerated
  }
}

function addRow(s, row) {
  put(s, { key: `${row.type}:#${s.nextKey++}`, ...row });
  s.last = -1;
}

function turnStarted(s, turnId, actor) {
  if (turnId && actor && typeof actor === 'object') s.actors = { ...s.actors, [turnId]: actor };
  s.turn = { turnId: turnId || null };
  s.lastStop = null;
  if (s.status !== 'closed' && s.status !== 'failed') s.status = 'running';
  // Frames carry no time: a turn that was running when the page loaded started at the detail's startedAt.
  const cur = s.detail && s.detail.currentTurn;
  s.turnStartedAt = cur && turnId && cur.turnId === turnId ? timeOf(cur.startedAt) : null;
  s.cancelRequested = false;
  s.last = -1;
  if (s.rows.length) addRow(s, { type: 'sep', turnId: turnId || null });
}

function turnEnded(s, p, turnId) {
  s.turn = null;
  s.lastStop = p.stopReason || null;
  if (s.status === 'running') s.status = 'idle';
  s.turnStartedAt = null;
  s.cancelRequested = false;
  if (s.usage || p.usage) s.usage = { ...s.usage, lastTurn: p.usage ? { turnId, ...p.usage } : undefined };
  if (turnId && s.ended[turnId]) return;
  if (turnId) s.ended = { ...s.ended, [turnId]: true };
  // Tool calls the agent left open can no longer progress: their cards say so, keeping the last status.
  for (const id of Object.keys(s.open)) {
    const row = toolRowOf(s, id);
    const done = row && (row.tc.status === 'completed' || row.tc.status === 'failed');
    if (row && !row.stale && !done) put(s, { ...row, stale: true });
  }
  s.open = {};
  const reason = p.error ? 'error' : p.stopReason || 'end_turn';
  let detail = null;
  if (p.error) detail = typeof p.error === 'string' ? p.error : p.error.message || JSON.stringify(p.error);
  addRow(s, { type: 'end', turnId: turnId || null, reason, label: STOP_LABEL[reason] || `Stopped: ${reason}`, detail });
}

function permissionRequested(s, pid, toolCall, options = []) {
  const id = toolCall && toolCall.toolCallId;
  if (!pid || !id) return;
  let row = toolRowOf(s, id);
  if (!row) {
    row = newToolRow(s, id, null);
    row = { ...row, tc: mergeToolCall(row.tc, toolCall) };
    // Open like a tool call's card, so its turn's end settles it: no later frame may complete it then (and a
    // load of earlier messages need not read on for it).
    if (!s.open[id]) s.open = { ...s.open, [id]: true };
    // After a snapshot that left entries out, the card may be among them: it joins it once loaded.
    if (s.truncated) row.continues = 'permission';
  }
  s.permTool = { ...s.permTool, [pid]: row.key };
  put(s, { ...row, perm: { state: 'pending', permissionId: pid, options } });
}

// --- pending permission requests -------------------------------------------------------------------------------

function putPending(s, req) {
  const i = s.pending.findIndex((p) => p.id === req.id);
  s.pending = i < 0 ? s.pending.concat([req]) : s.pending.map((p, j) => (j === i ? req : p));
  settleShowing(s);
}

function dropPending(s, id) {
  if (s.pending.some((p) => p.id === id)) s.pending = s.pending.filter((p) => p.id !== id);
  if (s.deferred[id]) s.deferred = without(s.deferred, id);
  settleShowing(s);
}

function without(obj, key) {
  const o = { ...obj };
  delete o[key];
  return o;
}

/** The request the dialog shows: the one it shows while it waits and is not put aside, else the first that is. */
export function pickPermission(st) {
  const cur = st.showing && st.pending.find((p) => p.id === st.showing);
  if (cur && !st.deferred[cur.id]) return cur;
  return st.pending.find((p) => !st.deferred[p.id]) || null;
}

function settleShowing(s) {
  const p = pickPermission(s);
  if (p) s.showing = p.id;
}

/**
 * Folds one frame of the session's stream (a JSON-RPC message as the gateway sent it) into state; returns the
 * new state. Frames it does not know leave the state as it was (the same object).
 */
export function reduce(state, frame) {
  if (!frame || typeof frame !== 'object') return state;
  if (typeof frame.type === 'string' && frame.method === undefined) return act(state, frame);
  const p = frame.params || {};
  const meta = metaOf(p);
  const s = { ...state, prevRows: state.rows };
  if (typeof meta.seq === 'number' && meta.seq > s.seq) s.seq = meta.seq;
  switch (frame.method) {
    case 'session/update':
      update(s, p.update, meta.turnId);
      break;
    case 'session/request_permission': {
      const pid = frame.id !== undefined && frame.id !== null ? String(frame.id) : meta.permissionId;
      permissionRequested(s, pid, p.toolCall, Array.isArray(p.options) ? p.options : []);
      if (!pid) break;
      // A request made live is in front of the person again, even if an earlier one with its id was put aside.
      if (s.replayed && s.deferred[pid]) s.deferred = without(s.deferred, pid);
      putPending(s, { id: pid, toolCall: p.toolCall || {}, options: Array.isArray(p.options) ? p.options : [], deadline: meta.deadline, turnId: meta.turnId });
      break;
    }
    case '_gateway/permission_resolved': {
      dropPending(s, p.permissionId);
      const key = s.permTool[p.permissionId];
      const row = key && rowAt(s, key);
      if (row) put(s, { ...row, perm: { state: 'resolved', permissionId: p.permissionId, resolution: p, options: (row.perm && row.perm.options) || [] } });
      break;
    }
    case '_gateway/turn_started':
      turnStarted(s, p.turnId || meta.turnId, p.actor);
      break;
    case '_gateway/turn_ended':
      turnEnded(s, p, p.turnId || meta.turnId);
      break;
    case '_gateway/fs_write':
      addRow(s, { type: 'note', noteKind: 'fs-write', text: `Wrote ${p.path} (${p.bytes} bytes)` });
      break;
    case '_gateway/agent_output':
      addRow(s, { type: 'note', noteKind: 'agent-output', text: p.dropped ? 'Further agent output is not shown.' : `Agent output: ${p.line}${p.truncated ? ' …' : ''}` });
      break;
    case '_gateway/terminal_output': {
      const id = typeof p.terminalId === 'string' ? p.terminalId : '';
      if (!id) break;
      const t = s.terminals[id];
      if (p.truncated === true && !(t && t.gap)) {
        writeTerminal(s, id, '\r\n[output not kept]\r\n');
        s.terminals = { ...s.terminals, [id]: { ...s.terminals[id], gap: true } };
      }
      if (typeof p.data === 'string' && p.data !== '') writeTerminal(s, id, p.data);
      break;
    }
    case '_gateway/session_status':
      setStatus(s, p.status || s.status, p.reason);
      break;
    case '_gateway/presence':
      s.watchers = Array.isArray(p.watchers) ? p.watchers : [];
      break;
    case '_gateway/replay_complete':
      s.replayed = true;
      break;
    case '_gateway/terminal_exit':
      if (typeof p.terminalId === 'string' && p.terminalId) exitTerminal(s, p.terminalId, p.exitCode, p.signal);
      break;
    default:
      if (s.seq === state.seq) return state;
  }
  delete s.prevRows;
  return s;
}

const TRUNCATED_TEXT = 'Earlier messages are not shown: the gateway keeps the latest part of a long session for clients that open it.';

const ENTRY_KIND = { user_message: 'user', agent_message: 'agent', agent_thought: 'thought' };

/**
 * The state of a session's snapshot (`GET /v1/sessions/{id}` → `snapshot`): its entries as rows, its plan, mode,
 * options, usage, title, commands and terminals, at the snapshot's seq. actors: who prompted the turns this page
 * saw start (a snapshot names nobody), kept across a resync.
 */
export function fromSnapshot(snapshot, actors = {}) {
  const snap = snapshot && typeof snapshot === 'object' ? snapshot : {};
  const s = { ...initialState(), actors: { ...actors } };
  s.prevRows = null;
  s.seq = typeof snap.seq === 'number' ? snap.seq : 0;
  s.truncated = snap.truncated === true;
  for (const t of Array.isArray(snap.terminals) ? snap.terminals : []) {
    if (!t || typeof t.terminalId !== 'string' || !t.terminalId) continue;
    const out = typeof t.output === 'string' ? t.output : '';
    writeTerminal(s, t.terminalId, t.truncated === true ? `[earlier output not kept]\r\n${out}` : out);
    const ex = t.exitStatus && typeof t.exitStatus === 'object' ? t.exitStatus : null;
    if (ex) exitTerminal(s, t.terminalId, typeof ex.exitCode === 'number' ? ex.exitCode : null, typeof ex.signal === 'string' ? ex.signal : null);
  }
  if (s.truncated) {
    addRow(s, { type: 'note', noteKind: 'truncated', text: TRUNCATED_TEXT, earlier: { status: 'idle' } });
  }
  let prevTurn = null;
  for (const e of Array.isArray(snap.entries) ? snap.entries : []) {
    if (!e || typeof e !== 'object') continue;
    // The snapshot keeps no turn boundaries; a new turnId starts a new turn, as a separator shows.
    if (e.turnId && prevTurn && e.turnId !== prevTurn) addRow(s, { type: 'sep', turnId: e.turnId });
    if (e.turnId) prevTurn = e.turnId;
    if (e.kind === 'tool_call' && e.toolCall) {
      toolCall(s, e.toolCall, false, e.turnId);
      // A continued entry: the tool call's first entry was evicted, so its card starts before the window.
      const row = e.continued === true && toolRowOf(s, e.toolCall.toolCallId);
      if (row) put(s, { ...row, continues: 'entry' });
      continue;
    }
    const kind = ENTRY_KIND[e.kind];
    if (!kind) continue;
    const blocks = Array.isArray(e.content) ? e.content : [];
    s.last = -1;
    if (!blocks.length) chunk(s, kind, e.messageId, null, e.turnId);
    for (const b of blocks) chunk(s, kind, e.messageId, b, e.turnId);
    s.last = -1;
  }
  // The snapshot is a point between frames: open tool calls stay open until their turn's end.
  s.plan = snap.plan || null;
  if (snap.currentModeId) s.currentModeId = snap.currentModeId;
  if (Array.isArray(snap.configOptions)) s.configOptions = snap.configOptions;
  if (snap.usage) s.usage = snap.usage;
  if (snap.sessionInfo && typeof snap.sessionInfo.title === 'string' && snap.sessionInfo.title) s.title = snap.sessionInfo.title;
  if (Array.isArray(snap.availableCommands)) s.commands = snap.availableCommands;
  delete s.prevRows;
  return s;
}

// --- earlier messages ----------------------------------------------------------------------------------------------

/**
 * The first row a snapshot state shows after its 'truncated' note (a message or tool card), as {type, kind,
 * messageId, toolCallId, turnId}: the frames folded from the log's start reach the snapshot where it appears.
 * Cards that continue one before the window are not where it starts. null when there is nothing to reach.
 */
export function boundaryOf(state) {
  for (let i = state.early; i < state.rows.length; i++) {
    const r = state.rows[i];
    if (r.continues) continue;
    if (r.type === 'message') return { type: 'message', kind: r.kind, messageId: r.messageId, turnId: r.turnId };
    if (r.type === 'tool') return { type: 'tool', toolCallId: r.id, turnId: r.turnId };
  }
  return null;
}

function isBoundary(row, b) {
  if (!b || row.type !== b.type || row.turnId !== b.turnId) return false;
  return b.type === 'message' ? row.kind === b.kind && row.messageId === b.messageId : row.id === b.toolCallId;
}

// The keys of the rows before cut that later frames may still change: tool cards not yet completed, failed or
// left behind by their turn's end, and cards whose permission request waits for its answer.
function unsettledBefore(s, cut) {
  const keys = [];
  for (let i = 0; i < cut; i++) if (unsettled(s.rows[i])) keys.push(s.rows[i].key);
  return keys;
}

function unsettled(row) {
  if (!row || row.type !== 'tool') return false;
  if (row.perm && row.perm.state === 'pending') return true;
  const st = row.tc.status;
  return st !== 'completed' && st !== 'failed' && !row.stale;
}

/**
 * Folds frames (in log order) into `folded`, a state of the log from its start, until one makes the boundary's
 * row (the snapshot's first) and the rows before it are settled (no card among them can change any more), or
 * one passes maxSeq (the snapshot's seq). cut: the boundary row's index once a previous page made it (else -1).
 * The rows before the boundary take what the frames after it did to them (a tool call completed, a permission
 * answered inside the snapshot's window), as a replay from seq 1 shows them. Returns {state, used: frames folded,
 * lastSeq, cut, end: the boundary's rows are final or maxSeq passed, found: the boundary's row was made, rows:
 * the rows before it (end) or null}.
 */
export function foldEarlier(folded, frames, boundary, maxSeq, cut = -1) {
  let s = folded;
  let used = 0;
  let lastSeq = null;
  let open = cut >= 0 ? unsettledBefore(s, cut) : null;
  const finish = () => ({ state: s, used, lastSeq, cut, rows: s.rows.slice(0, cut >= 0 ? cut : s.rows.length), end: true, found: cut >= 0 });
  if (open && !open.length) return finish();
  for (const f of frames) {
    const seq = metaOf(f && f.params).seq;
    if (typeof seq === 'number' && seq > maxSeq) return finish();
    const n = s.rows.length;
    s = reduce(s, f);
    used++;
    if (typeof seq === 'number') lastSeq = seq;
    if (cut < 0) {
      for (let i = n; i < s.rows.length; i++) {
        if (isBoundary(s.rows[i], boundary)) {
          cut = i;
          open = unsettledBefore(s, cut);
          break;
        }
      }
    } else open = open.filter((k) => unsettled(rowAt(s, k)));
    if (open && !open.length) return finish();
  }
  return { state: s, used, lastSeq, cut, rows: null, end: false, found: cut >= 0 };
}

/**
 * Shows earlier rows (of a state folded from the log's start) before the snapshot's rows of state, in place of
 * those shown so far, and sets the 'truncated' note between them (note: {status, error, text}) or removes it
 * (note null: everything before the snapshot is shown). earlier null keeps the earlier rows. Earlier keys get
 * an `early:` prefix, so they never meet the keys of the state's own rows. folded: the state the earlier rows
 * were folded in; the frames still to come reach its open cards and pending permissions. Returns the new state.
 */
export function mergeEarlier(state, earlier, note, folded = null) {
  const at = state.early;
  const old = state.rows[at];
  const hasNote = old && old.type === 'note' && old.noteKind === 'truncated';
  if (!hasNote) return state;
  const prev = state.rows.slice(0, at);
  const mine = earlier ? earlier.map((r) => keepSettled(state, { ...r, key: 'early:' + r.key })) : prev;
  let tail = state.rows.slice(at + 1);
  const next = { ...state };
  if (earlier) tail = absorb(next, mine, tail, folded);
  const rows = note ? [...mine, { ...old, text: note.text || old.text, earlier: { status: note.status, error: note.error || null } }, ...tail] : [...mine, ...tail];
  const index = new Map();
  rows.forEach((r, i) => index.set(r.key, i));
  const last = state.last >= 0 ? index.get(state.rows[state.last].key) : undefined;
  Object.assign(next, { rows, at: index, early: mine.length, last: last === undefined ? -1 : last });
  if (earlier && folded) {
    linkEarlier(next, folded, earlier);
    next.actors = { ...folded.actors, ...state.actors }; // who prompted the earlier turns
  }
  return next;
}

// Folds the snapshot's cards that continue an earlier one (a continued entry, or a card a pending permission made
// for a tool call the snapshot left out) into that earlier card of mine, as a replay from seq 1 has one card per
// tool call at its first position: the earlier card takes the entry's tool call (its state at the snapshot's seq)
// or the pending permission. Returns tail without them; s.absorbed keeps them for the next merge, whose earlier
// rows are folded again. The frames after the snapshot then reach the earlier card (linkEarlier).
function absorb(s, mine, tail, folded) {
  const found = [...s.absorbed, ...tail.filter((r) => r.type === 'tool' && r.continues)];
  if (!found.length) return tail;
  const drop = new Set();
  const absorbed = [];
  for (const c of found) {
    let i = -1;
    if (c.continues === 'entry') i = mine.findLastIndex((r) => r.type === 'tool' && r.id === c.id && r.turnId === c.turnId);
    else {
      const key = folded && folded.toolKey.get(c.id);
      i = key ? mine.findIndex((r) => r.key === 'early:' + key) : mine.findLastIndex((r) => r.type === 'tool' && r.id === c.id);
    }
    if (i < 0) continue;
    const r = mine[i];
    if (c.continues === 'entry') {
      const tc = mergeToolCall(r.tc, c.tc);
      mine[i] = { ...r, tc, stale: tc.status === 'completed' || tc.status === 'failed' ? false : r.stale };
    } else if (c.perm && c.perm.state === 'pending' && !(r.perm && r.perm.permissionId === c.perm.permissionId)) {
      mine[i] = { ...r, perm: c.perm };
    }
    drop.add(c.key);
    absorbed.push(c);
  }
  if (!drop.size) return tail;
  s.absorbed = [...absorbed, ...s.absorbed.filter((c) => !drop.has(c.key))];
  // The tool call ids and permissions that led to the dropped cards lead to the earlier ones (linkEarlier).
  s.toolKey = new Map([...s.toolKey].filter(([, k]) => !drop.has(k)));
  s.permTool = Object.fromEntries(Object.entries(s.permTool).filter(([, k]) => !drop.has(k)));
  return tail.filter((r) => !drop.has(r.key));
}

// An earlier card the fold still has open, as the row already shown for it when that one is settled: the frames
// after the snapshot (live ones) settled it while the gap was not closed, and the fold, which stops at the
// snapshot's seq, never reads them.
function keepSettled(state, row) {
  if (row.type !== 'tool' || !unsettled(row)) return row;
  const shown = rowAt(state, row.key);
  return shown && shown.type === 'tool' && !unsettled(shown) ? shown : row;
}

// Lets the frames after the snapshot reach the earlier cards still open (or still asking permission) where the
// fold left them, as they would in a replay from seq 1: the card's tool call id, its open mark and its pending
// permission, unless the snapshot's rows have their own.
function linkEarlier(s, folded, earlier) {
  let copied = false;
  for (const r of earlier) {
    if (r.type !== 'tool' || folded.toolKey.get(r.id) !== r.key || s.toolKey.has(r.id)) continue;
    const key = 'early:' + r.key;
    if (!copied) s.toolKey = new Map(s.toolKey);
    copied = true;
    s.toolKey.set(r.id, key);
    if (!unsettled(rowAt(s, key))) continue; // settled by a frame after the snapshot (keepSettled)
    if (folded.open[r.id] && !s.open[r.id]) s.open = { ...s.open, [r.id]: true };
    const pid = r.perm && r.perm.state === 'pending' ? r.perm.permissionId : null;
    if (pid && !s.permTool[pid]) s.permTool = { ...s.permTool, [pid]: key };
  }
}

// --- actions -------------------------------------------------------------------------------------------------------

function setStatus(s, status, reason) {
  s.status = status || null;
  s.statusReason = reason || null;
  if (s.status === 'closed' || s.status === 'failed') { // an ended session runs no turn
    s.turn = null;
    s.turnStartedAt = null;
    s.cancelRequested = false;
  }
  if (s.status !== 'detached') s.notResumable = null;
}

function timeOf(iso) {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(t) ? t : null;
}

// The slices that are the session's rather than its log's: a state built from a snapshot keeps them.
const SESSION_SLICES = ['status', 'statusReason', 'detail', 'watchers', 'readOnly', 'sharing', 'notResumable', 'availableModes',
  'loaded', 'deferred', 'answered', 'showing', 'questions'];

/** next (say, fromSnapshot's) with the session slices of prev. */
export function keepSession(next, prev) {
  const s = { ...next };
  for (const k of SESSION_SLICES) s[k] = prev[k];
  return s;
}

// What REST answers and the page say of the session, as actions ({type, …}) that reduce folds like frames:
// session: GET /v1/sessions/{id} (`view`; `fromSnapshot` when the state was just built from its snapshot);
// status: the page learnt the status otherwise (404, the socket's close code); prompted: POST …/prompt answered
// with a turnId before its turn_started frame came; readOnly: a 403 forbidden; sharing: whether the share listing
// is offered; notResumable: a 409 session_not_resumable's text; renamed: the person renamed the session; mode,
// configOptions, configValue: what POST …/mode and …/config answered; turnClock: when a turn the page saw start
// started, by the page's clock (reduce keeps none); cancel: POST …/cancel asked or failed; replaying: the socket
// replays (again), so what comes is not live; permReview, permDefer, permAnswer, permAnswerFailed: the person
// brought a permission request up, put it aside, answered it, or the answer failed (outcome gone, forbidden or
// error); questions: how many of the agent's questions wait in the page.
function act(state, a) {
  const s = { ...state };
  switch (a.type) {
    case 'session': {
      const v = a.view && typeof a.view === 'object' ? a.view : {};
      s.status = v.status || s.status;
      s.statusReason = v.statusReason || null;
      if (v.lastTurn && v.lastTurn.stopReason) s.lastStop = v.lastTurn.stopReason;
      if (v.currentTurn) {
        s.turn = { turnId: v.currentTurn.turnId || null };
        s.turnStartedAt = timeOf(v.currentTurn.startedAt);
        s.cancelRequested = !!v.currentTurn.cancelRequested;
      } else if (a.fromSnapshot) {
        s.turn = null;
        s.turnStartedAt = null;
        s.cancelRequested = false;
      }
      const { snapshot, ...detail } = v; // eslint-disable-line no-unused-vars
      s.detail = detail;
      if (Array.isArray(v.watchers)) s.watchers = v.watchers;
      // The mode and options a snapshot just gave win over the detail's (as new or newer).
      if (v.modes && typeof v.modes === 'object') {
        s.availableModes = Array.isArray(v.modes.availableModes) ? v.modes.availableModes : [];
        if (!(a.fromSnapshot && state.currentModeId)) s.currentModeId = v.modes.currentModeId ?? null;
      }
      if (Array.isArray(v.configOptions) && !(a.fromSnapshot && Array.isArray(state.configOptions))) s.configOptions = v.configOptions;
      s.loaded = true;
      for (const p of Array.isArray(v.pendingPermissions) ? v.pendingPermissions : []) {
        if (p && p.id) putPending(s, { id: p.id, toolCall: p.toolCall || {}, options: p.options || [], deadline: p.deadline, createdAt: p.createdAt });
      }
      return s;
    }
    case 'replaying':
      if (!state.replayed) return state;
      s.replayed = false;
      return s;
    case 'permReview': // the person asked to see this request (a card's Review button)
      if (!s.pending.some((p) => p.id === a.id)) return state;
      if (s.deferred[a.id]) s.deferred = without(s.deferred, a.id);
      s.showing = a.id;
      return s;
    case 'permDefer':
      if (!a.id || s.deferred[a.id]) return state;
      s.deferred = { ...s.deferred, [a.id]: true };
      settleShowing(s);
      return s;
    case 'permAnswer': // hidden here until the gateway confirms
      s.answered = { ...s.answered, [a.id]: true };
      s.deferred = { ...s.deferred, [a.id]: true };
      settleShowing(s);
      return s;
    case 'permAnswerFailed':
      if (a.outcome === 'gone') { // already answered elsewhere, or gone
        dropPending(s, a.id);
        return s;
      }
      s.answered = without(s.answered, a.id);
      if (a.outcome !== 'forbidden') s.deferred = without(s.deferred, a.id);
      settleShowing(s);
      return s;
    case 'questions':
      if (state.questions === a.count || typeof a.count !== 'number') return state;
      s.questions = a.count;
      return s;
    case 'mode': // POST …/mode answered (or failed: the mode before)
      s.currentModeId = a.currentModeId ?? null;
      return s;
    case 'configOptions': // POST …/config answered with the options
      if (!Array.isArray(a.configOptions)) return state;
      s.configOptions = a.configOptions;
      return s;
    case 'configValue': // POST …/config answered without them: the one option took the value
      if (!Array.isArray(s.configOptions)) return state;
      s.configOptions = s.configOptions.map((o) => (o && o.id === a.id ? { ...o, currentValue: a.value } : o));
      return s;
    case 'readOnly':
      if (state.readOnly) return state;
      s.readOnly = true;
      return s;
    case 'sharing':
      if (state.sharing === !!a.offered) return state;
      s.sharing = !!a.offered;
      return s;
    case 'notResumable':
      s.notResumable = a.text || null;
      return s;
    case 'renamed':
      if (typeof a.title !== 'string' || !a.title) return state;
      s.title = a.title;
      return s;
    case 'status':
      setStatus(s, a.status, a.reason);
      return s;
    case 'prompted':
      if (s.turn || !a.turnId || s.ended[a.turnId]) return state;
      s.turn = { turnId: a.turnId };
      s.turnStartedAt = typeof a.at === 'number' ? a.at : null;
      s.cancelRequested = false;
      return s;
    case 'turnClock': // the page saw a turn start whose start it did not know: now, by its clock
      if (!s.turn || s.turnStartedAt !== null || typeof a.at !== 'number') return state;
      s.turnStartedAt = a.at;
      return s;
    case 'cancel': // the page asked to cancel the running turn (requested), or the ask failed
      if (!s.turn || s.cancelRequested === !!a.requested) return state;
      s.cancelRequested = !!a.requested;
      return s;
    default:
      return state;
  }
}

/**
 * A store: the state, dispatch(frame) to fold a frame (or an action) in with fold (the session's reduce unless
 * given), reset(state) to replace it, subscribe(fn) to hear of both.
 */
export function createStore(state = initialState(), fold = reduce) {
  const subs = new Set();
  const store = {
    state,
    dispatch(frame) {
      const next = fold(store.state, frame);
      if (next === store.state) return;
      store.state = next;
      for (const fn of subs) fn(next, frame);
    },
    reset(next) {
      store.state = next;
      for (const fn of subs) fn(next, null);
    },
    /** Replaces the state with one that continues it (mergeEarlier): views keep what they show. */
    replace(next) {
      store.state = next;
      for (const fn of subs) fn(next, null, false);
    },
    subscribe(fn) {
      subs.add(fn);
      return () => subs.delete(fn);
    },
  };
  return store;
}
