// A session of 10 000 messages (each agent message followed by an edit tool call with a diff) opens from its
// snapshot: the last message shows, the DOM holds only the rows near the viewport however far the transcript is
// scrolled, scrolling to the start and back works, and a new turn streams in at the end while the list stays pinned
// there. Times are measured by longsession.bench.mjs, not asserted here.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchBrowser, makeTmp, cleanup, openPage, shot, sendPrompt } from './harness.mjs';
import { startLongGateway, buildLongSession, settle } from './longsession.mjs';

const DOM_BOUND = 6000; // elements in the whole page; every row in the DOM would be over 150 000

let tmp;
let gw;
let ctx;
let session;

before(async () => {
  tmp = makeTmp();
  gw = await startLongGateway(tmp);
  session = await buildLongSession(gw.base, { prompts: 20, perPrompt: 499 });
  ctx = await launchBrowser(tmp);
}, { timeout: 600000 });

after(async () => {
  if (ctx) await ctx.close().catch(() => {});
  if (gw) await gw.stop();
  cleanup(tmp);
});

const domSize = (page) => page.evaluate(() => document.getElementsByTagName('*').length);

async function lastAgentText(page) {
  return page.evaluate(() => {
    const msgs = document.querySelectorAll('.msg-agent');
    return msgs.length ? msgs[msgs.length - 1].textContent : '';
  });
}

test('a 10 000-message session opens at its last message with a bounded DOM, scrolls, and streams on', { timeout: 300000 }, async () => {
  assert.equal(session.messages, 10000);
  const page = await openPage(ctx, gw.base + '/#/s/' + encodeURIComponent(session.id));
  await page.waitForSelector('#conn-pill[data-state="live"]', { timeout: 120000 });
  await page.waitForFunction((w) => {
    const msgs = document.querySelectorAll('.msg-agent');
    return msgs.length && msgs[msgs.length - 1].textContent.includes(w);
  }, `Message ${session.lastMessage}:`);
  // The last message is in view, not only in the DOM.
  const inView = await page.evaluate(() => {
    const el = document.getElementById('transcript');
    const msgs = document.querySelectorAll('.msg-agent');
    const r = msgs[msgs.length - 1].getBoundingClientRect();
    const v = el.getBoundingClientRect();
    return r.bottom > v.top && r.top < v.bottom;
  });
  assert.ok(inView, 'the last message is scrolled into view');
  assert.match(await page.textContent('.tool-card:last-of-type .diff-head'), new RegExp(`file${session.lastMessage}\\.go`));
  const opened = await domSize(page);
  assert.ok(opened < DOM_BOUND, `${opened} DOM elements after opening`);
  // The snapshot holds the latest entries; the transcript says the earlier ones are not shown.
  await shot(page, 'long-1-open');

  // Scroll to the start, a viewport at a time: the DOM stays bounded all the way, and the first row shows.
  const maxDom = await walkToTop(page);
  assert.ok(maxDom < DOM_BOUND, `${maxDom} DOM elements while scrolling`);
  await page.waitForSelector('.gw-note[data-kind="truncated"]');
  await shot(page, 'long-2-top');

  // Scrolled up, new rows at the end do not move what one reads.
  await page.evaluate(() => { const el = document.getElementById('transcript'); el.scrollTop = el.scrollHeight - el.clientHeight * 4; });
  await page.waitForFunction(() => {
    const el = document.getElementById('transcript');
    return el.scrollHeight - el.scrollTop - el.clientHeight > el.clientHeight * 2;
  });
  // Rows first measured after the jump move the position until their heights are known: wait until it holds.
  await settle(page);
  const anchor = await page.evaluate(() => {
    const el = document.getElementById('transcript');
    const v = el.getBoundingClientRect();
    const row = [...document.querySelectorAll('.msg-agent')].find((m) => m.getBoundingClientRect().top >= v.top);
    return { id: row.dataset.messageId, top: row.getBoundingClientRect().top, scrollTop: el.scrollTop, padding: document.querySelector('.entries').style.paddingBottom };
  });
  const r = await fetch(`${gw.base}/v1/sessions/${encodeURIComponent(session.id)}/prompt?wait=true&timeout=2m`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: '2' }),
  });
  assert.equal(r.status, 200);
  // The new rows are below the window: the list's room for them grows.
  await page.waitForFunction((before) => document.querySelector('.entries').style.paddingBottom !== before, anchor.padding);
  const after = await page.evaluate((id) => {
    const el = document.getElementById('transcript');
    const row = document.querySelector(`.msg-agent[data-message-id="${id}"]`);
    return { top: row.getBoundingClientRect().top, scrollTop: el.scrollTop };
  }, anchor.id);
  assert.ok(Math.abs(after.top - anchor.top) <= 1, `the row read moved from ${anchor.top} to ${after.top}`);
  session.lastMessage += 2;

  // Back to the end in one jump: the last message shows again.
  await page.evaluate(() => { const el = document.getElementById('transcript'); el.scrollTop = el.scrollHeight; });
  await page.waitForFunction((w) => {
    const el = document.getElementById('transcript');
    const msgs = document.querySelectorAll('.msg-agent');
    return msgs.length && msgs[msgs.length - 1].textContent.includes(w) && el.scrollHeight - el.scrollTop - el.clientHeight < 80;
  }, `Message ${session.lastMessage}:`);

  // A new turn streams in at the end, and the list follows it.
  await sendPrompt(page, '3');
  const next = session.lastMessage + 3;
  await page.waitForFunction((w) => {
    const el = document.getElementById('transcript');
    const msgs = document.querySelectorAll('.msg-agent');
    const last = msgs[msgs.length - 1];
    if (!last || !last.textContent.includes(w)) return false;
    const r = last.getBoundingClientRect();
    const v = el.getBoundingClientRect();
    return r.bottom > v.top && r.top < v.bottom;
  }, `Message ${next}:`);
  assert.ok((await lastAgentText(page)).includes(`Message ${next}:`));
  assert.ok((await domSize(page)) < DOM_BOUND);
  assert.deepEqual(page.problems(), [], 'the page logged errors');
  await page.close();
});

