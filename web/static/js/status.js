// How a session's status is shown (sidebar dot and meta, header chip) and what it allows. Pure, so node tests it.
//
// `detached` (docs/rest.md): the session is stored but its agent is not running; a prompt re-attaches it, so
// the composer stays enabled and the badge says what the next prompt will do.

const TIPS = {
  detached: 'agent stopped; your next prompt restarts it',
  starting: 'the agent is starting',
  idle: 'the agent is ready for a prompt',
  running: 'a turn is running',
  failed: 'the agent failed; this session takes no more prompts',
  closed: 'this session is closed',
};

// statusView is what a badge shows for status (a turn running wins over idle/detached when running is set).
export function statusView(status, running) {
  const key = running ? 'running' : status || 'starting';
  return { key, label: key, title: TIPS[key] || '' };
}

// acceptsPrompt reports whether the composer takes a prompt for a session in status: all but the ended ones.
export function acceptsPrompt(status) {
  return status !== 'closed' && status !== 'failed';
}

// promptErrorText explains a refused prompt; a detached session whose agent cannot come back gets its own
// sentence (409 session_not_resumable), since retrying will not help.
export function promptErrorText(err) {
  const code = err && err.code;
  if (code === 'session_not_resumable') {
    return 'This session cannot be restarted: its agent can neither load nor resume it. ' +
      'The transcript stays readable; start a new session to go on.';
  }
  const msg = String((err && err.message) || err);
  return 'Could not send the prompt: ' + msg + (code ? ` (${code})` : '');
}
