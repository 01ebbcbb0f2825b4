// The terminal login of an agent (an auth method of type "terminal"): the gateway runs the agent's login
// command in a PTY (POST /v1/agents/{agent}/login/terminal) and this pane shows it (term.js, ansi.js) and types
// into it over its WebSocket: keys on the focused terminal, paste, and an input line with Enter and Ctrl-C
// buttons for phones, whose on-screen keyboards send no usable key events. A URL the command prints is shown
// as a link; a loopback OAuth redirect (redirect_uri=http://localhost:PORT/…) cannot reach the gateway's host
// from the user's browser, so its address can be pasted here and is delivered through the gateway.

import { h, clear } from './dom.js';
import { api, token, ApiError } from './api.js';
import { TerminalView } from './term.js';
import { safeHref } from './href.js';

// Keys that are not text, as a terminal sends them.
const KEYS = {
  Enter: '\r', Backspace: '\x7f', Tab: '\t', Escape: '\x1b', Delete: '\x1b[3~',
  ArrowUp: '\x1b[A', ArrowDown: '\x1b[B', ArrowRight: '\x1b[C', ArrowLeft: '\x1b[D', Home: '\x1b[H', End: '\x1b[F',
};

const URL_RE = /https?:\/\/[^\s"'<>\x1b\x07]+/g;
// eslint-disable-next-line no-control-regex
const ANSI_RE = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]/g;

/** The key's bytes on a terminal, or null for keys left to the browser. */
export function keyBytes(e) {
  if (e.metaKey || e.altKey) return null;
  if (e.ctrlKey) {
    const k = e.key.length === 1 ? e.key.toLowerCase() : '';
    if (k >= 'a' && k <= 'z') return String.fromCharCode(k.charCodeAt(0) - 96);
    return null;
  }
  if (KEYS[e.key]) return KEYS[e.key];
  return e.key.length === 1 ? e.key : null;
}

/**
 * The loopback redirect a URL asks for: {port, url} when its redirect_uri (or the URL itself) is
 * http://localhost|127.0.0.1|[::1]:PORT/…, else null.
 */
export function loopbackRedirect(href) {
  let u;
  try { u = new URL(href); } catch { return null; }
  const candidates = [u];
  for (const k of ['redirect_uri', 'redirect_url', 'callback']) {
    const v = u.searchParams.get(k);
    if (v) { try { candidates.push(new URL(v)); } catch { /* not a URL */ } }
  }
  for (const c of candidates) {
    if (c.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(c.hostname) && c.port) {
      return { port: Number(c.port), url: c.href };
    }
  }
  return null;
}

/**
 * Renders the terminal login of method (an auth method of type "terminal", as the agent described it) into
 * container and starts it. onDone(exit) runs once the command exited 0: the caller retries what needed the
 * login. Returns {close()}, which detaches (the login runs on until it ends or its deadline).
 */
