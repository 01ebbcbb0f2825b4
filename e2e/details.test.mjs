// Small things a new user hit: the note about a permission answered elsewhere must not cover the composer, a
// resolved permission card must read the same live and after a reload, and a plan whose turn was stopped must stop
// spinning (also after a reload) and not take the transcript's room. A real gateway with the built-in demo agent,
// whose full turn shows a plan and waits on a permission request; every wait is for a DOM state.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildGateway, startGateway, launchBrowser, makeTmp, cleanup, openPage, shot, createSession, sendPrompt,
  waitTurnsEnded, waitLive,
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

function overlaps(a, b) {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

const CARD = '.tool-card[data-tool-call-id^="edit_"] .tool-perm';

test('a permission answered in another tab: its note leaves the composer free; the cards read alike, also after a reload', { timeout: 90000 }, async () => {
  const phone = await openPage(ctx);
  await phone.setViewportSize({ width: 390, height: 760 });
  await phone.goto(gw.base + '/');
  const id = await createSession(phone, { policy: 'ask' });
  const desk = await openPage(ctx, `${gw.base}/#/s/${encodeURIComponent(id)}`);
  await waitLive(desk);

  await sendPrompt(phone, 'edit the notes');
  await phone.waitForSelector('#perm-dialog[open]');
  await desk.waitForSelector('#perm-dialog[open]');
  await desk.click('#perm-options button[data-option-id="allow-once"]');

  // The phone is told in a note that keeps clear of the composer and its Send button.
  await phone.waitForSelector('.toast[data-kind="info"]');
  await phone.waitForSelector('#perm-dialog:not([open])', { state: 'attached' });
  const note = await phone.locator('.toast[data-kind="info"]').boundingBox();
  const send = await phone.locator('#send').boundingBox();
  const composer = await phone.locator('#composer').boundingBox();
  assert.ok(!overlaps(note, send), `the note covers Send: ${JSON.stringify({ note, send })}`);
  assert.ok(!overlaps(note, composer), `the note covers the composer: ${JSON.stringify({ note, composer })}`);
  assert.ok(note.x >= 0 && note.x + note.width <= 390, `the note fits the screen: ${JSON.stringify(note)}`);
  await shot(phone, '90-note-clear-of-composer');

  // Both cards say the same thing, from the frame, and the answering tab says it again after a reload.
  await desk.waitForSelector(`${CARD}:not([hidden])`);
  await phone.waitForSelector(`${CARD}:not([hidden])`);
  const live = await desk.textContent(CARD);
  assert.equal(await phone.textContent(CARD), live);
  assert.match(live, /^Allowed .* · Allow once$/);
  await desk.reload();
  await waitLive(desk);
  await desk.waitForSelector(`${CARD}:not([hidden])`);
  assert.equal(await desk.textContent(CARD), live, 'the card reads the same after a reload');

  assert.deepEqual(await waitTurnsEnded(phone, 1), ['end_turn']);
  await closePage(desk);
  await closePage(phone);
});

test('a plan whose turn was stopped: no spinner, says stopped, one line tall — also after a reload', { timeout: 90000 }, async () => {
  const page = await openPage(ctx);
  await page.setViewportSize({ width: 390, height: 760 });
  await page.goto(gw.base + '/');
  await createSession(page, { policy: 'ask' });
  await sendPrompt(page, 'plan and stop');
  await page.waitForSelector('#perm-dialog[open]');
  await page.click('#perm-later');
  await page.waitForSelector('#plan:not([hidden])');
  await page.waitForSelector('.plan-entry[data-status="in_progress"]', { state: 'attached' });
  // While the turn runs the plan is one line: the step in progress, and the count.
  const running = await page.locator('#plan').boundingBox();
  assert.ok(running.height <= 56, `the running plan is ${running.height}px tall`);
  assert.match(await page.textContent('#plan-current'), /Propose an edit/);

  await page.click('#cancel-turn');
  assert.deepEqual(await waitTurnsEnded(page, 1), ['cancelled']);
  const check = async (when) => {
    await page.waitForSelector('#plan[data-state="stopped"]');
    assert.equal(await page.locator('#plan .spin').count(), 0, `no spinner ${when}`);
    assert.match(await page.textContent('#plan-progress'), /1 of 3 done · stopped/, when);
    const box = await page.locator('#plan').boundingBox();
    assert.ok(box.height <= 56, `the plan is ${box.height}px tall ${when}`);
  };
  await check('after Stop');
  await shot(page, '91-plan-stopped');
  await page.reload();
  await waitLive(page);
  await check('after a reload');

  // It still opens on demand, showing every step.
  await page.click('#plan summary');
  await page.waitForSelector('.plan-entry[data-status="pending"]');
  assert.equal(await page.locator('.plan-entry').count(), 3);
  await closePage(page);
});

test('plan (unit): only a running turn spins; a turn that ended first says how; a finished plan says done', async () => {
  const { planView } = await import('../web/static/js/plan.js');
  const entries = [
    { content: 'Read', status: 'completed' }, { content: 'Edit', status: 'in_progress' }, { content: 'Sum up', status: 'pending' },
  ];
  assert.deepEqual(planView(entries, true, null), { state: 'running', done: 1, total: 3, progress: '1 of 3 done', current: 'Edit' });
  assert.deepEqual(planView(entries, false, 'cancelled'), { state: 'stopped', done: 1, total: 3, progress: '1 of 3 done · stopped', current: 'Edit' });
  assert.equal(planView(entries, false, 'error').progress, '1 of 3 done · failed');
  // A turn that ended normally with steps left (the agent asks something back): no spinner, no verdict.
  assert.deepEqual(planView(entries, false, 'end_turn'), { state: 'idle', done: 1, total: 3, progress: '1 of 3 done', current: 'Edit' });
  const finished = entries.map((e) => ({ ...e, status: 'completed' }));
  assert.deepEqual(planView(finished, false, 'cancelled'), { state: 'done', done: 3, total: 3, progress: '3 of 3 done', current: '' });
  assert.equal(planView([{ content: 'Next', status: 'pending' }], true, null).current, 'Next');
  assert.equal(planView(null, false, null).total, 0);
});
