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

// A gateway started with a token (GATEWAY_TOKEN) wants it on every API call. The UI asks once per tab and keeps
// it in sessionStorage; `#token=…` in the page URL works too and is removed from the address bar at once.
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

function askToken() {
  const t = window.prompt('This gateway requires an access token (the GATEWAY_TOKEN it was started with):');
  if (!t || !t.trim()) return false;
  sessionStorage.setItem(TOKEN_KEY, t.trim());
  return true;
}

async function request(method, path, body, retried = false) {
  const init = { method, headers: { accept: 'application/json' } };
  if (token()) init.headers.authorization = `Bearer ${token()}`;
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
  if (res.status === 401 && !retried && askToken()) return request(method, path, body, true);
  if (res.status === 204) return null;
  const ct = res.headers.get('content-type') || '';
  let data = null;
  if (ct.includes('json')) {
    try { data = await res.json(); } catch { data = null; }
  } else {
    data = await res.text();
  }
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

const enc = encodeURIComponent;

export const api = {
  me: () => request('GET', '/v1/me'),
  agents: () => request('GET', '/v1/agents'),
  sessions: () => request('GET', '/v1/sessions'),
  session: (id) => request('GET', `/v1/sessions/${enc(id)}`),
  createSession: (body) => request('POST', '/v1/sessions', body),
  closeSession: (id) => request('DELETE', `/v1/sessions/${enc(id)}`),
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
};
