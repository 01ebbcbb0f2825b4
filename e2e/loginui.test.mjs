// Agent login after the session exists, in the web UI: a real gateway keeping sessions in --data-dir, with the
// repository's test agent in -login mode. A restart forgets logins, so the prompt that re-attaches the session
// answers 409 agent_login_required: the login dialog opens, and once the key is entered the same prompt is sent
// again (a dismissed dialog leaves it queued, not sent, with Retry). The sidebar's "Log out" forgets a login.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  buildGateway, buildTestAgent, startGateway, launchBrowser, makeTmp, cleanup, openPage, shot,
  sendPrompt, waitLive, waitText,
} from './harness.mjs';

const KEY = 'tk-browser-relogin-0123456789';

let tmp;
let bin;
let agentArg;
let gw;
let ctx;

before(async () => {
  tmp = makeTmp();
  bin = await buildGateway(tmp);
  agentArg = `keyed=${await buildTestAgent(tmp)} -mode echo -login ${KEY}`;
  ctx = await launchBrowser(tmp);
}, { timeout: 240000 });

after(async () => {
  if (ctx) await ctx.close().catch(() => {});
  if (gw) await gw.stop();
  cleanup(tmp);
});

/** Creates a session of the keyed agent through the UI, logging in with the key; returns its id. */
async function createLoggedIn(page) {
  await page.waitForSelector('.agent-item[data-agent="keyed"]');
  await page.click('#new-session');
  await page.waitForSelector('#new-dialog[open]');
  await page.selectOption('#new-agent', 'keyed');
  await page.click('#new-create');
  await page.waitForSelector('#login-dialog[open]');
  await page.fill('#login-dialog input[name="TEST_API_KEY"]', KEY);
  await page.click('#login-dialog [data-method="test-key"] button[type="submit"]');
  await page.waitForSelector('#login-dialog', { state: 'detached' });
  await page.waitForFunction(() => /^#\/s\//.test(location.hash));
  await waitLive(page);
  return decodeURIComponent((await page.evaluate(() => location.hash)).replace(/^#\/s\//, ''));
}

/** Waits until n turns of the open session ended, each with end_turn. */
async function waitEnded(page, n) {
  await page.waitForFunction((k) => document.querySelectorAll('.turn-end').length >= k, n);
  const reasons = await page.$$eval('.turn-end', (els) => els.map((e) => e.dataset.stopReason));
  assert.deepEqual(reasons, Array(n).fill('end_turn'));
}

test('re-login: a prompt re-attaching a session after a restart opens the login dialog, then is answered', { timeout: 180000 }, async () => {
  const dataDir = path.join(tmp, 'data');
  gw = await startGateway(bin, ['--data-dir', dataDir, '--agent', agentArg]);
  let page = await openPage(ctx, gw.base + '/');
  const id = await createLoggedIn(page);
  await sendPrompt(page, 'before the restart');
  await waitEnded(page, 1);
  await page.close();

  // A restart forgets the login; the session comes back detached.
  await gw.stop();
  gw = await startGateway(bin, ['--data-dir', dataDir, '--agent', agentArg]);
  page = await openPage(ctx, `${gw.base}/#/s/${encodeURIComponent(id)}`);
  await waitLive(page);
  await page.waitForSelector('#session-status[data-status="detached"]');
  await waitEnded(page, 1);

  // The re-attaching prompt answers 409: the dialog opens. Cancelled, the prompt waits, not sent, with Retry.
  await sendPrompt(page, 'after the restart');
  await page.waitForSelector('#login-dialog[open]');
  await waitText(page, '#login-dialog h2', 'Log in to keyed');
  await page.click('#login-dialog .dialog-actions button.btn-ghost');
  await page.waitForSelector('#login-dialog', { state: 'detached' });
  await page.waitForSelector('.queue-item[data-failed="true"]');
  assert.match(await page.textContent('.queue-item[data-failed="true"]'), /after the restart/);
  assert.equal(await page.$$eval('.turn-end', (els) => els.length), 1, 'nothing was sent');

  // Retry: the dialog again; the key logs in, and the same prompt is sent and answered.
  await page.click('.queue-item .queue-retry');
  await page.waitForSelector('#login-dialog[open]');
  await page.fill('#login-dialog input[name="TEST_API_KEY"]', KEY);
  await shot(page, '72-relogin-dialog');
  await page.click('#login-dialog [data-method="test-key"] button[type="submit"]');
  await page.waitForSelector('#login-dialog', { state: 'detached' });
  await waitEnded(page, 2);
  await waitText(page, '.msg-user', 'after the restart');
  assert.equal(await page.$$eval('.queue-item', (els) => els.length), 0, 'the queue is empty');
  assert.ok(!(await page.content()).includes(KEY), 'the key is not in the page');
  assert.ok(!gw.log().includes(KEY), 'the key is not in the gateway log');
  assert.deepEqual(page.problems().filter((p) => !p.includes('409')), []);
  await page.close();
});

test('logout: the sidebar offers "Log out" for a held login and says what happened', { timeout: 120000 }, async () => {
  if (!gw) gw = await startGateway(bin, ['--agent', agentArg]);
  const page = await openPage(ctx, gw.base + '/');
  await page.waitForSelector('.agent-item[data-agent="keyed"]');
  await page.evaluate(async () => {
    // Start from no login held (the previous test may have left one).
    await fetch('/v1/agents/keyed/login', { method: 'DELETE' });
  });
  await page.reload();
  await page.waitForSelector('.agent-item[data-agent="keyed"]');
  assert.equal(await page.$$eval('.agent-logout', (els) => els.length), 0, 'no login held: no action');

  await createLoggedIn(page);
  await page.waitForSelector('.agent-logout[data-agent="keyed"]');
  await shot(page, '73-agent-logout');
  await page.click('.agent-logout[data-agent="keyed"]');
  // The test agent advertises ACP logout: the gateway told it.
  await waitText(page, '.toast', 'Logged out of keyed: the agent logged out');
  await page.waitForSelector('.agent-logout', { state: 'detached' });
  const st = await page.evaluate(async () => (await fetch('/v1/agents/keyed/login')).json());
  assert.deepEqual([st.satisfied || [], st.vars || []], [[], []]);
  assert.deepEqual(page.problems().filter((p) => !p.includes('409')), []);
  await page.close();
});
