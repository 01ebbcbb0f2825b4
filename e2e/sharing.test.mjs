// Principals in the UI: a real gateway with a users file (ann and bob, tokens stored as hex SHA-256), the built-in
// demo agent. Ann creates a session, shares it with bob as viewer in the sharing dialog and answers a permission;
// bob's page (its own tab, its own token) names ann as the prompter and the one who allowed, and turns read-only
// when the gateway refuses his prompt with 403 forbidden. Every wait is for a DOM state.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  buildGateway, startGateway, launchBrowser, makeTmp, cleanup, openPage, shot, createSession, sendPrompt,
  waitTurnsEnded, waitText, waitLive,
} from './harness.mjs';

let tmp;
let gw;
let ctx;

const tokenOf = (name) => `${name}-token`;

before(async () => {
  tmp = makeTmp();
  const bin = await buildGateway(tmp);
  const users = ['ann', 'bob'].map((name) => ({
    name, role: 'user', tokenSha256: createHash('sha256').update(tokenOf(name)).digest('hex'),
  }));
  const file = path.join(tmp, 'users.json');
  writeFileSync(file, JSON.stringify({ users }), { mode: 0o600 });
  gw = await startGateway(bin, ['--users', file, '--rate-limit', '0']);
  ctx = await launchBrowser(tmp);
}, { timeout: 240000 });

after(async () => {
  if (ctx) await ctx.close().catch(() => {});
  if (gw) await gw.stop();
  cleanup(tmp);
});

/** A tab signed in as name (the token travels in the fragment once and stays in the tab's sessionStorage). */
async function signIn(name) {
  const page = await openPage(ctx, `${gw.base}/#token=${tokenOf(name)}`);
  await page.waitForSelector('.agent-item[data-agent="demo"]');
  return page;
}

/** The page's problems but the refusals the test provokes (the browser logs every 4xx of a fetch). */
function unexpected(page, statuses) {
  const re = new RegExp(`Failed to load resource: .*status of (${statuses.join('|')})`);
  return page.problems().filter((p) => !re.test(p));
}

