// Mode c in the UI: a real nats-server with JetStream (built from the Go module) and two gateways on it, nodes
// "a" and "b". A session created on a is listed on b's page with its node, opened there from b's follower
// cache, and prompted from b's page (the command goes to a). Every wait is for a DOM state.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  buildGateway, startGateway, launchBrowser, makeTmp, cleanup, openPage, shot, freePort, repoRoot,
  sendPrompt, waitTurnsEnded, waitLive, waitText,
} from './harness.mjs';

let tmp;
let nats;
let gwA;
let gwB;
let ctx;

/** Builds nats-server from the module the gateway depends on and runs it with JetStream on a free port. */
async function startNATS(dir) {
  const bin = path.join(dir, 'nats-server');
  await promisify(execFile)('go', ['build', '-o', bin, 'github.com/nats-io/nats-server/v2'], { cwd: repoRoot, maxBuffer: 16 << 20 });
  const port = await freePort();
  const proc = spawn(bin, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', path.join(dir, 'nats')], { stdio: 'ignore' });
  const deadline = Date.now() + 30000;
  while (!(await accepts(port))) {
    if (Date.now() > deadline) throw new Error('nats-server did not listen');
    await new Promise((r) => setTimeout(r, 50)); // polling interval, not an assertion
  }
  // stop resolves once the server exited: it writes its store while it shuts down, so its directory goes after.
  const exited = new Promise((r) => proc.once('exit', r));
  return { url: `nats://127.0.0.1:${port}`, stop: () => { proc.kill('SIGTERM'); return exited; } };
}

function accepts(port) {
  return new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1');
    c.once('connect', () => { c.destroy(); resolve(true); });
    c.once('error', () => resolve(false));
  });
}

before(async () => {
  tmp = makeTmp();
  const [bin, n] = await Promise.all([buildGateway(tmp), startNATS(tmp)]);
  nats = n;
  const flags = (id) => ['--nats-url', nats.url, '--node-id', id, '--nats-replicas', '1', '--demo-delay', '0'];
  gwA = await startGateway(bin, flags('a'));
  gwB = await startGateway(bin, flags('b'));
  ctx = await launchBrowser(tmp);
}, { timeout: 240000 });

after(async () => {
  if (ctx) await ctx.close().catch(() => {});
  if (gwB) await gwB.stop();
  if (gwA) await gwA.stop();
  if (nats) await nats.stop();
  cleanup(tmp);
});

test('cluster: b lists a session of a with its node, opens it and prompts it', { timeout: 120000 }, async () => {
  const res = await fetch(gwA.base + '/v1/sessions', { method: 'POST', body: '{}' });
  assert.equal(res.status, 201);
  const s = await res.json();
  assert.equal(s.node, 'a');

  const page = await openPage(ctx, gwB.base + '/');
  await page.waitForSelector(`.session-item[data-session-id="${s.id}"]`);
  await waitText(page, `.session-item[data-session-id="${s.id}"] .session-item-meta`, 'on a');
  await page.click(`.session-item[data-session-id="${s.id}"]`);
  await waitLive(page);
  await waitText(page, '#session-node', 'a');

  await sendPrompt(page, 'quick');
  const stops = await waitTurnsEnded(page, 1);
  assert.deepEqual(stops, ['end_turn']);
  await shot(page, 'cluster-follower');

  // The owner logged the turn b's page prompted.
  const detail = await (await fetch(`${gwA.base}/v1/sessions/${s.id}`)).json();
  assert.equal(detail.lastTurn && detail.lastTurn.stopReason, 'end_turn');
  assert.deepEqual(page.problems(), []);
});
