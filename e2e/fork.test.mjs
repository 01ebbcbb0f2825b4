// Forking a session from the web UI: a real gateway with the repository's test agent advertising session/fork
// (echo mode: each answer describes the prompt it got). The Fork button opens a new session that starts with
// the conversation so far; what is said in the fork stays out of the original. An agent without fork shows no
// button.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildGateway, buildTestAgent, startGateway, launchBrowser, makeTmp, cleanup, openPage, createSession,
  sendPrompt, waitTurnsEnded, waitText, waitLive,
} from './harness.mjs';

let tmp;
let gw;
let ctx;

before(async () => {
  tmp = makeTmp();
  const bin = await buildGateway(tmp);
  const agent = await buildTestAgent(tmp);
  gw = await startGateway(bin, ['--agent', `fa=${agent} -mode echo -fork`, '--agent', `plain=${agent} -mode echo`]);
  ctx = await launchBrowser(tmp);
}, { timeout: 240000 });

after(async () => {
  if (ctx) await ctx.close().catch(() => {});
  if (gw) await gw.stop();
  cleanup(tmp);
});

const sessionOfHash = (hash) => decodeURIComponent(hash.replace(/^#\/s\//, ''));

test('fork: the Fork button opens a session that starts with the conversation so far', { timeout: 120000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await page.waitForSelector('.agent-item[data-agent="fa"]');
  const src = await createSession(page, { agent: 'fa' });
  await sendPrompt(page, 'said before the fork');
  await waitTurnsEnded(page, 1);
  await page.waitForSelector('#fork-session:not([hidden])');
  await page.click('#fork-session');
  await page.waitForFunction((id) => /^#\/s\//.test(location.hash) && !location.hash.endsWith(encodeURIComponent(id)), src);
  const fork = sessionOfHash(await page.evaluate(() => location.hash));
  await waitLive(page);
  await waitText(page, '.msg-user', 'said before the fork');
  await sendPrompt(page, 'said in the fork');
  await waitTurnsEnded(page, 1);
  await waitText(page, '.msg-user', 'said in the fork');

  const r = await fetch(`${gw.base}/v1/sessions/${encodeURIComponent(src)}`);
  const detail = await r.json();
  const snap = JSON.stringify(detail.snapshot);
  assert.ok(snap.includes('said before the fork') && !snap.includes('said in the fork'), 'the fork\'s turn shows in the source');
  assert.notEqual(fork, src);
  assert.deepEqual(page.problems(), [], 'the page logged errors');
  await page.close();
});

test('fork: no Fork button where the agent cannot fork', { timeout: 90000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await page.waitForSelector('.agent-item[data-agent="plain"]');
  await createSession(page, { agent: 'plain' });
  await page.waitForSelector('#close-session:not([hidden])');
  assert.equal(await page.isVisible('#fork-session'), false);
  await page.close();
});
