// Who did what in a session, as the transcript says it: the principal who prompted a turn and the one who answered a
// permission request (`actor {principal, name}` on `_gateway/turn_started` and `_gateway/permission_resolved`).
// Pure: text only, no DOM, so node tests it.

// The caller of a gateway without authentication: every request is this admin, so naming it says nothing.
const ANONYMOUS = 'anonymous';

/** The display name of an actor, or '' when nobody authenticated acted (or the gateway runs without auth). */
export function actorName(actor) {
  if (!actor || typeof actor !== 'object') return '';
  const id = typeof actor.principal === 'string' ? actor.principal : '';
  if (id === ANONYMOUS) return '';
  const name = typeof actor.name === 'string' && actor.name.trim() ? actor.name.trim() : id;
  return name.slice(0, 128);
}

// Resolutions nobody made (`by` without an actor): what happened, said whole.
const UNATTENDED = {
  deadline: 'Timed out, denied',
  cancel: 'Cancelled with the turn',
  turn_ended: 'Turn ended, denied',
  close: 'Session closed, denied',
  detach: 'Session detached, denied',
  agent_exit: 'Agent exited, denied',
  agent: 'Withdrawn by the agent',
  restart: 'Gateway restarted, denied',
  node_lost: 'Node lost, denied',
};

// How an answer came in when no principal is named (a gateway without authentication).
const VIA = { rest: 'via the API', client: 'in a client', acp: 'over ACP', policy: 'by the session policy' };

/**
 * What a resolved permission card says, from `_gateway/permission_resolved` params {outcome, by, actor} and the
 * request's options — the frame's data only, so the card reads the same live, after a reload and in every tab.
 * meId: the principal this page is signed in as (GET /v1/me), to add "(you)" to the actor it names. Returns
 * {text, allowed, who, name, choice}: text "Allowed by ann · Allow once", who "by ann" (or "via the API", "by the
 * session policy", … ; '' for an unattended resolution), name the actor's ('' when none is named), choice the
 * option's name ('' when none was selected).
 */
export function permissionVerdict(params, options = [], meId = '') {
  const p = params && typeof params === 'object' ? params : {};
  const outcome = p.outcome;
  let optionId = typeof p.optionId === 'string' ? p.optionId : null;
  let selected = false;
  if (outcome && typeof outcome === 'object') {
    selected = outcome.outcome === 'selected';
    optionId = outcome.optionId || optionId;
  } else if (typeof outcome === 'string') {
    selected = outcome === 'selected' || !!optionId;
    if (!optionId && outcome !== 'cancelled' && outcome !== 'selected') optionId = outcome;
  }
  const opt = (Array.isArray(options) ? options : []).find((o) => o && o.optionId === optionId);
  const allowed = outcome && typeof outcome === 'object' && typeof outcome.allowed === 'boolean'
    ? outcome.allowed
    : selected && !!opt && String(opt.kind || '').startsWith('allow');
  const choice = opt ? String(opt.name || opt.optionId) : selected && optionId ? optionId : '';
  const by = typeof p.by === 'string' ? p.by : '';
  const name = actorName(p.actor);
  const mine = !!name && !!meId && p.actor.principal === meId;
  if (UNATTENDED[by] && !name) return { text: UNATTENDED[by], allowed, who: '', name, choice };
  let who;
  if (by === 'policy') who = name ? `by ${name}’s policy` : VIA.policy;
  else if (name) who = mine ? `by ${name} (you)` : `by ${name}`;
  else if (VIA[by]) who = VIA[by];
  else who = by ? `by ${by}` : '';
  const verdict = allowed ? 'Allowed' : selected ? 'Rejected' : 'Cancelled';
  const text = [verdict, who].filter(Boolean).join(' ') + (choice ? ` · ${choice}` : '');
  return { text, allowed, who, name, choice };
}

const WATCHER_ROLES = ['owner', 'admin', 'collaborator', 'viewer'];

/** Up to two initials of a display name: "Ann Lee" → "AL", "bob" → "B". */
export function initials(name) {
  const words = String(name || '').trim().split(/[\s._-]+/).filter(Boolean);
  const letters = words.slice(0, 2).map((w) => Array.from(w)[0].toUpperCase());
  return letters.join('') || '?';
}

/**
 * Who watches a session, from `watchers` of GET /v1/sessions/{id} or `_gateway/presence {watchers}`: rows
 * [{principal, name, role, faces, initials}] in the gateway's order, malformed entries left out. The anonymous
 * caller of a gateway without authentication is not shown (it says nothing).
 */
export function watcherRows(watchers) {
  if (!Array.isArray(watchers)) return [];
  const rows = [];
  for (const w of watchers) {
    if (!w || typeof w !== 'object' || typeof w.principal !== 'string' || !w.principal || w.principal === ANONYMOUS) continue;
    const name = (typeof w.name === 'string' && w.name.trim() ? w.name.trim() : w.principal).slice(0, 128);
    const role = WATCHER_ROLES.includes(w.role) ? w.role : 'viewer';
    const faces = Number.isInteger(w.faces) && w.faces > 0 ? w.faces : 1;
    rows.push({ principal: w.principal, name, role, faces, initials: initials(name) });
  }
  return rows;
}
