// What the plan panel shows, from the agent's plan entries and the turn they belong to. A plan is live only while
// a turn runs: once the turn ended (stopped, failed) its unfinished steps no longer move, so nothing spins and the
// count says how it ended. Pure, so node tests it.

// How a turn that left its plan unfinished ended, said after the count.
const ENDED = { cancelled: 'stopped', error: 'failed', refusal: 'refused', max_tokens: 'cut short', max_turn_requests: 'cut short' };

/**
 * entries: the plan's entries; running: a turn runs now; lastStop: the stopReason of the last turn that ended
 * (null when none did since the plan came). Returns {state, done, total, progress, current}: state "running",
 * "done", "stopped" (the turn ended before the plan did) or "idle"; progress "1 of 3 done · stopped"; current the
 * step in progress (else the next pending one), '' when none.
 */
export function planView(entries, running, lastStop) {
  const list = Array.isArray(entries) ? entries : [];
  const total = list.length;
  const done = list.filter((e) => e && e.status === 'completed').length;
  const next = list.find((e) => e && e.status === 'in_progress') || list.find((e) => e && (e.status || 'pending') === 'pending');
  const current = next ? String(next.content ?? '') : '';
  let state = 'idle';
  let suffix = '';
  if (total && done === total) state = 'done';
  else if (running) state = 'running';
  else if (lastStop && ENDED[lastStop]) {
    state = 'stopped';
    suffix = ` · ${ENDED[lastStop]}`;
  }
  return { state, done, total, progress: `${done} of ${total} done${suffix}`, current: state === 'done' ? '' : current };
}
