// "Show earlier messages" on a session longer than its snapshot (real gateway, real Chromium): a tool call whose
// card comes before the snapshot's window and whose permission and completion come inside it shows its final
// state once loaded, as a replay from seq 1 would; and a resync (the page reloads the snapshot) keeps the rows
// the person loaded, and the row they read stays where it was.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchBrowser, makeTmp, cleanup, openPage, shot, waitLive } from './harness.mjs';
import { startLongGateway, settle } from './longsession.mjs';

let tmp;
let gw;
let ctx;
let id;
let lastMessage = 0;

async function call(method, path, body) {
  const r = await fetch(gw.base + path, {
    method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

const prompt = (text) => call('POST', `/v1/sessions/${encodeURIComponent(id)}/prompt?wait=true&timeout=5m`, { text });

before(async () => {
  tmp = makeTmp();
  gw = await startLongGateway(tmp);
  // Turn 1: the "held" edit starts, 500 messages (1 000 snapshot entries) follow, then it asks permission and,
  // allowed, completes with a diff. Turn 2: 600 more messages. The snapshot keeps the latest 2 000 entries, so
  // its window starts inside turn 1's messages: "held"'s card is before it, its permission and end inside it.
  id = (await call('POST', '/v1/sessions', { agent: 'long', permissionPolicy: 'ask' })).id;
  const t1 = await prompt('hold 500');
  assert.equal(t1.status, 'awaiting_permission', JSON.stringify(t1));
  const answered = await call('POST', `/v1/sessions/${encodeURIComponent(id)}/permissions/${encodeURIComponent(t1.permissions[0].id)}?wait=true&timeout=5m`, { optionId: 'allow' });
  assert.equal(answered.stopReason, 'end_turn', JSON.stringify(answered));
  assert.equal((await prompt('600')).stopReason, 'end_turn');
  lastMessage = 1100;
  const s = await call('GET', `/v1/sessions/${encodeURIComponent(id)}`);
  assert.equal(s.snapshot.truncated, true);
  assert.ok(s.lastSeq > 2000, `${s.lastSeq} frames: the page opens from the snapshot`);
  assert.ok(!s.snapshot.entries.some((e) => e.toolCall && e.toolCall.toolCallId === 'held'), 'held is before the window');
  ctx = await launchBrowser(tmp);
}, { timeout: 600000 });

after(async () => {
  if (ctx) await ctx.close().catch(() => {});
  if (gw) await gw.stop();
  cleanup(tmp);
});

// Walks the transcript to its top a viewport at a time.
function walkToTop(page) {
  return page.evaluate(async () => {
    const el = document.getElementById('transcript');
    const frame = () => new Promise((r) => requestAnimationFrame(r));
    for (let i = 0; i < 5000; i++) {
      const before = el.scrollTop;
      el.scrollTop = before - el.clientHeight * 0.9;
      await frame();
      if (el.scrollTop <= 0 && before <= 0) break;
    }
  });
}

// Opens the session and loads everything before its snapshot (one click: the log is under 5 000 frames).
async function openAndLoad(page) {
  await page.goto(gw.base + '/#/s/' + encodeURIComponent(id));
  await waitLive(page);
  await page.waitForFunction((w) => [...document.querySelectorAll('.msg-agent')].some((m) => m.textContent.includes(w)), `Message ${lastMessage}:`);
  await walkToTop(page);
  await page.locator('.gw-note[data-kind="truncated"] button.gw-earlier').click();
  await page.waitForFunction(() => !document.querySelector('.gw-note[data-kind="truncated"]'), null, { timeout: 120000 });
  await walkToTop(page);
  await page.waitForSelector('.tool-card[data-tool-call-id="held"]');
}

const HELD = '.tool-card[data-tool-call-id="held"]';

async function heldState(page) {
  return page.$eval(HELD, (el) => ({
    status: el.dataset.status, permission: el.dataset.permission || null, stale: el.dataset.stale || null,
    diff: !!el.querySelector('.diff'), perm: el.querySelector('.tool-perm').textContent,
  }));
}

test('an earlier tool call shows its final state: allowed and completed inside the snapshot window', { timeout: 300000 }, async () => {
  const page = await openPage(ctx);
  await openAndLoad(page);
  const held = await heldState(page);
  assert.deepEqual({ status: held.status, permission: held.permission, stale: held.stale, diff: held.diff },
    { status: 'completed', permission: 'allowed', stale: null, diff: true }, JSON.stringify(held));
  assert.match(held.perm, /Allowed/);
  // The session's first prompt is the first row, and each earlier message comes once.
  assert.match(await page.textContent('.entries .msg-user'), /hold 500/);
  await shot(page, 'earlier-1-held');
  assert.deepEqual(page.problems(), [], 'the page logged errors');
  await page.close();
});

test('a resync keeps the earlier rows loaded and the row read in place', { timeout: 300000 }, async () => {
  const page = await openPage(ctx);
  // The session's socket goes through the test, which can say what the gateway says when the page must reload
  // the snapshot (`_gateway/resync_required`); everything else passes as it is.
  let sock = null;
  await page.routeWebSocket(/\/v1\/sessions\/[^/]+\/ws/, (ws) => {
    ws.connectToServer();
    sock = ws;
  });
  await openAndLoad(page);
  // Read a few rows below "held": its card sits 150 px below the top of the transcript.
  await page.$eval(HELD, (card) => {
    const el = document.getElementById('transcript');
    el.scrollTop += card.getBoundingClientRect().top - el.getBoundingClientRect().top - 150;
  });
  await settle(page);
  const top = () => page.$eval(HELD, (card) => card.getBoundingClientRect().top - document.getElementById('transcript').getBoundingClientRect().top);
  const before = await top();

  // The session goes on (its window moves past rows the snapshot showed), then the page must resync.
  assert.equal((await prompt('50')).stopReason, 'end_turn');
  lastMessage += 50;
  const resynced = page.waitForEvent('console', (m) => m.text().includes('resynced from snapshot'));
  sock.send(JSON.stringify({ jsonrpc: '2.0', method: '_gateway/resync_required', params: { reason: 'log_truncated', earliestSeq: 1 } }));
  await resynced;
  await waitLive(page);
  await settle(page);

  const where = await page.evaluate(() => {
    const el = document.getElementById('transcript');
    const first = document.querySelector('.entries .entry');
    return `scrollTop ${el.scrollTop} of ${el.scrollHeight}; first row in the DOM: ${first ? first.textContent.slice(0, 60) : 'none'}`;
  });
  assert.equal(await page.locator(HELD).count(), 1, `the earlier rows loaded are still shown (${where})`);
  const now = await top();
  assert.ok(Math.abs(now - before) <= 2, `the row read moved from ${before} to ${now}`);
  const held = await heldState(page);
  assert.deepEqual([held.status, held.permission], ['completed', 'allowed']);
  assert.equal(await page.locator('.gw-note[data-kind="truncated"]').count(), 0, 'nothing before the snapshot is hidden again');
  await shot(page, 'earlier-2-resynced');

  // The whole session is there: its first prompt at the top, the new turn at the end.
  await walkToTop(page);
  await page.waitForFunction(() => /hold 500/.test((document.querySelector('.entries .msg-user') || {}).textContent || ''));
  await page.evaluate(() => { const el = document.getElementById('transcript'); el.scrollTop = el.scrollHeight; });
  await page.waitForFunction((w) => {
    const msgs = document.querySelectorAll('.msg-agent');
    return msgs.length && msgs[msgs.length - 1].textContent.includes(w);
  }, `Message ${lastMessage}:`);
  assert.deepEqual(page.problems(), [], 'the page logged errors');
  await page.close();
});
