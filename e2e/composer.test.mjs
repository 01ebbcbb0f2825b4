// Browser tests of what IDE users reach for in the composer and the transcript: slash-command autocomplete from
// the agent's available_commands, @-mentions of the session's files (sent as resource_link blocks), per-message
// Copy, Edit and resend, Retry of a cancelled turn, renaming and searching sessions, and all of it on a 390 px
// screen. A real gateway (demo agent) and real Chromium; every wait is for a DOM state.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  buildGateway, startGateway, launchBrowser, makeTmp, cleanup, openPage, shot, createSession, sendPrompt,
  waitTurnsEnded, waitText,
} from './harness.mjs';

let tmp;
let gw;
let ctx;
let workdir;

before(async () => {
  tmp = makeTmp();
  workdir = path.join(tmp, 'work');
  for (const f of ['src/main.go', 'src/util/helper.go', 'docs/guide.md', 'README.md', 'node_modules/x/main.js']) {
    mkdirSync(path.dirname(path.join(workdir, f)), { recursive: true });
    writeFileSync(path.join(workdir, f), 'x');
  }
  mkdirSync(path.join(workdir, 'projects', 'alpha'), { recursive: true });
  mkdirSync(path.join(workdir, 'projects', 'beta'), { recursive: true });
  const bin = await buildGateway(tmp);
  gw = await startGateway(bin, ['--workdir', workdir]);
  ctx = await launchBrowser(tmp);
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.base });
}, { timeout: 240000 });

after(async () => {
  if (ctx) await ctx.close().catch(() => {});
  if (gw) await gw.stop();
  cleanup(tmp);
});

async function closePage(page) {
  assert.deepEqual(page.problems(), [], 'the page logged errors');
  await page.close();
}

async function snapshotOf(id) {
  const r = await fetch(`${gw.base}/v1/sessions/${encodeURIComponent(id)}`);
  assert.equal(r.status, 200);
  return r.json();
}

const optionNames = (page, list) => page.$$eval(`${list} .suggest-item .suggest-name`, (els) => els.map((e) => e.textContent));

test('slash: "/" lists the agent\'s commands, filters as one types, picks with the keyboard', { timeout: 90000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await createSession(page, { policy: 'approve-all' });
  await page.click('#prompt-input');
  await page.keyboard.type('/');
  await page.waitForSelector('.slash-list .suggest-item');
  assert.deepEqual(await optionNames(page, '.slash-list'), ['/help', '/echo']);
  assert.match(await page.textContent('.slash-list'), /Repeat the given text/);
  assert.match(await page.textContent('.slash-list'), /text to echo/);
  await shot(page, 'composer-01-slash');

  // Escape closes it and keeps the text.
  await page.keyboard.press('Escape');
  await page.waitForSelector('.slash-list', { state: 'hidden' });
  assert.equal(await page.inputValue('#prompt-input'), '/');

  // Filtering, then Arrow keys and Enter: the command is written, nothing is sent.
  await page.keyboard.type('e');
  await page.waitForFunction(() => document.querySelectorAll('.slash-list .suggest-item').length === 2);
  assert.deepEqual(await optionNames(page, '.slash-list'), ['/echo', '/help']);
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.slash-list', { state: 'hidden' });
  assert.equal(await page.inputValue('#prompt-input'), '/echo ');
  assert.equal(await page.textContent('#composer-hint'), '/echo: text to echo');
  assert.equal(await page.locator('.msg-user').count(), 0);

  // Tab picks too; then the prompt goes with Enter.
  await page.fill('#prompt-input', '');
  await page.keyboard.type('/ec');
  await page.waitForSelector('.slash-list .suggest-item');
  await page.keyboard.press('Tab');
  assert.equal(await page.inputValue('#prompt-input'), '/echo ');
  await page.keyboard.type('slash works');
  await page.keyboard.press('Enter');
  await waitTurnsEnded(page, 1);
  await waitText(page, '.msg-agent', 'slash works');
  await closePage(page);
});

