// The usage meter shows the last turn's tokens (the demo agent's PromptResponse.usage) next to the context
// meter: live from `_gateway/turn_ended`, and again from the snapshot after a reload.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildGateway, startGateway, launchBrowser, makeTmp, cleanup, openPage, createSession, sendPrompt, waitTurnsEnded,
  waitLive,
} from './harness.mjs';

let tmp;
let gw;
let ctx;

before(async () => {
  tmp = makeTmp();
  gw = await startGateway(await buildGateway(tmp));
  ctx = await launchBrowser(tmp);
}, { timeout: 240000 });

after(async () => {
  if (ctx) await ctx.close().catch(() => {});
  if (gw) await gw.stop();
  cleanup(tmp);
});

test('the usage meter shows the last turn\'s tokens, live and after a reload', { timeout: 90000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await createSession(page, { policy: 'approve-all' });
  await sendPrompt(page, 'count my tokens'); // 15 characters: 1015 in, 100 out
  assert.deepEqual(await waitTurnsEnded(page, 1), ['end_turn']);
  await page.waitForSelector('#usage .usage-turn');
  assert.equal(await page.textContent('#usage .usage-turn'), 'last turn 1.1k tokens');
  assert.match(await page.getAttribute('#usage', 'title'), /Last turn: 1015 in, 100 out, 1115 tokens in all/);
  assert.match(await page.textContent('#usage .usage-tokens'), /1\.0k \/ 200k tokens/);

  await page.reload();
  await waitLive(page);
  await page.waitForSelector('#usage .usage-turn');
  assert.equal(await page.textContent('#usage .usage-turn'), 'last turn 1.1k tokens');
  assert.deepEqual(page.problems(), [], 'the page logged errors');
  await page.close();
});
