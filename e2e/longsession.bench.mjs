// The transcript's cost on a long session (not part of `npm test`): builds a session of 10 000 messages with a
// tool call (a diff) after each agent message, opens it in Chromium and prints how long the page takes to show
// its last message, how many DOM elements it then holds, and the frame times while the transcript is scrolled
// from the end to the start and back. Run it on another tree's gateway with GATEWAY_BIN=/path/to/gateway (the
// test agent is always built from this tree).
//
//   node longsession.bench.mjs [prompts [messagesPerPrompt]]     (default 20 × 499: 10 000 messages)

import { launchBrowser, makeTmp, cleanup, openPage } from './harness.mjs';
import { startLongGateway, buildLongSession } from './longsession.mjs';

const prompts = Number(process.argv[2] || 20);
const perPrompt = Number(process.argv[3] || 499);
const OPEN_LIMIT = Number(process.env.OPEN_LIMIT_MS || 600000); // give up on a page that never shows the last message

const tmp = makeTmp();
let gw;
let ctx;
try {
  gw = await startLongGateway(tmp);
  let t0 = Date.now();
  const s = await buildLongSession(gw.base, { prompts, perPrompt });
  const built = Date.now() - t0;
  const detail = await (await fetch(`${gw.base}/v1/sessions/${encodeURIComponent(s.id)}`)).json();
  console.log(`session: ${s.messages} messages, ${prompts * perPrompt} tool calls, ${detail.lastSeq} frames (built in ${(built / 1000).toFixed(1)} s); snapshot ${detail.snapshot.entries.length} entries${detail.snapshot.truncated ? ' (truncated)' : ''}`);

  ctx = await launchBrowser(tmp);
  const page = await openPage(ctx, gw.base + '/');
  await page.waitForSelector('#conn-pill');
  const want = `Message ${s.lastMessage}:`;
  t0 = Date.now();
  await page.evaluate((id) => { location.hash = '#/s/' + encodeURIComponent(id); }, s.id);
  try {
    await page.waitForFunction((w) => {
      const msgs = document.querySelectorAll('.msg-agent');
      const last = msgs[msgs.length - 1];
      return !!last && last.textContent.includes(w) && document.querySelector('#conn-pill[data-state="live"]');
    }, want, { timeout: OPEN_LIMIT, polling: 50 });
  } catch (err) {
    const dom = await page.evaluate(() => document.getElementsByTagName('*').length).catch(() => '?');
    const pill = await page.textContent('#conn-text').catch(() => '?');
    console.log(`open: the last message was not shown within ${OPEN_LIMIT} ms (${dom} DOM elements, connection "${pill}")`);
    process.exitCode = 1;
    throw err;
  }
  const open = Date.now() - t0;
  const dom = await page.evaluate(() => document.getElementsByTagName('*').length);
  const rows = await page.evaluate(() => document.querySelectorAll('.entries > *').length);
  console.log(`open: last message shown after ${open} ms; ${dom} DOM elements (${rows} transcript rows in the DOM)`);

  // Scroll from the end to the start in steps of 80% of the viewport, one step a frame, then back to the end.
  const scroll = await page.evaluate(async () => {
    const el = document.getElementById('transcript');
    const frame = () => new Promise((r) => requestAnimationFrame(r));
    const times = [];
    let maxDom = 0;
    const run = async (dir) => {
      let last = performance.now();
      for (let i = 0; i < 20000; i++) {
        const before = el.scrollTop;
        el.scrollTop = before + dir * el.clientHeight * 0.8;
        await frame();
        const now = performance.now();
        times.push(now - last);
        last = now;
        maxDom = Math.max(maxDom, document.getElementsByTagName('*').length);
        if (el.scrollTop === before) break;
      }
    };
    await run(-1);
    const top = el.scrollTop;
    await run(1);
    times.sort((a, b) => a - b);
    const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
    return { frames: times.length, p50: q(0.5), p95: q(0.95), max: times[times.length - 1], maxDom, top };
  });
  console.log(`scroll: ${scroll.frames} frames end→start→end; frame time p50 ${scroll.p50.toFixed(1)} ms, p95 ${scroll.p95.toFixed(1)} ms, max ${scroll.max.toFixed(1)} ms; at most ${scroll.maxDom} DOM elements`);
  const problems = page.problems();
  if (problems.length) console.log('page problems:', problems.slice(0, 5));
} finally {
  if (ctx) await ctx.close().catch(() => {});
  if (gw) await gw.stop();
  cleanup(tmp);
}