test('mentions: "@" searches the cwd, a pick becomes a chip and a resource_link block', { timeout: 90000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  const id = await createSession(page, { policy: 'approve-all' });
  await page.click('#prompt-input');
  await page.keyboard.type('look at @mai');
  await page.waitForSelector('.mention-list .suggest-item');
  const names = await optionNames(page, '.mention-list');
  assert.equal(names[0], 'src/main.go');
  assert.ok(!names.some((n) => n.includes('node_modules')), `node_modules listed: ${names}`);
  await shot(page, 'composer-02-mention');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.mention-list', { state: 'hidden' });
  assert.equal(await page.inputValue('#prompt-input'), 'look at @src/main.go ');
  await page.waitForSelector('#attachments .attach-chip[data-kind="mention"]');
  assert.match(await page.textContent('#attachments'), /src\/main\.go/);

  // A search that finds nothing says so; Escape closes it.
  await page.keyboard.type('and @nothing-like-this');
  await page.waitForSelector('.mention-list .suggest-empty');
  await page.keyboard.press('Escape');
  await page.waitForSelector('.mention-list', { state: 'hidden' });
  await page.keyboard.press('Control+A');
  await page.keyboard.type('look at @src/main.go please');
  await page.keyboard.press('Escape'); // the list may have opened on the typed @ word
  await page.keyboard.press('Enter');
  await waitTurnsEnded(page, 1);
  await page.waitForSelector('.msg-user .attach-chip[data-kind="mention"]');
  assert.equal(await page.locator('#attachments .attach-chip').count(), 0);

  const snap = await snapshotOf(id);
  const blocks = snap.snapshot.entries.filter((e) => e.kind === 'user_message').flatMap((e) => e.content);
  const link = blocks.find((b) => b.type === 'resource_link');
  assert.ok(link, `no resource_link in ${JSON.stringify(blocks)}`);
  assert.equal(link.uri, 'file://' + path.join(snap.cwd, 'src/main.go'));
  assert.equal(link.name, 'main.go');
  await closePage(page);
});

test('message actions: copy a message, edit and resend a prompt, retry a cancelled turn', { timeout: 120000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  const id = await createSession(page, { policy: 'ask' });
  await sendPrompt(page, '/echo **bold** answer');
  await waitTurnsEnded(page, 1);

  // Copy takes the agent's whole message as Markdown.
  await page.hover('.msg-agent');
  await page.click('.msg-agent .msg-copy');
  await page.waitForSelector('.msg-agent .msg-copy[data-copied="true"]');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), '**bold** answer');

  // Edit and resend: the prompt goes back into the composer; sending it is a new turn, the old one stays.
  await page.hover('.msg-user');
  await page.click('.msg-user .msg-edit');
  assert.equal(await page.inputValue('#prompt-input'), '/echo **bold** answer');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'prompt-input');
  await page.keyboard.type(' again');
  await page.keyboard.press('Enter');
  await waitTurnsEnded(page, 2);
  await waitText(page, '.msg-agent', 'bold answer again');
  assert.equal(await page.locator('.msg-user').count(), 2);

  // A cancelled turn offers Retry, which sends the same prompt again.
  await sendPrompt(page, 'cancel then retry');
  await page.waitForSelector('#perm-dialog[open]');
  await page.keyboard.press('Escape'); // put the permission aside
  await page.click('#cancel-turn');
  const reasons = await waitTurnsEnded(page, 3);
  assert.equal(reasons[2], 'cancelled');
  await page.click('.turn-end[data-stop-reason="cancelled"] .turn-retry');
  await page.waitForFunction(() => [...document.querySelectorAll('.msg-user')].filter((e) => e.textContent.includes('cancel then retry')).length === 2);
  await page.waitForSelector('#perm-dialog[open]');
  await shot(page, 'composer-03-retry');
  const snap = await snapshotOf(id);
  const prompts = snap.snapshot.entries.filter((e) => e.kind === 'user_message').map((e) => e.content.map((b) => b.text).join(''));
  assert.deepEqual(prompts, ['/echo **bold** answer', '/echo **bold** answer again', 'cancel then retry', 'cancel then retry']);
  await page.click('#perm-dialog .perm-options button >> nth=0');
  await waitTurnsEnded(page, 4);
  // Retry is only offered where a turn failed or was cancelled.
  assert.equal(await page.locator('.turn-retry').count(), 1);
  await closePage(page);
});

test('sessions: rename inline (others see it live, it is kept), search by title, agent and id', { timeout: 90000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  const first = await createSession(page, { policy: 'approve-all' });
  const second = await createSession(page, { policy: 'approve-all' });
  const watcher = await openPage(ctx, `${gw.base}/#/s/${encodeURIComponent(first)}`);
  await watcher.waitForSelector('#conn-pill[data-state="live"]');

  const item = (id) => `#session-list li:has(.session-item[data-session-id="${id}"])`;
  await page.hover(item(first));
  await page.click(`${item(first)} .session-rename`);
  await page.waitForSelector('.session-rename-input');
  await page.fill('.session-rename-input', 'Parser work');
  await page.keyboard.press('Enter');
  await page.waitForFunction((id) => document.querySelector(`.session-item[data-session-id="${id}"] .session-item-title`)?.textContent === 'Parser work', first);
  assert.equal((await snapshotOf(first)).title, 'Parser work');
  // The other page, watching that session, sees the new title as it is logged.
  await watcher.waitForFunction(() => document.getElementById('session-title').textContent === 'Parser work');

  // Escape keeps the old title.
  await page.click(`${item(second)} .session-rename`);
  await page.fill('.session-rename-input', 'not this');
  await page.keyboard.press('Escape');
  await page.waitForSelector('.session-rename-input', { state: 'detached' });
  assert.equal((await snapshotOf(second)).title, undefined);

  const visible = () => page.$$eval('#session-list li:not([hidden]) .session-item', (els) => els.map((e) => e.dataset.sessionId));
  await page.fill('#session-search', 'parser');
  assert.deepEqual(await visible(), [first]);
  await page.fill('#session-search', second.slice(0, 8));
  assert.deepEqual(await visible(), [second]);
  await page.fill('#session-search', 'demo');
  assert.equal((await visible()).length >= 2, true);
  await page.fill('#session-search', 'no such session here');
  assert.deepEqual(await visible(), []);
  await page.waitForSelector('.search-empty:not([hidden])');
  await shot(page, 'composer-04-search');
  await page.fill('#session-search', '');
  await closePage(watcher);
  await closePage(page);
});

