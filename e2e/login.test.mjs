// Agent login in the web UI: a real gateway with the repository's test agent in -login mode, which answers
// auth_required to session/new until TEST_API_KEY is right or its agent method was authenticated. Creating a
// session opens the login dialog with the agent's methods; filling the env-var form (or pressing the agent
// method's button) logs in, the creation is retried, and a prompt is answered.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildGateway, buildTestAgent, startGateway, launchBrowser, makeTmp, cleanup, openPage, shot,
  sendPrompt, waitTurnsEnded, waitLive, waitText,
} from './harness.mjs';

const KEY = 'tk-browser-login-0123456789';

let tmp;
let gw;
let ctx;

before(async () => {
  tmp = makeTmp();
  const bin = await buildGateway(tmp);
  const agent = await buildTestAgent(tmp);
  gw = await startGateway(bin, [
    '--agent', `keyed=${agent} -mode echo -login ${KEY}`,
    '--agent', `keyed2=${agent} -mode echo -login ${KEY}`,
  ]);
  ctx = await launchBrowser(tmp);
}, { timeout: 240000 });

after(async () => {
  if (ctx) await ctx.close().catch(() => {});
  if (gw) await gw.stop();
  cleanup(tmp);
});

/** Opens the new-session dialog for agent and presses Create; the login dialog is expected next. */
async function startCreate(page, agent) {
  await page.waitForSelector(`.agent-item[data-agent="${agent}"]`);
  await page.click('#new-session');
  await page.waitForSelector('#new-dialog[open]');
  await page.selectOption('#new-agent', agent);
  await page.click('#new-create');
  await page.waitForSelector('#login-dialog[open]');
}

/** Waits for the created session to be open and live. */
async function waitCreated(page) {
  await page.waitForSelector('#login-dialog', { state: 'detached' });
  await page.waitForSelector('#new-dialog:not([open])', { state: 'attached' });
  await page.waitForFunction(() => /^#\/s\//.test(location.hash));
  await waitLive(page);
}

test('login: the env-var form logs the agent in, the session opens and answers', { timeout: 120000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await startCreate(page, 'keyed');

  // The agent's methods as it described them: the env-var form (a password field for the secret, a text field
  // for the optional region) and the agent method's button.
  await waitText(page, '#login-dialog h2', 'Log in to keyed');
  assert.equal(await page.getAttribute('#login-dialog input[name="TEST_API_KEY"]', 'type'), 'password');
  assert.equal(await page.getAttribute('#login-dialog input[name="TEST_REGION"]', 'type'), 'text');
  assert.match(await page.textContent('#login-dialog [data-method="test-key"]'), /Region \(optional\)/);
  assert.ok(await page.isVisible('#login-dialog [data-method="agent-login"] button'));
  await shot(page, '70-login-dialog');

  // A wrong key: saved, but the agent still refuses; the dialog comes back saying so.
  await page.fill('#login-dialog input[name="TEST_API_KEY"]', 'tk-wrong-key-000');
  await page.click('#login-dialog [data-method="test-key"] button[type="submit"]');
  await waitText(page, '#login-dialog .form-error', 'still asks for a login');

  await page.fill('#login-dialog input[name="TEST_API_KEY"]', KEY);
  await page.fill('#login-dialog input[name="TEST_REGION"]', 'eu-test');
  await page.click('#login-dialog [data-method="test-key"] button[type="submit"]');
  await waitCreated(page);

  await sendPrompt(page, 'hello after login');
  const reasons = await waitTurnsEnded(page, 1);
  assert.deepEqual(reasons, ['end_turn']);
  const html = await page.content();
  assert.ok(!html.includes(KEY), 'the key is not in the page');
  assert.ok(!gw.log().includes(KEY), 'the key is not in the gateway log');
  assert.deepEqual(page.problems().filter((p) => !p.includes('409')), []);
  await page.close();
});

test('login: an agent method shows the agent\'s answer, then the session opens', { timeout: 120000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await startCreate(page, 'keyed2');
  await page.click('#login-dialog [data-method="agent-login"] button');
  await waitText(page, '#login-dialog .login-result', 'The agent answered: {}');
  await page.click('#login-dialog .login-continue');
  await waitCreated(page);
  await sendPrompt(page, 'hi');
  assert.deepEqual(await waitTurnsEnded(page, 1), ['end_turn']);
  await page.close();
});
