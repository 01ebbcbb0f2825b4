// "Show earlier messages" when the snapshot's window holds a card that continues one before it (real gateway,
// real Chromium): a tool call completed after its snapshot entry was evicted (the snapshot's `continued` entry),
// and a permission still pending whose tool call is before the window (the card the page makes for it). Once
// the earlier rows are loaded, each shows one card, at its first position, as a replay from seq 1 does.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchBrowser, makeTmp, cleanup, openPage, shot, waitLive } from './harness.mjs';
import { startLongGateway } from './longsession.mjs';

let tmp;
let gw;
let ctx;

async function call(method, path, body) {
  const r = await fetch(gw.base + path, {
    method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

// A session whose first turn is "hold 1100": the "held" edit starts, 1 100 messages (2 200 snapshot entries, past
// the 2 000 kept) follow, then it asks permission. Returns {id, permission}: the turn waits for the answer.
async function heldSession() {
  const id = (await call('POST', '/v1/sessions', { agent: 'long', permissionPolicy: 'ask' })).id;
  const t = await call('POST', `/v1/sessions/${encodeURIComponent(id)}/prompt?wait=true&timeout=5m`, { text: 'hold 1100' });
  assert.equal(t.status, 'awaiting_permission', JSON.stringify(t));
  return { id, permission: t.permissions[0].id };
}

before(async () => {
  tmp = makeTmp();
  gw = await startLongGateway(tmp);
  ctx = await launchBrowser(tmp);
}, { timeout: 600000 });

after(async () => {
  if (ctx) await ctx.close().catch(() => {});
  if (gw) await gw.stop();
  cleanup(tmp);
});

const HELD = '.tool-card[data-tool-call-id="held"]';

// Opens the session, puts a permission dialog aside, and loads everything before the snapshot.
async function openAndLoad(page, id, { dialog = false } = {}) {
  await page.goto(gw.base + '/#/s/' + encodeURIComponent(id));
  await waitLive(page);
  if (dialog) {
    await page.waitForSelector('#perm-dialog[open]');
    await page.click('#perm-later');
  }
  await page.evaluate(() => { document.getElementById('transcript').scrollTop = 0; });
  await page.locator('.gw-note[data-kind="truncated"] button.gw-earlier').click();
  await page.waitForFunction(() => !document.querySelector('.gw-note[data-kind="truncated"]'), null, { timeout: 120000 });
  await page.evaluate(() => { document.getElementById('transcript').scrollTop = 0; });
  await page.waitForSelector(HELD);
}

test('a tool call completed after its snapshot entry was evicted shows one card, where it started', { timeout: 300000 }, async () => {
  const { id, permission } = await heldSession();
  const done = await call('POST', `/v1/sessions/${encodeURIComponent(id)}/permissions/${encodeURIComponent(permission)}?wait=true&timeout=5m`, { optionId: 'allow' });
  assert.equal(done.stopReason, 'end_turn', JSON.stringify(done));
  const s = await call('GET', `/v1/sessions/${encodeURIComponent(id)}`);
  const entries = s.snapshot.entries;
  assert.equal(s.snapshot.truncated, true);
  const held = entries.filter((e) => e.toolCall && e.toolCall.toolCallId === 'held');
  assert.deepEqual(held.map((e) => [e.continued, e.toolCall.title, e.toolCall.status]), [[true, 'Edit /work/held.go', 'completed']]);

  const page = await openPage(ctx);
  await openAndLoad(page, id);
  assert.equal(await page.locator(HELD).count(), 1);
  const card = await page.$eval(HELD, (el) => ({ status: el.dataset.status, permission: el.dataset.permission || null }));
  assert.deepEqual(card, { status: 'completed', permission: 'allowed' });
  // It is the first card, right after the prompt that started it.
  assert.equal(await page.$eval('.entries .tool-card', (el) => el.dataset.toolCallId), 'held');
  await page.evaluate(() => { const el = document.getElementById('transcript'); el.scrollTop = el.scrollHeight; });
  await page.waitForFunction(() => [...document.querySelectorAll('.msg-agent')].some((m) => m.textContent.includes('Message 1100:')));
  assert.equal(await page.locator(HELD).count(), 0, 'no second card for held at the end');
  await shot(page, 'earlier-continued-1');
  assert.deepEqual(page.problems(), [], 'the page logged errors');
  await page.close();
});

test('a permission pending at the snapshot whose card is before the window shows one card', { timeout: 300000 }, async () => {
  const { id, permission } = await heldSession();
  const s = await call('GET', `/v1/sessions/${encodeURIComponent(id)}`);
  assert.equal(s.snapshot.truncated, true);
  assert.ok(!s.snapshot.entries.some((e) => e.toolCall && e.toolCall.toolCallId === 'held'), 'held is before the window');
  assert.deepEqual(s.pendingPermissions.map((p) => p.id), [permission]);

  const page = await openPage(ctx);
  await openAndLoad(page, id, { dialog: true });
  assert.equal(await page.locator(HELD).count(), 1);
  assert.equal(await page.$eval(HELD, (el) => el.dataset.permission || null), 'pending');
  assert.equal(await page.$eval('.entries .tool-card', (el) => el.dataset.toolCallId), 'held');
  await page.evaluate(() => { const el = document.getElementById('transcript'); el.scrollTop = el.scrollHeight; });
  await page.waitForFunction(() => [...document.querySelectorAll('.msg-agent')].some((m) => m.textContent.includes('Message 1100:')));
  assert.equal(await page.locator(HELD).count(), 0, 'no second card for held at the end');

  // The answer reaches the one card: it completes where it started.
  await call('POST', `/v1/sessions/${encodeURIComponent(id)}/permissions/${encodeURIComponent(permission)}?wait=true&timeout=5m`, { optionId: 'allow' });
  await page.evaluate(() => { document.getElementById('transcript').scrollTop = 0; });
  await page.waitForFunction((sel) => { const el = document.querySelector(sel); return el && el.dataset.status === 'completed' && el.dataset.permission === 'allowed'; }, HELD);
  await page.evaluate(() => { const el = document.getElementById('transcript'); el.scrollTop = el.scrollHeight; });
  await page.waitForFunction(() => [...document.querySelectorAll('.msg-agent')].some((m) => m.textContent.includes('Message 1100:')));
  assert.equal(await page.locator(HELD).count(), 0, 'no second card for held at the end');
  await shot(page, 'earlier-continued-2');
  assert.deepEqual(page.problems(), [], 'the page logged errors');
  await page.close();
});
