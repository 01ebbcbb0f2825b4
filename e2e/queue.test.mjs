// Nothing a person types is lost: a prompt sent while a session starts or while a turn runs waits in a visible
// queue above the composer (each one editable and removable) and is sent once the session can take it. A real
// gateway with the built-in demo agent; the start-up is held back by the test (the POST /v1/sessions is routed
// through it) and a turn is held running by its permission request, so every wait is for a DOM state.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildGateway, startGateway, launchBrowser, makeTmp, cleanup, openPage, shot, createSession, sendPrompt,
  waitTurnsEnded, waitText, waitLive,
} from './harness.mjs';

let tmp;
let gw;
let ctx;

before(async () => {
  tmp = makeTmp();
  const bin = await buildGateway(tmp);
  gw = await startGateway(bin);
  ctx = await launchBrowser(tmp);
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

/** Holds every POST /v1/sessions of page until the returned function is called; counts them in posts. */
async function holdSessionCreation(page) {
  let release;
  const held = new Promise((r) => { release = r; });
  const posts = [];
  await page.route(/\/v1\/sessions$/, async (route) => {
    if (route.request().method() === 'POST') {
      posts.push(route.request().postData());
      await held;
    }
    await route.continue();
  });
  return { release, posts };
}

/** The texts of the queued prompts, in order. */
function queued(page) {
  return page.$$eval('#queue .queue-item .queue-text', (els) => els.map((e) => e.textContent));
}

/** The texts of the user's messages in the transcript, in order. */
function userTexts(page) {
  return page.$$eval('.msg-user', (els) => els.map((e) => e.textContent.trim().replace(/^You/, '').trim()));
}

test('queue: prompts typed while a turn runs wait visibly, can be edited and removed, and go in order', { timeout: 90000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await createSession(page, { policy: 'ask' });
  await sendPrompt(page, 'first');
  // The demo turn waits on its permission request: the turn runs until it is answered.
  await page.waitForSelector('#perm-dialog[open]');
  await page.click('#perm-later');
  await page.waitForSelector('#composer[data-running="true"]', { state: 'attached' });

  await sendPrompt(page, 'second');
  await page.waitForSelector('#queue .queue-item');
  assert.equal(await page.inputValue('#prompt-input'), '', 'the composer is free for the next prompt');
  await sendPrompt(page, 'third');
  await page.waitForFunction(() => document.querySelectorAll('#queue .queue-item').length === 2);
  assert.deepEqual(await queued(page), ['second', 'third']);
  assert.match(await page.textContent('#queue'), /when the turn ends/);
  await shot(page, '70-queue');

  // Edit takes a queued prompt back into the composer; sending it again queues it at the end.
  await page.locator('#queue .queue-item .queue-edit').first().click();
  assert.equal(await page.inputValue('#prompt-input'), 'second');
  assert.deepEqual(await queued(page), ['third']);
  await page.fill('#prompt-input', 'second, edited');
  await page.press('#prompt-input', 'Enter');
  await page.waitForFunction(() => document.querySelectorAll('#queue .queue-item').length === 2);
  assert.deepEqual(await queued(page), ['third', 'second, edited']);
  // Remove drops one; it is never sent.
  await page.locator('#queue .queue-item .queue-remove').first().click();
  assert.deepEqual(await queued(page), ['second, edited']);

  // The first turn ends once its permission is answered; the queued prompt goes then, by itself.
  await page.click('.tool-card[data-permission="pending"] button');
  await page.waitForSelector('#perm-dialog[open]');
  await page.click('#perm-options button[data-option-id="allow-once"]');
  await page.waitForFunction(() => document.querySelectorAll('.msg-user').length === 2);
  await page.waitForSelector('#queue', { state: 'hidden' });
  assert.deepEqual(await userTexts(page), ['first', 'second, edited']);
  assert.deepEqual(await waitTurnsEnded(page, 1), ['end_turn']);
  await page.waitForSelector('#perm-dialog[open]'); // the second turn asks too: stop it
  await page.click('#perm-later');
  await page.click('#cancel-turn');
  assert.deepEqual(await waitTurnsEnded(page, 2), ['end_turn', 'cancelled']);
  assert.equal(await page.locator('.msg-user', { hasText: 'third' }).count(), 0);
  await closePage(page);
});

test('queue: Enter while the new session starts (dialog dismissed) queues for that session, not a second one', { timeout: 90000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  const hold = await holdSessionCreation(page);
  await page.waitForSelector('.agent-item');
  await page.click('#new-session');
  await page.waitForSelector('#new-dialog[open]');
  await page.click('#new-create');
  await page.waitForSelector('#new-starting:not([hidden])');
  await page.keyboard.press('Escape'); // the dialog goes; the agent keeps starting
  await page.waitForSelector('#new-dialog:not([open])', { state: 'attached' });

  await page.waitForSelector('#prompt-input:not([disabled])');
  await sendPrompt(page, '/echo typed while it started');
  await page.waitForSelector('#queue .queue-item');
  assert.deepEqual(await queued(page), ['/echo typed while it started']);
  assert.match(await page.textContent('#queue'), /when demo is ready/);
  assert.equal(await page.inputValue('#prompt-input'), '');
  assert.equal(hold.posts.length, 1, 'no second session is started');
  await shot(page, '71-queue-starting');
  hold.release();

  // The session opens and the queued prompt is sent there.
  await page.waitForFunction(() => /^#\/s\//.test(location.hash));
  await waitLive(page);
  await waitText(page, '.msg-agent', 'typed while it started');
  assert.deepEqual(await waitTurnsEnded(page, 1), ['end_turn']);
  assert.deepEqual(await userTexts(page), ['/echo typed while it started']);
  assert.equal(hold.posts.length, 1);
  await page.waitForSelector('#queue', { state: 'hidden' });
  await closePage(page);
});

test('queue: on a 390 px screen, prompts typed in the empty state while it starts all go, in order', { timeout: 90000 }, async () => {
  const page = await openPage(ctx);
  await page.setViewportSize({ width: 390, height: 760 });
  await page.goto(gw.base + '/');
  const hold = await holdSessionCreation(page);
  await page.waitForSelector('#prompt-input:not([disabled])');
  await sendPrompt(page, '/echo one');
  await page.waitForFunction(() => /^Starting demo… \d+\.\d s$/.test(document.getElementById('empty-starting').textContent));
  // The composer stays enabled while the agent starts: more prompts queue behind the first.
  await page.waitForSelector('#prompt-input:not([disabled])');
  await sendPrompt(page, '/echo two');
  await page.waitForFunction(() => document.querySelectorAll('#queue .queue-item').length === 2);
  assert.deepEqual(await queued(page), ['/echo one', '/echo two']);
  const box = await page.locator('#queue').boundingBox();
  assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `the queue fits the screen: ${JSON.stringify(box)}`);
  assert.ok(await page.locator('#queue .queue-remove').first().isVisible());
  await shot(page, '72-queue-narrow');
  hold.release();

  await page.waitForFunction(() => /^#\/s\//.test(location.hash));
  await waitLive(page);
  assert.deepEqual(await waitTurnsEnded(page, 2), ['end_turn', 'end_turn']);
  assert.deepEqual(await userTexts(page), ['/echo one', '/echo two']);
  assert.equal(hold.posts.length, 1);
  await closePage(page);
});

test('queue (unit): order per target, put back in front, retarget the new session', async () => {
  const { PromptQueue, NEW_SESSION, canSendQueued, refusedAsTooEarly } = await import('../web/static/js/queue.js');
  const q = new PromptQueue();
  const a = q.add(NEW_SESSION, 'a');
  q.add('s1', 'x');
  q.add(NEW_SESSION, 'b');
  assert.deepEqual(q.of(NEW_SESSION).map((x) => x.text), ['a', 'b']);
  assert.equal(q.take(NEW_SESSION), a);
  q.putBack(a);
  assert.deepEqual(q.of(NEW_SESSION).map((x) => x.text), ['a', 'b']);
  q.retarget(NEW_SESSION, 's2');
  assert.deepEqual(q.of('s2').map((x) => x.text), ['a', 'b']);
  assert.equal(q.remove(a.key), a);
  assert.deepEqual(q.items.map((x) => x.text), ['x', 'b']);
  const ready = { loaded: true, status: 'idle', running: false, sending: false, readOnly: false, held: false };
  assert.equal(canSendQueued(ready), true);
  assert.equal(canSendQueued({ ...ready, status: 'detached' }), true, 'a prompt re-attaches a detached session');
  for (const k of ['running', 'sending', 'readOnly', 'held']) assert.equal(canSendQueued({ ...ready, [k]: true }), false, k);
  for (const st of ['starting', 'closed', 'failed']) assert.equal(canSendQueued({ ...ready, status: st }), false, st);
  assert.equal(canSendQueued({ ...ready, loaded: false }), false);
  assert.equal(refusedAsTooEarly('turn_running'), true);
  assert.equal(refusedAsTooEarly('session_not_ready'), true);
  assert.equal(refusedAsTooEarly('prompt_too_large'), false);
});