export function renderTerminalLogin(container, agent, method, { onDone } = {}) {
  const enc = encodeURIComponent;
  const base = `/v1/agents/${enc(agent)}/login/terminal`;
  const view = new TerminalView(`login-${method.id}`);
  view.label.textContent = `Log in: ${method.name || method.id}`;
  view.out.setAttribute('aria-label', 'Login terminal: click or focus to type');
  view.out.classList.add('login-term-out');
  const status = h('p.login-term-status', { role: 'status', 'aria-live': 'polite' }, 'Starting the login…');
  const links = h('div.login-term-links');
  const line = h('input.login-term-input', {
    type: 'text', autocomplete: 'off', autocapitalize: 'off', spellcheck: 'false', enterkeyhint: 'send',
    'aria-label': 'Type into the login terminal',
    placeholder: 'Type here and press Enter',
  });
  const sendBtn = h('button.btn.btn-small', { type: 'submit' }, 'Enter');
  const ctrlC = h('button.btn.btn-small', { type: 'button', title: 'Send Ctrl-C', on: { click: () => send('\x03') } }, 'Ctrl-C');
  const cancelBtn = h('button.btn.btn-small.btn-ghost', { type: 'button', on: { click: () => cancel() } }, 'Cancel login');
  const form = h('form.login-term-line', { on: { submit: (e) => { e.preventDefault(); send(line.value + '\r'); line.value = ''; } } },
    line, sendBtn, ctrlC, cancelBtn);
  const el = h('section.login-term', { 'aria-label': `Log in to ${agent}` },
    method.description ? h('p.login-term-desc', method.description) : null, view.el, form, links, status);
  clear(container);
  container.appendChild(el);

  let ws = null;
  let loginId = null;
  let closed = false;
  let ended = false;
  let text = ''; // the output as plain text, for the URLs it shows
  const decoder = new TextDecoder('utf-8');
  const shownURLs = new Set();

  const setStatus = (msg, state = '') => {
    status.textContent = msg;
    status.dataset.state = state;
    el.dataset.state = state;
  };

  function send(data) {
    if (!data || !ws || ws.readyState !== WebSocket.OPEN || ended) return;
    ws.send(JSON.stringify({ type: 'input', data }));
  }

  view.out.addEventListener('keydown', (e) => {
    const b = keyBytes(e);
    if (b === null) return;
    e.preventDefault();
    send(b);
  });
  view.out.addEventListener('paste', (e) => {
    const t = e.clipboardData && e.clipboardData.getData('text');
    if (!t) return;
    e.preventDefault();
    send(t.replace(/\r?\n/g, '\r'));
  });

  function size() {
    const w = view.out.clientWidth || container.clientWidth || 640;
    return { cols: Math.max(20, Math.min(200, Math.floor((w - 24) / 7.6))), rows: 24 };
  }

  function showURLs(chunk) {
    text = (text + chunk.replace(ANSI_RE, '')).slice(-16384);
    for (const m of text.matchAll(URL_RE)) {
      const href = safeHref(m[0].replace(/[.,;)\]]+$/, '')); // the one URL rule for text from an agent
      if (!href || shownURLs.has(href)) continue;
      // A URL still being printed would show half; wait for what ends it.
      if (m.index + m[0].length >= text.length) continue;
      shownURLs.add(href);
      links.appendChild(urlBlock(href));
    }
  }

  function urlBlock(href) {
    const a = h('a.login-term-link', { href, target: '_blank', rel: 'noopener noreferrer' }, href);
    const lb = loopbackRedirect(href);
    if (!lb) return h('p.login-term-url', 'The login command printed a link: ', a);
    const input = h('input.login-term-input', {
      type: 'url', autocomplete: 'off', spellcheck: 'false',
      'aria-label': `Address the browser was sent back to (localhost:${lb.port})`,
      placeholder: `http://localhost:${lb.port}/…`,
    });
    const result = h('span.login-term-cb-result', { role: 'status' });
    const deliver = h('form.login-term-line', {
      on: { submit: (e) => { e.preventDefault(); deliverCallback(input.value, lb.port, result); } },
    }, input, h('button.btn.btn-small', { type: 'submit' }, 'Deliver'));
    return h('div.login-term-url.login-term-loopback',
      h('p', 'Open this link to log in: ', a),
      h('p.login-term-help',
        `When you approve, the sign-in page sends your browser to localhost:${lb.port}, where the login command waits — `
        + 'on the gateway\'s host, not on your device, so that page will not load. Copy the address of that page '
        + 'from your address bar and paste it here; the gateway delivers it to the login command.'),
      deliver, result);
  }

  async function deliverCallback(addr, port, result) {
    let u;
    try { u = new URL(addr.trim()); } catch { result.textContent = 'That is not an address.'; return; }
    if (!['localhost', '127.0.0.1', '[::1]'].includes(u.hostname) || Number(u.port) !== port) {
      result.textContent = `Paste the address that starts with http://localhost:${port}/`;
      return;
    }
    if (!loginId) return;
    const path = u.pathname.split('/').filter(Boolean).map(enc).join('/');
    const headers = {};
    const t = token();
    if (t) headers.authorization = `Bearer ${t}`;
    result.textContent = 'Delivering…';
    try {
      const res = await fetch(`${base}/${enc(loginId)}/callback/${port}/${path}${u.search}`, { headers });
      result.textContent = res.ok ? 'Delivered to the login command.' : `Not delivered (HTTP ${res.status}).`;
      result.dataset.state = res.ok ? 'ok' : 'failed';
    } catch {
      result.textContent = 'The gateway could not be reached.';
    }
  }

  function finish(exit) {
    ended = true;
    view.setExit(exit.exitCode, exit.signal || null);
    line.disabled = sendBtn.disabled = ctrlC.disabled = cancelBtn.disabled = true;
    const ok = exit.reason === 'exited' && exit.exitCode === 0;
    const why = {
      deadline: 'The login took too long and was stopped.',
      cancelled: 'The login was cancelled.',
      shutdown: 'The gateway shut down during the login.',
    }[exit.reason] || `The login command failed (exit ${exit.exitCode}${exit.signal ? `, ${exit.signal}` : ''}).`;
    setStatus(ok ? 'Logged in.' : why, ok ? 'ok' : 'failed');
    if (ok && onDone) onDone(exit);
  }

  function attach() {
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const t = token();
    const protocols = t ? ['acp-gateway.v1', `bearer.${t}`] : ['acp-gateway.v1'];
    ws = new WebSocket(`${proto}//${location.host}${base}/${enc(loginId)}`, protocols);
    ws.binaryType = 'arraybuffer';
    ws.onopen = () => {
      setStatus('Running: type into the terminal, or use the line below.', 'running');
      const { cols, rows } = size();
      ws.send(JSON.stringify({ type: 'resize', cols, rows }));
    };
    ws.onmessage = (ev) => {
      if (typeof ev.data !== 'string') {
        const chunk = decoder.decode(new Uint8Array(ev.data), { stream: true });
        view.write(chunk);
        showURLs(chunk);
        return;
      }
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      if (msg && msg.type === 'exit') finish(msg);
    };
    ws.onclose = (ev) => {
      ws = null;
      if (ended || closed) return;
      if (ev.code === 4004) setStatus('This login is gone (it ended, or is not yours).', 'failed');
      else setStatus(`The connection to the login closed (${ev.code}).`, 'failed');
    };
  }

  async function start() {
    const { cols, rows } = size();
    try {
      const res = await api.startTerminalLogin(agent, method.id, cols, rows);
      loginId = res.loginId;
    } catch (err) {
      if (err instanceof ApiError && err.code === 'login_in_progress' && err.problem.loginId) {
        loginId = err.problem.loginId; // the one already running: attach to it
      } else {
        setStatus(`The login did not start: ${err.message}`, 'failed');
        return;
      }
    }
    if (closed) return;
    el.dataset.loginId = loginId;
    attach();
  }

  async function cancel() {
    if (!loginId || ended) return;
    try { await api.cancelTerminalLogin(agent, loginId); } catch (err) { setStatus(`Cancel failed: ${err.message}`, 'failed'); }
  }

  start();
  return {
    el,
    close() {
      closed = true;
      if (ws) ws.close(1000, 'client closed');
    },
  };
}