test('sharing: ann shares with bob as viewer; bob sees who prompted and who allowed, and cannot prompt', { timeout: 120000 }, async () => {
  const ann = await signIn('ann');
  const id = await createSession(ann, { policy: 'ask' });

  // The owner's sharing dialog: nobody yet; a bad principal id is said before any request; bob as viewer.
  await ann.click('#share-session');
  await ann.waitForSelector('#share-dialog[open]');
  await waitText(ann, '#share-owner', 'Owned by ann.');
  await waitText(ann, '#share-list', 'Not shared with anyone.');
  await ann.fill('#share-principal', 'not an id');
  await ann.click('#share-add');
  await waitText(ann, '#share-error', 'A principal id has no spaces or slashes.');
  await ann.fill('#share-principal', 'bob');
  await ann.selectOption('#share-role', 'viewer');
  await ann.click('#share-add');
  await ann.waitForSelector('#share-list .share-row[data-principal="bob"][data-role="viewer"]');
  assert.equal(await ann.isVisible('#share-error'), false);
  assert.equal(await ann.inputValue('#share-principal'), '');
  await shot(ann, '50-share-dialog');
  await ann.click('#share-close');

  // Ann prompts and allows the demo's edit: her page names her, as the one who prompted and who allowed.
  await sendPrompt(ann, 'edit the notes for bob');
  await ann.waitForSelector('#perm-dialog[open]');
  await ann.click('#perm-options button[data-option-id="allow-once"]');
  await ann.waitForSelector('.tool-card[data-tool-call-id^="edit_"][data-permission="allowed"]');
  await waitTurnsEnded(ann, 1);
  assert.equal(await ann.textContent('.tool-card[data-tool-call-id^="edit_"] .tool-perm'), 'Allowed by ann (you) · Allow once');
  assert.equal(await ann.textContent('.msg-user[data-prompter="ann"] .msg-by'), 'Prompted by ann');

  // Bob's tab: the session replays with ann named.
  const bob = await signIn('bob');
  await bob.evaluate((sid) => { location.hash = '#/s/' + encodeURIComponent(sid); }, id);
  await waitLive(bob);
  await bob.waitForSelector('.tool-card[data-tool-call-id^="edit_"][data-permission="allowed"]');
  assert.equal(await bob.textContent('.tool-card[data-tool-call-id^="edit_"] .tool-perm'), 'Allowed by ann · Allow once');
  assert.equal(await bob.textContent('.msg-user[data-prompter="ann"] .msg-by'), 'Prompted by ann');
  await waitTurnsEnded(bob, 1);

  // Bob's prompt is refused (403 forbidden): the composer turns read-only and says why, keeping his text.
  assert.equal(await bob.isEnabled('#prompt-input'), true);
  await sendPrompt(bob, 'may I?');
  await waitText(bob, '#composer-notice', 'shared with you as viewer');
  assert.equal(await bob.isDisabled('#prompt-input'), true);
  assert.equal(await bob.isDisabled('#send'), true);
  assert.equal(await bob.inputValue('#prompt-input'), 'may I?');
  assert.equal(await bob.locator('.msg-user').count(), 1, 'the refused prompt reached the transcript');
  assert.equal(await bob.locator('.toast-error').count(), 0);
  // Nor may a viewer close the session or change its mode and options.
  assert.equal(await bob.isHidden('#close-session'), true);
  assert.ok(await bob.locator('#selectors select').count() > 0);
  assert.equal(await bob.locator('#selectors select:enabled').count(), 0);
  await shot(bob, '51-viewer-read-only');

  // Sharing is offered only to the owner (GET /v1/me names the caller): bob's Share button stays hidden. Opened
  // anyway, the dialog lists the shares but may not change them: the 403 is said and its controls turn off.
  await waitText(bob, '#me', 'bob');
  assert.equal(await bob.isHidden('#share-session'), true);
  await bob.evaluate(() => document.getElementById('share-session').click());
  await bob.waitForSelector('#share-dialog[open]');
  await bob.waitForSelector('#share-list .share-row[data-principal="bob"]');
  await bob.fill('#share-principal', 'carl');
  await bob.click('#share-add');
  await waitText(bob, '#share-error', 'Only the session’s owner or an admin can change who it is shared with.');
  assert.match(await bob.textContent('#share-error'), /forbidden\)$/);
  assert.equal(await bob.isDisabled('#share-add'), true);
  assert.equal(await bob.isDisabled('#share-list .share-remove'), true);
  await bob.click('#share-close');

  // Ann ends the share; bob's next listing is 404: his Share button hides and the dialog says why.
  await ann.click('#share-session');
  await ann.waitForSelector('#share-list .share-row[data-principal="bob"]');
  await ann.click('#share-list .share-row[data-principal="bob"] .share-remove');
  await waitText(ann, '#share-list', 'Not shared with anyone.');
  // The sidebar's periodic listing may hide the button first (the session is gone for bob): click it either way.
  await bob.evaluate(() => document.getElementById('share-session').click());
  await waitText(bob, '#share-error', 'This session no longer exists, or is no longer shared with you.');
  await bob.waitForSelector('#share-session', { state: 'hidden' });

  assert.deepEqual(unexpected(ann, []), [], 'ann\'s page logged errors');
  assert.deepEqual(unexpected(bob, [403, 404]), [], 'bob\'s page logged errors');
  await ann.close();
  await bob.close();
});

/** REST as a users-file user, from the test (not the page). */
async function rest(name, method, p, body) {
  const res = await fetch(gw.base + p, {
    method, headers: { Authorization: `Bearer ${tokenOf(name)}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  assert.ok(res.ok, `${method} ${p}: ${res.status}`);
  return res.status === 204 ? null : res.json();
}

test('presence: ann sees bob appear in the session header when he opens her shared session, and go when he leaves', { timeout: 120000 }, async () => {
  const ann = await signIn('ann');
  await waitText(ann, '#me', 'ann');
  const id = await createSession(ann, { policy: 'ask' });
  await ann.waitForSelector('#session-watchers .watcher[data-principal="ann"][data-role="owner"]');
  assert.equal(await ann.textContent('#session-watchers .watcher[data-principal="ann"] .avatar'), 'A');
  await rest('ann', 'PUT', `/v1/sessions/${encodeURIComponent(id)}/shares/bob`, { role: 'collaborator' });

  const bob = await signIn('bob');
  await bob.evaluate((sid) => { location.hash = '#/s/' + encodeURIComponent(sid); }, id);
  await waitLive(bob);
  await ann.waitForSelector('#session-watchers .watcher[data-principal="bob"][data-role="collaborator"]');
  assert.equal(await ann.textContent('#session-watchers .watcher[data-principal="bob"] .watcher-name'), 'bob');
  await bob.waitForSelector('#session-watchers .watcher[data-principal="ann"][data-role="owner"]');
  await bob.waitForSelector('#session-watchers .watcher[data-principal="bob"]');
  await shot(ann, '52-watchers');

  await bob.close();
  await ann.waitForSelector('#session-watchers .watcher[data-principal="bob"]', { state: 'detached' });
  await ann.waitForSelector('#session-watchers .watcher[data-principal="ann"]');
  assert.deepEqual(unexpected(ann, []), [], 'ann\'s page logged errors');
  await ann.close();
});