test('new session: Browse picks a cwd within the workspace roots', { timeout: 90000 }, async () => {
  const page = await openPage(ctx);
  await page.setViewportSize({ width: 390, height: 780 });
  await page.goto(gw.base + '/');
  await page.click('#menu-toggle');
  await page.click('#new-session');
  await page.waitForSelector('#new-dialog[open]');
  await page.click('.cwd-browse');
  await page.waitForSelector('.cwd-dir');
  const names = () => page.$$eval('.cwd-dir .cwd-name', (els) => els.map((e) => e.textContent));
  // It opens at the default cwd (--workdir): its folders, not node_modules.
  assert.deepEqual(await names(), ['docs', 'projects', 'src']);
  await page.click('.cwd-dir[data-path$="/projects"]');
  await page.waitForSelector('.cwd-dir[data-path$="/alpha"]');
  assert.deepEqual(await names(), ['alpha', 'beta']);
  await page.click('.cwd-up');
  await page.waitForSelector('.cwd-dir[data-path$="/src"]');
  await page.click('.cwd-dir[data-path$="/projects"]');
  await page.click('.cwd-dir[data-path$="/beta"]');
  await page.waitForSelector('.cwd-none');
  const inView = await page.$eval('.cwd-picker', (e) => { const r = e.getBoundingClientRect(); return r.left >= 0 && r.right <= window.innerWidth; });
  assert.ok(inView, 'the picker is off screen');
  await shot(page, 'composer-07-cwd-picker');
  await page.click('.cwd-use');
  await page.waitForSelector('.cwd-picker', { state: 'hidden' });
  const picked = await page.inputValue('#new-cwd');
  assert.ok(picked.endsWith(path.join('projects', 'beta')), picked);
  await page.selectOption('#new-policy', 'approve-all');
  await page.click('#new-create');
  await page.waitForFunction(() => /^#\/s\//.test(location.hash));
  const id = decodeURIComponent((await page.evaluate(() => location.hash)).replace(/^#\/s\//, ''));
  assert.equal((await snapshotOf(id)).cwd, picked);
  await closePage(page);
});

test('narrow screen: commands, mentions, message actions and the session tools fit 390 px', { timeout: 90000 }, async () => {
  const page = await openPage(ctx);
  await page.setViewportSize({ width: 390, height: 780 });
  await page.goto(gw.base + '/');
  const id = await createSession(page, { policy: 'approve-all' });
  const inView = (sel) => page.$eval(sel, (e) => {
    const r = e.getBoundingClientRect();
    return r.left >= 0 && r.right <= window.innerWidth && r.width > 0;
  });
  await page.click('#prompt-input');
  await page.keyboard.type('/');
  await page.waitForSelector('.slash-list .suggest-item');
  assert.ok(await inView('.slash-list'), 'the command list is off screen');
  await page.keyboard.press('Escape');
  await page.fill('#prompt-input', '');
  await page.keyboard.type('@guide');
  await page.waitForSelector('.mention-list .suggest-item');
  assert.ok(await inView('.mention-list'), 'the file list is off screen');
  await shot(page, 'composer-05-narrow-mention');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Enter');
  await waitTurnsEnded(page, 1);
  assert.ok(await inView('.msg-user .msg-edit'), 'Edit is off screen');
  assert.ok(await inView('.msg-agent .msg-copy'), 'Copy is off screen');
  await page.click('#menu-toggle');
  await page.waitForFunction(() => document.getElementById('sidebar').getBoundingClientRect().left >= 0);
  assert.ok(await inView('#session-search'), 'the search box is off screen');
  assert.ok(await inView(`#session-list li:has(.session-item[data-session-id="${id}"]) .session-rename`), 'Rename is off screen');
  await shot(page, 'composer-06-narrow-sidebar');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `page overflows by ${overflow}px`);
  await closePage(page);
});
