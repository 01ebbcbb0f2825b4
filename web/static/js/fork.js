// The session header's Fork button: POST /v1/sessions/{id}/fork makes a new session that starts with this one's
// conversation (the agent's own fork of it), then the page opens it. Shown only where the agent advertises
// sessionCapabilities.fork, to a page that may act on the session (a viewer may not fork).

/** Whether the session's agent advertises session/fork. */
export function canFork(session) {
  const caps = session && session.agentCapabilities;
  return !!(caps && caps.sessionCapabilities && caps.sessionCapabilities.fork);
}

/** What the Fork button says when the gateway refuses, by the problem's code. */
export function forkErrorText(err) {
  switch (err && err.code) {
    case 'turn_running': return 'A turn is running: fork once it has ended.';
    case 'fork_unsupported': return 'This agent cannot fork sessions.';
    case 'forbidden': return 'This session is shared with you as viewer: you cannot fork it.';
    default: return null;
  }
}