// Walks the transcript to its top a viewport at a time (the list keeps the reading row when rows above turn out
// taller than estimated, so only the top ends the walk). Returns the most elements the page held on the way.
function walkToTop(page) {
  return page.evaluate(async () => {
    const el = document.getElementById('transcript');
    const frame = () => new Promise((r) => requestAnimationFrame(r));
    let max = 0;
    for (let i = 0; i < 5000; i++) {
      const before = el.scrollTop;
      el.scrollTop = before - el.clientHeight * 0.9;
      await frame();
      max = Math.max(max, document.getElementsByTagName('*').length);
      if (el.scrollTop <= 0 && before <= 0) break;
    }
    return max;
  });
}

test('"Show earlier messages" loads the log before the snapshot above the row being read', { timeout: 300000 }, async () => {
  const page = await openPage(ctx, gw.base + '/#/s/' + encodeURIComponent(session.id));
  await page.waitForSelector('#conn-pill[data-state="live"]', { timeout: 120000 });
  await page.waitForFunction((w) => [...document.querySelectorAll('.msg-agent')].some((m) => m.textContent.includes(w)), `Message ${session.lastMessage}:`);
  await walkToTop(page);
  const btn = page.locator('.gw-note[data-kind="truncated"] button.gw-earlier');
  await btn.waitFor();
  assert.equal(await btn.textContent(), 'Show earlier messages');
  assert.equal(await page.locator('text=/^Message 1:/').count(), 0, 'the first message is not in the snapshot');
  // The row read: the first agent message in view below the note.
  const read = () => page.evaluate(() => {
    const v = document.getElementById('transcript').getBoundingClientRect();
    const row = [...document.querySelectorAll('.msg-agent')].find((m) => m.getBoundingClientRect().top >= v.top);
    return { id: row.dataset.messageId, top: row.getBoundingClientRect().top };
  });
  const anchor = await read();
  await btn.click();
  // Loaded: the note sits between the rows read so far and the snapshot's, its button ready for the rest.
  // The note is idle before the click too: wait for the text the loaded rows bring, not the status alone.
  await page.waitForFunction(() => {
    const note = document.querySelector('.gw-note[data-kind="truncated"][data-status="idle"] .gw-note-text');
    return note && /not shown yet/.test(note.textContent);
  }, null, { timeout: 120000 });
  // Rows measured after the merge move the position until their heights are known: wait until it holds.
  await settle(page);
  const now = await page.evaluate((id) => {
    const row = document.querySelector(`.msg-agent[data-message-id="${id}"]`);
    return row ? row.getBoundingClientRect().top : null;
  }, anchor.id);
  assert.ok(now !== null && Math.abs(now - anchor.top) <= 2, `the row read moved from ${anchor.top} to ${now}`);
  assert.ok((await domSize(page)) < DOM_BOUND);
  await shot(page, 'long-4-earlier');

  // Scrolled up, the session's first message is at the top, and the DOM stays bounded on the way.
  const maxDom = await walkToTop(page);
  assert.ok(maxDom < DOM_BOUND, `${maxDom} DOM elements while scrolling`);
  await page.waitForFunction(() => {
    const first = document.querySelector('.entries .msg-agent');
    return first && first.textContent.includes('Message 1:');
  });
  const firstUser = await page.textContent('.entries .msg-user');
  assert.match(firstUser, /499/);
  await shot(page, 'long-5-first');
  assert.deepEqual(page.problems(), [], 'the page logged errors');
  await page.close();
});

test('on a 390 px screen the long session opens at its end too', { timeout: 120000 }, async () => {
  const page = await openPage(ctx);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(gw.base + '/#/s/' + encodeURIComponent(session.id));
  await page.waitForSelector('#conn-pill[data-state="live"]', { timeout: 60000 });
  await page.waitForFunction(() => {
    const msgs = document.querySelectorAll('.msg-agent');
    return msgs.length && /Message \d+:/.test(msgs[msgs.length - 1].textContent);
  });
  const fits = await page.evaluate(() => document.documentElement.scrollWidth <= 390);
  assert.ok(fits, 'nothing overflows the screen sideways');
  assert.ok((await domSize(page)) < DOM_BOUND);
  await shot(page, 'long-3-narrow');
  assert.deepEqual(page.problems(), [], 'the page logged errors');
  await page.close();
});
