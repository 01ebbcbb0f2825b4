// The terminal login pane (web/static/js/loginterm.js) against a real gateway whose agent "ta" is the test
// agent in login mode (internal/testagent/login.go, HOME per principal) and real Chromium. The page is the
// app itself, signed in as ann through `#token=`; the pane is rendered by calling renderTerminalLogin, as the
// login view does for a `terminal` auth method; the last test goes through that view from New session.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildGateway, buildTestAgent, startGateway, launchBrowser, makeTmp, cleanup, openPage, shot } from './harness.mjs';

const CODE = '4242-7171';
const tokenOf = (name) => `${name}-token`;
const METHOD = { id: 'code', name: 'Log in with a code', type: 'terminal', description: 'Prompts for a one-time code.' };

let tmp;
let gw;
let ctx;

before(async () => {
  tmp = makeTmp();
  const agent = await buildTestAgent(tmp);
  const usersFile = path.join(tmp, 'users.json');
  writeFileSync(usersFile, JSON.stringify({
    users: ['ann', 'bob'].map((name) => ({ name, role: 'user', tokenSha256: createHash('sha256').update(tokenOf(name)).digest('hex') })),
  }), { mode: 0o600 });
  const agentsFile = path.join(tmp, 'agents.json');
  writeFileSync(agentsFile, JSON.stringify({
    agent_servers: { ta: { command: agent, args: ['-mode', 'login'], home: 'per-principal' } },
  }));
  gw = await startGateway(await buildGateway(tmp), [
    '--users', usersFile, '--rate-limit', '0', '--agents', agentsFile, '--default-agent', 'ta',
    '--home-root', path.join(tmp, 'homes'), '--workdir', tmp,
  ]);
  ctx = await launchBrowser(tmp);
}, { timeout: 240000 });

after(async () => {
  if (ctx) await ctx.close().catch(() => {});
  if (gw) await gw.stop();
  cleanup(tmp);
});

async function createSessionAs(name) {
  const r = await fetch(gw.base + '/v1/sessions', {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${tokenOf(name)}` }, body: '{}',
  });
  return r.status;
}

/** Opens the app signed in as ann on a 390 px wide screen. */
async function openApp() {
  const page = await openPage(ctx);
  await page.setViewportSize({ width: 390, height: 780 });
  await page.goto(`${gw.base}/#token=${tokenOf('ann')}`);
  await page.waitForFunction(() => sessionStorage.getItem('acp-gateway-token'));
  return page;
}

/** Renders the terminal login of method into a fresh box at the top of the page and waits for want. */
async function renderLogin(page, method, want) {
  await page.evaluate(async (m) => {
    const old = document.getElementById('login-box');
    if (old) old.remove();
    const { renderTerminalLogin } = await import('/js/loginterm.js');
    const box = document.createElement('div');
    box.id = 'login-box';
    document.body.prepend(box);
    window.loginDone = null;
    renderTerminalLogin(box, 'ta', m, { onDone: (exit) => { window.loginDone = exit; } });
  }, method);
  await page.waitForSelector('#login-box .login-term-status[data-state="running"]');
  await page.waitForFunction((w) => document.querySelector('#login-box .terminal-out').textContent.includes(w), want);
}

test('terminal login: typed into the terminal, a wrong code said, a right one logs ann in (and not bob)', { timeout: 120000 }, async () => {
  assert.notEqual(await createSessionAs('ann'), 201, 'a session started before the login');
  const page = await openApp();
  await renderLogin(page, METHOD, 'Enter code:');
  // A wrong code, typed on the focused terminal: the command's words and its failure.
  await page.click('#login-box .terminal-out');
  await page.keyboard.type('0000');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#login-box .login-term-status[data-state="failed"]');
  assert.match(await page.textContent('#login-box .terminal-out'), /Wrong code\./);
  assert.match(await page.textContent('#login-box .login-term-status'), /failed \(exit 1\)/);
  assert.equal(await page.evaluate(() => window.loginDone), null);

  // Again, through the input line (what a phone uses): success, onDone, and ann's session starts.
  await renderLogin(page, METHOD, 'Enter code:');
  await page.fill('#login-box .login-term-input', CODE);
  await page.press('#login-box .login-term-input', 'Enter');
  await page.waitForSelector('#login-box .login-term-status[data-state="ok"]');
  assert.equal(await page.textContent('#login-box .login-term-status'), 'Logged in.');
  assert.deepEqual(await page.evaluate(() => window.loginDone), { type: 'exit', exitCode: 0, reason: 'exited' });
  // Nothing wider than the phone's screen.
  const overflow = await page.evaluate(() => document.getElementById('login-box').scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the pane is ${overflow}px wider than the screen`);
  await shot(page, 'loginterm-phone');
  assert.equal(await createSessionAs('ann'), 201, 'ann cannot start a session after her login');
  assert.notEqual(await createSessionAs('bob'), 201, "bob's session started on ann's login");
  assert.deepEqual(page.problems(), []);
  await page.close();
});

test('terminal login: a loopback OAuth redirect is explained and delivered through the gateway', { timeout: 120000 }, async () => {
  const page = await openApp();
  await renderLogin(page, { id: 'oauth', name: 'Log in with a browser', type: 'terminal' }, '/callback');
  const link = await page.waitForSelector('#login-box .login-term-loopback a.login-term-link');
  const href = await link.getAttribute('href');
  const port = new URL(new URL(href).searchParams.get('redirect_uri')).port;
  assert.match(await page.textContent('#login-box .login-term-loopback'), new RegExp(`localhost:${port}.*on the gateway's host`));
  // What the browser's address bar shows after the sign-in page sent it back.
  await page.fill('#login-box .login-term-loopback input', `http://localhost:${port}/callback?code=${CODE}&state=x`);
  await page.click('#login-box .login-term-loopback button');
  await page.waitForSelector('#login-box .login-term-cb-result[data-state="ok"]');
  await page.waitForSelector('#login-box .login-term-status[data-state="ok"]');
  await shot(page, 'loginterm-oauth');
  assert.deepEqual(page.problems(), []);
  await page.close();
});

test('terminal login: New session answers 409, the login dialog opens the terminal, and the session starts', { timeout: 120000 }, async () => {
  assert.notEqual(await createSessionAs('bob'), 201, 'bob is logged in already');
  const page = await openPage(ctx);
  await page.goto(`${gw.base}/#token=${tokenOf('bob')}`);
  await page.waitForSelector('.agent-item[data-agent="ta"]');
  await page.click('#new-session');
  await page.waitForSelector('#new-dialog[open]');
  await page.click('#new-create');
  await page.waitForSelector('#login-dialog[open]');
  // Opening the dialog starts no login; the method's button does.
  assert.equal(await page.$('#login-dialog .login-term'), null);
  await page.click('#login-dialog [data-method="code"] .login-term-start');
  await page.waitForSelector('#login-dialog .login-term-status[data-state="running"]');
  await page.waitForFunction(() => document.querySelector('#login-dialog .terminal-out').textContent.includes('Enter code:'));
  await page.fill('#login-dialog .login-term-input', CODE);
  await page.press('#login-dialog .login-term-input', 'Enter');
  // Exit 0 retries the creation: the dialog goes and the new session opens.
  await page.waitForSelector('#login-dialog', { state: 'detached' });
  await page.waitForFunction(() => /^#\/s\//.test(location.hash));
  await page.waitForSelector('#conn-pill[data-state="live"]');
  // The browser logs the expected 409 of the first creation as a failed load.
  assert.deepEqual(page.problems().filter((p) => !p.includes('409')), []);
  await page.close();
});
