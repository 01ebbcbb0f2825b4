// Signing in: a real gateway with a users file (ann, carol; tokens stored as hex SHA-256) that also trusts
// 127.0.0.1 as an authenticating proxy's address (X-Forwarded-User). The page asks for a token in a sign-in view
// of its own — never window.prompt —, says a wrong one in place, signs out, shows the identity a proxy vouches
// for, and when a credential is revoked later it says so and keeps what was typed. Every wait is for a DOM state.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  buildGateway, startGateway, launchBrowser, makeTmp, cleanup, openPage, shot, createSession, waitLive,
} from './harness.mjs';

let tmp;
let gw;
let ctx;
let usersFile;

const tokenOf = (name) => `${name}-token`;

function writeUsers(names) {
  const users = names.map((name) => ({
    name, role: 'user', tokenSha256: createHash('sha256').update(tokenOf(name)).digest('hex'),
  }));
  writeFileSync(usersFile, JSON.stringify({ users }), { mode: 0o600 });
}

/** Sends SIGHUP and waits until the gateway answers name's token as want (200 or 401): the reload is done. */
async function reloadUsers(name, want) {
  gw.proc.kill('SIGHUP');
  for (;;) {
    const r = await fetch(gw.base + '/v1/me', { headers: { authorization: `Bearer ${tokenOf(name)}` } });
    if (r.status === want) return;
    await new Promise((res) => setTimeout(res, 50)); // polling interval, not an assertion
  }
}

before(async () => {
  tmp = makeTmp();
  usersFile = path.join(tmp, 'users.json');
  writeUsers(['ann', 'carol']);
  const bin = await buildGateway(tmp);
  gw = await startGateway(bin, [
    '--users', usersFile, '--rate-limit', '0',
    '--trusted-user-header', 'X-Forwarded-User', '--trusted-proxies', '127.0.0.1',
  ]);
  ctx = await launchBrowser(tmp);
}, { timeout: 240000 });

after(async () => {
  if (ctx) await ctx.close().catch(() => {});
  if (gw) await gw.stop();
  cleanup(tmp);
});

/** The page's problems but the refusals the test provokes (the browser logs every 4xx of a fetch). */
function unexpected(page) {
  return page.problems().filter((p) => !/Failed to load resource: .*status of 401/.test(p));
}

/** Counts the window.prompt/alert/confirm dialogs the page opens (and dismisses them). */
function countDialogs(page) {
  const seen = [];
  page.on('dialog', (d) => { seen.push(d.type()); d.dismiss().catch(() => {}); });
  return seen;
}

test('sign-in: a sign-in view instead of window.prompt; a wrong token said in place; sign in, sign out', { timeout: 90000 }, async () => {
  const page = await openPage(ctx);
  await page.setViewportSize({ width: 390, height: 760 });
  const dialogs = countDialogs(page);
  await page.goto(gw.base + '/');
  await page.waitForSelector('#signin:not([hidden])');
  assert.match(await page.textContent('#signin-reason'), /needs an access token/);
  assert.equal(await page.evaluate(() => document.activeElement && document.activeElement.id), 'signin-token');
  const box = await page.locator('#signin-form').boundingBox();
  assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `the form fits a 390 px screen: ${JSON.stringify(box)}`);
  await shot(page, '80-signin');

  // A wrong token: said in the view, which stays; no toast, no empty agent list behind it.
  await page.fill('#signin-token', 'not-the-token');
  await page.press('#signin-token', 'Enter');
  await page.waitForSelector('#signin-error:not([hidden])');
  assert.match(await page.textContent('#signin-error'), /not accepted/);
  assert.equal(await page.isVisible('#signin'), true);
  assert.equal(await page.locator('.toast').count(), 0);

  await page.fill('#signin-token', tokenOf('ann'));
  await page.click('#signin-submit');
  await page.waitForSelector('#signin', { state: 'hidden' });
  await page.waitForSelector('.agent-item[data-agent="demo"]', { state: 'attached' });
  assert.equal(await page.textContent('#account-name'), 'ann');
  assert.deepEqual(dialogs, [], 'no window.prompt');
  assert.equal(await page.locator('.toast').count(), 0);

  // Sign out: the token leaves the tab, the view comes back, nothing of ann's stays on screen.
  await page.click('#menu-toggle');
  await page.waitForSelector('#sign-out');
  await page.click('#sign-out');
  await page.waitForSelector('#signin:not([hidden])');
  assert.match(await page.textContent('#signin-reason'), /signed out/i);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('acp-gateway-token')), null);
  assert.equal(await page.locator('.agent-item').count(), 0);
  assert.deepEqual(dialogs, []);
  assert.deepEqual(unexpected(page), []);
  await page.close();
});

test('sign-in: a credential revoked later says so, keeps the typed prompt, and signing in again resumes', { timeout: 90000 }, async () => {
  const page = await openPage(ctx);
  const dialogs = countDialogs(page);
  await page.goto(gw.base + '/');
  await page.waitForSelector('#signin:not([hidden])');
  await page.fill('#signin-token', tokenOf('carol'));
  await page.press('#signin-token', 'Enter');
  await page.waitForSelector('#signin', { state: 'hidden' });
  const id = await createSession(page, { policy: 'ask' });
  await page.fill('#prompt-input', 'words typed before the revocation');

  writeUsers(['ann']);
  await reloadUsers('carol', 401);
  // The gateway closes carol's socket (1008 credentials revoked); the page says why and asks again.
  await page.waitForSelector('#signin:not([hidden])');
  assert.match(await page.textContent('#signin-reason'), /no longer accepted/);
  assert.equal(await page.inputValue('#prompt-input'), 'words typed before the revocation');
  assert.equal(await page.locator('.toast[data-kind="error"]').count(), 0);
  await shot(page, '81-signin-expired');

  writeUsers(['ann', 'carol']);
  await reloadUsers('carol', 200);
  await page.fill('#signin-token', tokenOf('carol'));
  await page.press('#signin-token', 'Enter');
  await page.waitForSelector('#signin', { state: 'hidden' });
  await waitLive(page);
  assert.equal(await page.evaluate(() => decodeURIComponent(location.hash.replace(/^#\/s\//, ''))), id);
  assert.equal(await page.inputValue('#prompt-input'), 'words typed before the revocation');
  assert.deepEqual(dialogs, []);
  assert.deepEqual(unexpected(page).filter((p) => !/WebSocket/.test(p)), []);
  await page.close();
});

test('sign-in: the identity an authenticating proxy vouches for is shown, with no sign-in view', { timeout: 60000 }, async () => {
  const page = await openPage(ctx);
  await page.setExtraHTTPHeaders({ 'X-Forwarded-User': 'ann' });
  const dialogs = countDialogs(page);
  await page.goto(gw.base + '/');
  await page.waitForSelector('.agent-item[data-agent="demo"]');
  assert.equal(await page.isHidden('#signin'), true);
  assert.equal(await page.textContent('#account-name'), 'ann');
  assert.match(await page.textContent('#account-via'), /proxy/);
  assert.equal(await page.isHidden('#sign-out'), true, 'the page holds no credential to forget');
  assert.equal(await page.textContent('#me'), 'ann');
  await shot(page, '82-proxy-identity');
  assert.deepEqual(dialogs, []);
  assert.deepEqual(page.problems(), []);
  await page.close();
});
