// REST client for the gateway's public API (/v1/...). Errors are application/problem+json and become ApiError.

export class ApiError extends Error {
  constructor(status, problem) {
    const p = problem && typeof problem === 'object' ? problem : {};
    super(p.detail || p.title || (typeof problem === 'string' && problem) || `HTTP ${status}`);
    this.status = status;
    this.code = p.code || (typeof p.type === 'string' ? p.type.replace(/^.*\//, '') : '') || '';
    this.problem = p;
  }
}

/** An error as a sentence for the person: the gateway's message and its stable code. */
export function errorText(err) {
  if (err instanceof ApiError) return err.message + (err.code ? ` (${err.code})` : '');
  return String((err && err.message) || err);
}

// A gateway started with a token (GATEWAY_TOKEN) or a users file wants one on every API call. The sign-in view
// asks for it and keeps it in this tab's sessionStorage; `#token=…` in the page URL works too and is removed from
// the address bar at once.
const TOKEN_KEY = 'acp-gateway-token';

(function takeTokenFromFragment() {
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (!m) return;
  sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
  history.replaceState(null, '', location.pathname + location.search);
})();

/** The access token, or '' when the gateway runs without one. */
export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

/** Keeps t as this tab's token ('' forgets it: signing out). */
export function setToken(t) {
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
}

// Called with the ApiError when the gateway refuses the page's credential (401) on any call but a sign-in attempt.
let onUnauthorized = () => {};

/** Sets who hears of a refused credential: the sign-in view. */
export function setUnauthorizedHandler(fn) {
  onUnauthorized = fn;
}

/** bearer: the token to send ('' none); a 401 on a call with an explicit bearer is the caller's to handle. */
async function request(method, path, body, bearer = undefined) {
  const init = { method, headers: { accept: 'application/json' } };
  const t = bearer === undefined ? token() : bearer;
  if (t) init.headers.authorization = `Bearer ${t}`;
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (err) {
    throw new ApiError(0, { title: 'Network error', detail: 'The gateway could not be reached.', code: 'network' });
  }
  if (res.status === 204) return null;
  const ct = res.headers.get('content-type') || '';
  let data = null;
  if (ct.includes('json')) {
    try { data = await res.json(); } catch { data = null; }
  } else {
    data = await res.text();
  }
  if (!res.ok) {
    const err = new ApiError(res.status, data);
    if (res.status === 401 && bearer === undefined) onUnauthorized(err);
    throw err;
  }
  return data;
}

const enc = encodeURIComponent;

export const api = {
  me: () => request('GET', '/v1/me'),
  /** GET /v1/me with a token typed into the sign-in view, before the tab keeps it. */
  meWith: (t) => request('GET', '/v1/me', undefined, t),
  agents: () => request('GET', '/v1/agents'),
  sessions: () => request('GET', '/v1/sessions'),
  session: (id) => request('GET', `/v1/sessions/${enc(id)}`),
  /** One JSON page of the session's event log: the frames after seq `after` (at most limit). */
  events: (id, after, limit) => request('GET', `/v1/sessions/${enc(id)}/events?after=${after}&limit=${limit}`),
  createSession: (body) => request('POST', '/v1/sessions', body),
  workspaceDirs: (path) => request('GET', `/v1/workspace/dirs${path ? `?path=${enc(path)}` : ''}`),
  rename: (id, title) => request('PATCH', `/v1/sessions/${enc(id)}`, { title }),
  files: (id, q, limit) => request('GET', `/v1/sessions/${enc(id)}/files?q=${enc(q)}&limit=${limit}`),
  closeSession: (id) => request('DELETE', `/v1/sessions/${enc(id)}`),
  forkSession: (id) => request('POST', `/v1/sessions/${enc(id)}/fork`),
  prompt: (id, text) => request('POST', `/v1/sessions/${enc(id)}/prompt`, { text }),
  promptBlocks: (id, blocks) => request('POST', `/v1/sessions/${enc(id)}/prompt`, { prompt: blocks }),
  cancel: (id) => request('POST', `/v1/sessions/${enc(id)}/cancel`),
  setMode: (id, modeId) => request('POST', `/v1/sessions/${enc(id)}/mode`, { modeId }),
  setConfig: (id, configId, value) => request('POST', `/v1/sessions/${enc(id)}/config`, { configId, value }),
  permissions: (id) => request('GET', `/v1/sessions/${enc(id)}/permissions`),
  answerPermission: (id, permissionId, optionId) =>
    request('POST', `/v1/sessions/${enc(id)}/permissions/${enc(permissionId)}`,
      optionId ? { optionId } : { outcome: 'cancelled' }),
  answerElicitation: (id, requestId, body) =>
    request('POST', `/v1/sessions/${enc(id)}/elicitations/${enc(requestId)}`, body),
  shares: (id) => request('GET', `/v1/sessions/${enc(id)}/shares`),
  share: (id, principal, role) => request('PUT', `/v1/sessions/${enc(id)}/shares/${enc(principal)}`, { role }),
  unshare: (id, principal) => request('DELETE', `/v1/sessions/${enc(id)}/shares/${enc(principal)}`),
  agentLogin: (agent) => request('GET', `/v1/agents/${enc(agent)}/login`),
  loginEnv: (agent, methodId, vars) => request('PUT', `/v1/agents/${enc(agent)}/login/env`, { methodId, vars }),
  loginAgent: (agent, methodId) => request('POST', `/v1/agents/${enc(agent)}/login/agent`, { methodId }),
  logout: (agent) => request('DELETE', `/v1/agents/${enc(agent)}/login`),
  startTerminalLogin: (agent, methodId, cols, rows) =>
    request('POST', `/v1/agents/${enc(agent)}/login/terminal`, { methodId, cols, rows }),
  cancelTerminalLogin: (agent, loginId) => request('DELETE', `/v1/agents/${enc(agent)}/login/terminal/${enc(loginId)}`),
};
