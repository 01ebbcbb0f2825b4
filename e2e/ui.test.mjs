// End-to-end tests of the web UI: a real gateway (built from ./cmd/gateway, demo agent) driven through Debian's
// chromium by playwright-core. Every wait is for a DOM state; nothing sleeps for a fixed time.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildGateway, buildTestAgent, startGateway, launchBrowser, makeTmp, cleanup, openPage, shot, createSession,
  sendPrompt, waitTurnsEnded, waitText, waitLive, count,
} from './harness.mjs';

let tmp;
let gw;
let ctx;

before(async () => {
  tmp = makeTmp();
  const bin = await buildGateway(tmp);
  // "stubborn": a real agent process whose turns never end and go quiet after their first update.
  const testAgent = await buildTestAgent(tmp);
  gw = await startGateway(bin, ['--agent', `stubborn=${testAgent} -mode stubborn`]);
  ctx = await launchBrowser(tmp);
}, { timeout: 240000 });

after(async () => {
  if (ctx) await ctx.close().catch(() => {});
  if (gw) await gw.stop();
  cleanup(tmp);
});

function assertClean(page) {
  assert.deepEqual(page.problems(), [], 'the page logged errors');
}

async function closePage(page) {
  assertClean(page);
  await page.close();
}

test('loads with agents and a strict CSP, no console errors', { timeout: 60000 }, async () => {
  const page = await openPage(ctx);
  const res = await page.goto(gw.base + '/');
  assert.equal(res.status(), 200);
  await page.waitForSelector('.agent-item[data-agent="demo"]');
  assert.match(await page.textContent('#agent-list'), /demo/);
  assert.match(await page.textContent('#agent-list'), /default/);
  // No inline script or inline style anywhere in the served document.
  const inline = await page.evaluate(() => ({
    scripts: [...document.scripts].filter((s) => !s.src).length,
    styles: document.querySelectorAll('[style], style').length,
  }));
  assert.deepEqual(inline, { scripts: 0, styles: 0 });
  await shot(page, '01-empty');
  await closePage(page);
});

test('create a session, stream a turn, approve the permission', { timeout: 90000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  const id = await createSession(page, { policy: 'ask' });
  assert.ok(id);
  await page.waitForSelector(`.session-item[data-session-id="${id}"][aria-current="page"]`);

  // Shift+Enter makes a new line and sends nothing.
  await page.fill('#prompt-input', 'first line');
  await page.press('#prompt-input', 'Shift+Enter');
  await page.type('#prompt-input', 'second **line**');
  assert.equal(await page.inputValue('#prompt-input'), 'first line\nsecond **line**');
  assert.equal(await page.locator('.msg-user').count(), 0);

  // Enter sends.
  await page.press('#prompt-input', 'Enter');
  await page.waitForSelector('.msg-user');
  assert.equal(await page.inputValue('#prompt-input'), '');
  // The bubble appears, then its text is rendered: wait for the text rather than read it at once.
  await page.waitForFunction(() => (document.querySelector('.msg-user')?.textContent || '').trim().replace(/^You/, '') !== '');
  assert.equal((await page.textContent('.msg-user')).trim().replace(/^You/, ''), 'first line\nsecond **line**');

  // The answer streams in while the turn is still running.
  await page.waitForFunction(() => {
    const running = !document.getElementById('cancel-turn').hidden;
    const agent = [...document.querySelectorAll('.msg-agent')].map((e) => e.textContent).join('');
    return running && agent.includes('You said:');
  });
  await page.waitForSelector('.thought');
  await page.waitForSelector('#plan:not([hidden]) .plan-entry', { state: 'attached' }); // folded to one line
  await shot(page, '02-streaming');

  // The read tool call reaches completed, in place.
  await page.waitForSelector('.tool-card[data-tool-call-id^="read_"][data-status="completed"]');
  assert.equal(await page.locator('.tool-card[data-tool-call-id^="read_"]').count(), 1);

  // The permission dialog shows the tool call and the agent's options by name.
  await page.waitForSelector('#perm-dialog[open]');
  assert.match(await page.textContent('#perm-tool'), /notes\.md/);
  await page.waitForSelector('#perm-tool .diff-line.ins');
  const names = await page.$$eval('#perm-options button', (bs) => bs.map((b) => b.textContent.trim()));
  assert.deepEqual(names, ['Allow once', 'Always allow', 'Reject']);
  await page.waitForSelector('.tool-card[data-tool-call-id^="edit_"][data-permission="pending"]');
  await shot(page, '03-permission');

  await page.click('#perm-options button[data-option-id="allow-once"]');
  await page.waitForSelector('#perm-dialog:not([open])', { state: 'attached' });
  await page.waitForSelector('.tool-card[data-tool-call-id^="edit_"][data-status="completed"]');
  await page.waitForSelector('.tool-card[data-tool-call-id^="edit_"][data-permission="allowed"]');

  const reasons = await waitTurnsEnded(page, 1);
  assert.deepEqual(reasons, ['end_turn']);

  // Markdown: the echoed **line** is bold, the final fenced go block is highlighted, the diff is unified.
  assert.equal(await page.locator('.msg-agent strong', { hasText: 'line' }).count() >= 1, true);
  await page.waitForSelector('.msg-agent .code-block code[data-lang="go"] .tok-fn');
  assert.ok((await page.locator('.tool-card[data-tool-call-id^="edit_"] .diff-line.ins').count()) >= 1);
  assert.ok((await page.locator('.tool-card[data-tool-call-id^="edit_"] .diff-line.del').count()) >= 1);
  // Plan checklist complete, usage shown, title from session_info_update.
  await page.waitForFunction(() => [...document.querySelectorAll('.plan-entry')].every((e) => e.dataset.status === 'completed'));
  await page.waitForSelector('#usage:not([hidden])');
  assert.match(await page.textContent('#usage'), /tokens/);
  await page.waitForFunction(() => /^Demo/i.test(document.getElementById('session-title').textContent));
  assert.equal(await page.getAttribute('#send', 'disabled'), null);
  await shot(page, '04-turn-done');
  await closePage(page);
});

test('deny a permission: the tool call fails', { timeout: 90000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await createSession(page, { policy: 'ask' });
  await sendPrompt(page, 'please edit the notes');
  await page.waitForSelector('#perm-dialog[open]');
  await page.click('#perm-options button[data-option-id="reject-once"]');
  await page.waitForSelector('.tool-card[data-tool-call-id^="edit_"][data-status="failed"]');
  await page.waitForSelector('.tool-card[data-tool-call-id^="edit_"][data-permission="denied"]');
  assert.match(await page.textContent('.tool-card[data-tool-call-id^="edit_"] .tool-perm'), /Reject/);
  await waitTurnsEnded(page, 1);
  await shot(page, '05-denied');
  await closePage(page);
});

test('cancel a turn with Escape and with the Stop button', { timeout: 90000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await createSession(page, { policy: 'ask' });

  // The demo turn waits at its permission request, which is a stable point to cancel from.
  await sendPrompt(page, 'cancel me with escape');
  await page.waitForSelector('#perm-dialog[open]');
  // Escape first puts the dialog aside (the card offers "Review"), then cancels the turn.
  await page.keyboard.press('Escape');
  await page.waitForSelector('#perm-dialog:not([open])', { state: 'attached' });
  await page.waitForSelector('.tool-card[data-permission="pending"] .tool-perm button');
  await page.focus('#prompt-input');
  await page.keyboard.press('Escape');
  let reasons = await waitTurnsEnded(page, 1);
  assert.deepEqual(reasons, ['cancelled']);
  await page.waitForSelector('#cancel-turn', { state: 'hidden' });
  await page.waitForSelector('.tool-card[data-tool-call-id^="edit_"]:not([data-permission="pending"])');
  await shot(page, '06-cancelled');

  await sendPrompt(page, 'cancel me with the button');
  await page.waitForSelector('#perm-dialog[open]');
  await page.click('#perm-later');
  await page.waitForSelector('#perm-dialog:not([open])', { state: 'attached' });
  await page.click('#cancel-turn');
  reasons = await waitTurnsEnded(page, 2);
  assert.deepEqual(reasons, ['cancelled', 'cancelled']);
  await closePage(page);
});

test('a quick prompt runs no tools', { timeout: 60000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await createSession(page, { policy: 'ask' });
  await sendPrompt(page, 'quick');
  await waitTurnsEnded(page, 1);
  assert.equal(await page.locator('.tool-card').count(), 0);
  await waitText(page, '.msg-agent', 'You said: quick');
  await closePage(page);
});

test('reload mid-turn: the turn finishes without duplicated text', { timeout: 90000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  const id = await createSession(page, { policy: 'approve-all' });
  await sendPrompt(page, 'reload me midway');
  await waitText(page, '.msg-agent', 'You said:');
  assert.equal(await page.locator('.turn-end').count(), 0, 'the turn should still be running');
  await page.reload();
  assert.equal(await page.evaluate(() => location.hash), '#/s/' + id);
  await waitLive(page);
  const reasons = await waitTurnsEnded(page, 1);
  assert.deepEqual(reasons, ['end_turn']);
  await page.waitForSelector('.tool-card[data-tool-call-id^="edit_"][data-status="completed"]');
  const text = await page.textContent('#transcript');
  assert.equal(count(text, 'You said: reload me midway'), 1, 'echo duplicated: ' + text);
  assert.equal(count(text, 'fmt.Println'), 1, 'final code duplicated');
  assert.equal(await page.locator('.msg-user').count(), 1);
  assert.equal(await page.locator('.tool-card[data-tool-call-id^="read_"]').count(), 1);
  assert.equal(await page.locator('.tool-card[data-tool-call-id^="edit_"]').count(), 1);
  // The policy answered the permission: no dialog, and the card says so.
  assert.equal(await page.locator('#perm-dialog[open]').count(), 0);
  assert.match(await page.textContent('.tool-card[data-tool-call-id^="edit_"] .tool-perm'), /policy/);
  await shot(page, '07-after-reload');
  await closePage(page);
});

test('two pages on one session stay in step', { timeout: 90000 }, async () => {
  const a = await openPage(ctx, gw.base + '/');
  const id = await createSession(a, { policy: 'ask' });
  const b = await openPage(ctx, gw.base + '/#/s/' + encodeURIComponent(id));
  await waitLive(b);

  await sendPrompt(a, 'two tabs, one session');
  await waitText(b, '.msg-user', 'two tabs, one session');
  await waitText(b, '.msg-agent', 'You said: two tabs, one session');
  await a.waitForSelector('#perm-dialog[open]');
  await b.waitForSelector('#perm-dialog[open]');
  // The running turn shows in both: either can stop it.
  await b.waitForSelector('#cancel-turn:not([hidden])');

  // Answer in B: A's dialog goes away and A learns that another client answered.
  await b.click('#perm-options button[data-option-id="allow-once"]');
  await a.waitForSelector('#perm-dialog:not([open])', { state: 'attached' });
  await waitText(a, '.toast', 'another client');
  for (const p of [a, b]) {
    await p.waitForSelector('.tool-card[data-tool-call-id^="edit_"][data-status="completed"]');
    await waitTurnsEnded(p, 1);
  }
  await shot(a, '08-two-pages-a');
  await shot(b, '08-two-pages-b');

  const view = (p) => p.evaluate(() => ({
    user: [...document.querySelectorAll('.msg-user')].map((e) => e.textContent),
    agent: [...document.querySelectorAll('.msg-agent')].map((e) => e.textContent),
    tools: [...document.querySelectorAll('.tool-card')].map((e) => `${e.dataset.toolCallId}:${e.dataset.status}`),
    ends: [...document.querySelectorAll('.turn-end')].map((e) => e.dataset.stopReason),
    plan: [...document.querySelectorAll('.plan-entry')].map((e) => e.dataset.status),
    title: document.getElementById('session-title').textContent,
  }));
  assert.deepEqual(await view(a), await view(b));
  await closePage(b);
  await closePage(a);
});

test('mode and config selectors change the session', { timeout: 60000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await createSession(page, { policy: 'ask' });
  const mode = page.locator('.selector', { hasText: 'Mode' }).locator('select');
  await mode.waitFor();
  const modes = await mode.locator('option').evaluateAll((os) => os.map((o) => o.value));
  assert.ok(modes.length >= 2, 'the demo agent offers modes');
  const target = modes.find((m) => m !== 'default') || modes[1];
  await mode.selectOption(target);
  await page.waitForFunction((t) => {
    const s = [...document.querySelectorAll('.selector select')][0];
    return s && !s.disabled && s.value === t;
  }, target);

  const cfg = page.locator('select[data-config-id]').first();
  const values = await cfg.locator('option').evaluateAll((os) => os.map((o) => o.value));
  const current = await cfg.inputValue();
  const other = values.find((v) => v !== current);
  await cfg.selectOption(other);
  await page.waitForFunction((v) => {
    const s = document.querySelector('select[data-config-id]');
    return s && !s.disabled && s.value === v;
  }, other);

  // The choices survive a reload (they come back from the gateway).
  await page.reload();
  await waitLive(page);
  await page.waitForFunction(([m, v]) => {
    const s = [...document.querySelectorAll('.selector select')];
    return s.length >= 2 && s[0].value === m && document.querySelector('select[data-config-id]').value === v;
  }, [target, other]);
  await closePage(page);
});

test('agent text is never HTML', { timeout: 60000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await createSession(page, { policy: 'approve-all' });
  // The demo echoes the prompt, so the prompt is what the agent sends back.
  await sendPrompt(page, '<img src=x onerror="window.__pwned=1"><b>bold?</b> [bad](javascript:alert(1)) [good](https://example.com/) `<i>code</i>`');
  await waitTurnsEnded(page, 1);
  assert.equal(await page.locator('#transcript img').count(), 0);
  assert.equal(await page.locator('#transcript b').count(), 0);
  assert.equal(await page.locator('#transcript a[href^="javascript"]').count(), 0);
  assert.ok((await page.locator('.msg-agent a[href="https://example.com/"]').count()) >= 1);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.match(await page.textContent('.msg-agent'), /<img src=x/);
  await closePage(page);
});

test('close a session', { timeout: 60000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  const id = await createSession(page, { policy: 'ask' });
  await page.click('#close-session');
  await page.waitForSelector('#confirm-dialog[open]');
  await page.click('#confirm-yes');
  await page.waitForSelector('#conn-pill[data-state="closed"]');
  await page.waitForSelector('#prompt-input:disabled');
  await page.waitForSelector(`.session-item[data-session-id="${id}"][data-status="closed"]`);
  await shot(page, '09-closed');
  await closePage(page);
});

test('reconnects after the socket drops and resumes from its seq', { timeout: 90000 }, async () => {
  const page = await openPage(ctx);
  const urls = [];
  const routes = [];
  await page.routeWebSocket(/\/v1\/sessions\/[^/]+\/ws/, (ws) => {
    urls.push(ws.url());
    routes.push(ws);
    ws.connectToServer();
  });
  await page.goto(gw.base + '/');
  await createSession(page, { policy: 'approve-all' });
  await sendPrompt(page, 'survive a network drop');
  await waitText(page, '.msg-agent', 'You said:');
  // Drop the connection as a flaky network would (1006-like from the page's side).
  await routes[routes.length - 1].close({ code: 1011, reason: 'test drop' });
  await page.waitForSelector('#conn-pill[data-state="reconnecting"]');
  await shot(page, '10-reconnecting');
  await waitLive(page);
  await waitTurnsEnded(page, 1);
  const last = urls[urls.length - 1];
  assert.match(last, /[?&]after=\d+/, 'reconnect resumes with after=');
  assert.match(last, /[?&]epoch=/, 'reconnect names the epoch');
  const text = await page.textContent('#transcript');
  assert.equal(count(text, 'You said: survive a network drop'), 1);
  assert.equal(await page.locator('.tool-card[data-tool-call-id^="edit_"]').count(), 1);
  await closePage(page);
});

test('narrow screen: the sidebar collapses behind a menu button', { timeout: 60000 }, async () => {
  const page = await openPage(ctx);
  await page.setViewportSize({ width: 390, height: 780 });
  await page.goto(gw.base + '/');
  await createSession(page, { policy: 'approve-all' });
  assert.equal(await page.isVisible('#sidebar'), false);
  await page.click('#menu-toggle');
  await page.waitForSelector('#sidebar', { state: 'visible' });
  // Wait for the slide-in to finish before the picture.
  await page.waitForFunction(() => document.getElementById('sidebar').getBoundingClientRect().left >= 0);
  assert.equal(await page.evaluate(() => document.activeElement.closest('#sidebar') !== null), true, 'focus moves into the sidebar');
  await shot(page, '11-narrow-sidebar');
  await page.keyboard.press('Escape');
  await page.waitForSelector('#sidebar', { state: 'hidden' });
  await sendPrompt(page, 'narrow screens work too');
  await waitTurnsEnded(page, 1);
  await shot(page, '12-narrow-transcript');
  // Nothing overflows horizontally.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `page overflows by ${overflow}px`);
  await closePage(page);
});

test('dark theme follows prefers-color-scheme', { timeout: 60000 }, async () => {
  const page = await openPage(ctx);
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.goto(gw.base + '/');
  await createSession(page, { policy: 'ask' });
  await sendPrompt(page, 'dark mode **please**');
  await page.waitForSelector('#perm-dialog[open]');
  await shot(page, '13-dark-permission');
  await page.click('#perm-options button[data-option-id="allow-once"]');
  await waitTurnsEnded(page, 1);
  await shot(page, '14-dark-done');
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.notEqual(bg, 'rgb(246, 247, 249)');
  await closePage(page);
});

test('a permission request that times out is denied and the dialog says so', { timeout: 60000 }, async () => {
  const short = await startGateway(await buildGateway(tmp), ['--permission-timeout', '3s']);
  try {
    const page = await openPage(ctx, short.base + '/');
    await createSession(page, { policy: 'ask' });
    await sendPrompt(page, 'let the permission expire');
    await page.waitForSelector('#perm-dialog[open]');
    await waitText(page, '#perm-deadline', 'Expires in');
    await page.waitForSelector('#perm-dialog:not([open])', { state: 'attached' });
    await waitText(page, '.toast', 'timed out');
    await page.waitForSelector('.tool-card[data-tool-call-id^="edit_"][data-permission="denied"]');
    assert.match(await page.textContent('.tool-card[data-tool-call-id^="edit_"] .tool-perm'), /Timed out/);
    await page.waitForSelector('.tool-card[data-tool-call-id^="edit_"][data-status="failed"]');
    await waitTurnsEnded(page, 1);
    await shot(page, '15-permission-timed-out');
    await closePage(page);
  } finally {
    await short.stop();
  }
});

test('a trimmed log makes the page resync from the snapshot', { timeout: 60000 }, async () => {
  const small = await startGateway(await buildGateway(tmp), ['--log-max-frames', '6']);
  try {
    // A whole turn runs before any page looks, so its first frames are gone from the log.
    const res = await fetch(small.base + '/v1/sessions', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ permissionPolicy: 'approve-all' }),
    });
    assert.equal(res.status, 201);
    const s = await res.json();
    const done = await fetch(`${small.base}/v1/sessions/${s.id}/prompt?wait=true`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'before the page opened' }),
    });
    assert.equal(done.status, 200);

    const page = await openPage(ctx, `${small.base}/#/s/${encodeURIComponent(s.id)}`);
    await waitLive(page);
    // Rendered from the snapshot: the early messages and both tool calls, each once.
    await waitText(page, '.msg-user', 'before the page opened');
    await waitText(page, '.msg-agent', 'You said: before the page opened');
    await page.waitForSelector('.tool-card[data-tool-call-id^="edit_"][data-status="completed"]');
    assert.equal(await page.locator('.tool-card[data-tool-call-id^="read_"]').count(), 1);
    assert.equal(count(await page.textContent('#transcript'), 'You said: before the page opened'), 1);

    // And the page carries on live from there.
    await sendPrompt(page, 'quick');
    await waitText(page, '.msg-agent', 'You said: quick');
    await page.waitForSelector('.turn-end');
    const text = await page.textContent('#transcript');
    assert.equal(count(text, 'You said: quick'), 1);
    assert.equal(count(text, 'You said: before the page opened'), 1);
    await shot(page, '16-resynced');
    await closePage(page);
  } finally {
    await small.stop();
  }
});

// --- Rendering and resync driven by crafted frames: the REST calls go to the real gateway, the session's
// WebSocket is answered by the test, so every ACP variant and the resync path can be exercised exactly.

const PNG_1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

function frame(sessionId, seq, epoch, update) {
  return JSON.stringify({
    jsonrpc: '2.0', method: 'session/update',
    params: { sessionId, update, _meta: { gateway: { seq, epoch, turnId: 't1' } } },
  });
}

test('renders every ACP variant safely and resyncs from a snapshot (crafted frames)', { timeout: 60000 }, async () => {
  const page = await openPage(ctx);
  const created = await (await fetch(gw.base + '/v1/sessions', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ permissionPolicy: 'ask' }),
  })).json();
  const id = created.id;
  const E1 = 'epoch-one';
  const E2 = 'epoch-two';
  const urls = [];
  let sock = null;
  await page.routeWebSocket(/\/v1\/sessions\/[^/]+\/ws/, (ws) => {
    urls.push(ws.url());
    sock = ws;
    ws.onMessage(() => {});
    const n = urls.length;
    if (n === 1) {
      const md = '# Heading\n\nSome *em*, **strong** and `code`.\n\n- item one\n- item two\n  1. nested\n\n> quoted\n\n'
        + '```js\nconst x = 1; // note\n```\n\n[a link](https://example.com/) [bad](javascript:alert(1)) <script>window.__pwned=1</script>'
        + '\n\n| key | value |\n|-----|------:|\n| ~~old~~ | 42 |\n';
      const frames = [
        frame(id, 1, E1, { sessionUpdate: 'user_message_chunk', messageId: 'u1', content: { type: 'text', text: 'Show me <b>everything</b>' } }),
        frame(id, 2, E1, { sessionUpdate: 'agent_thought_chunk', messageId: 'th1', content: { type: 'text', text: 'Let me think.' } }),
        frame(id, 3, E1, { sessionUpdate: 'agent_message_chunk', messageId: 'm1', content: { type: 'text', text: md.slice(0, 40) } }),
        frame(id, 4, E1, { sessionUpdate: 'agent_message_chunk', messageId: 'm1', content: { type: 'text', text: md.slice(40) } }),
        frame(id, 5, E1, {
          sessionUpdate: 'tool_call', toolCallId: 'run_1', title: 'Run ls', kind: 'execute', status: 'in_progress',
          rawInput: { command: 'ls -la' }, content: [{ type: 'terminal', terminalId: 'term-1' }],
        }),
        frame(id, 6, E1, { sessionUpdate: 'tool_call_update', toolCallId: 'run_1', status: 'completed', rawOutput: { output: 'total 0\nREADME.md\n' } }),
        frame(id, 7, E1, { sessionUpdate: 'a_future_variant', whatever: true }),
        frame(id, 8, E1, { sessionUpdate: 'agent_message_chunk', messageId: 'm2', content: { type: 'image', mimeType: 'image/png', data: PNG_1x1 } }),
        frame(id, 9, E1, { sessionUpdate: 'agent_message_chunk', messageId: 'm2', content: { type: 'resource_link', uri: 'https://example.com/doc', name: 'doc' } }),
        frame(id, 10, E1, { sessionUpdate: 'plan', entries: [{ content: 'Step A', priority: 'high', status: 'completed' }, { content: 'Step B', priority: 'low', status: 'in_progress' }] }),
        frame(id, 11, E1, { sessionUpdate: 'usage_update', used: 51234, size: 200000, cost: { amount: 0.0421, currency: 'USD' } }),
        frame(id, 12, E1, { sessionUpdate: 'tool_call', toolCallId: 'edit_9', title: 'Create main.go', kind: 'edit', status: 'completed', locations: [{ path: '/tmp/main.go', line: 3 }], content: [{ type: 'diff', path: '/tmp/main.go', newText: 'package main\n\nfunc main() {}\n' }] }),
        JSON.stringify({ jsonrpc: '2.0', method: '_gateway/a_future_notification', params: {} }),
      ];
      for (const f of frames) ws.send(f);
      ws.send(JSON.stringify({ jsonrpc: '2.0', method: '_gateway/replay_complete', params: { lastSeq: 12 } }));
    } else {
      ws.send(JSON.stringify({ jsonrpc: '2.0', method: '_gateway/replay_complete', params: { lastSeq: 40 } }));
      ws.send(frame(id, 41, E2, { sessionUpdate: 'agent_message_chunk', messageId: 'm9', content: { type: 'text', text: 'Live after the resync.' } }));
    }
  });

  await page.goto(`${gw.base}/#/s/${encodeURIComponent(id)}`);
  await waitLive(page);
  await page.waitForSelector('.tool-card[data-tool-call-id="edit_9"][data-status="completed"]');
  // Markdown as DOM, not HTML.
  await page.waitForSelector('.msg-agent .md-h1');
  assert.equal(await page.textContent('.msg-agent .md-h1'), 'Heading');
  assert.equal(await page.textContent('.msg-agent em'), 'em');
  assert.equal(await page.textContent('.msg-agent strong'), 'strong');
  assert.equal(await page.locator('.msg-agent ul > li').count(), 2);
  assert.equal(await page.locator('.msg-agent ul ol > li').count(), 1);
  assert.equal(await page.textContent('.msg-agent blockquote'), 'quoted');
  assert.equal(await page.textContent('.msg-agent .code-block .tok-kw'), 'const');
  assert.equal(await page.textContent('.msg-agent .code-block .tok-com'), '// note');
  assert.equal(await page.locator('.msg-agent a[href="https://example.com/"]').count(), 1);
  assert.equal(await page.locator('#transcript a[href^="javascript"], #transcript script, #transcript b').count(), 0);
  assert.match(await page.textContent('.msg-agent'), /<script>window.__pwned=1<\/script>/);
  assert.equal(await page.textContent('.msg-user .plain-text'), 'Show me <b>everything</b>');
  assert.equal(await page.textContent('.msg-agent table tbody td.al-right'), '42');
  assert.equal(await page.textContent('.msg-agent table del'), 'old');
  // Thought, terminal, image, resource link, diff of a new file, plan, usage.
  assert.equal(await page.textContent('.thought .thought-body'), 'Let me think.');
  await waitText(page, '.tool-card[data-tool-call-id="run_1"] .terminal', '$ ls -la');
  assert.match(await page.textContent('.tool-card[data-tool-call-id="run_1"] .terminal-out'), /README\.md/);
  assert.equal(await page.locator('.msg-agent img.content-image[src^="data:image/png;base64,"]').count(), 1);
  assert.equal(await page.locator('.msg-agent .resource-link a[href="https://example.com/doc"]').count(), 1);
  assert.match(await page.textContent('.tool-card[data-tool-call-id="edit_9"] .diff-head'), /new file/);
  assert.equal(await page.locator('.tool-card[data-tool-call-id="edit_9"] .diff-line.ins').count(), 3);
  assert.match(await page.textContent('.tool-card[data-tool-call-id="edit_9"] .tool-locations'), /\/tmp\/main\.go:3/);
  assert.deepEqual(await page.$$eval('.plan-entry', (es) => es.map((e) => e.dataset.status)), ['completed', 'in_progress']);
  assert.match(await page.textContent('#usage'), /51k \/ 200k tokens/);
  assert.match(await page.textContent('#usage'), /\$0\.04/);
  await shot(page, '17-rich-rendering');
  await page.$eval('#transcript', (e) => { e.scrollTop = 0; });
  await page.waitForFunction(() => document.getElementById('transcript').scrollTop === 0);
  await shot(page, '17b-rich-rendering-top');

  // resync_required: the page reloads GET /v1/sessions/{id} (answered here with a snapshot), renders it, and
  // reconnects after the snapshot's seq with the new epoch.
  const snapshot = {
    seq: 40,
    entries: [
      { kind: 'user_message', messageId: 'u7', turnId: 't7', content: [{ type: 'text', text: 'From the snapshot' }] },
      { kind: 'agent_message', messageId: 'm7', turnId: 't7', content: [{ type: 'text', text: 'Snapshot **answer**' }] },
      { kind: 'tool_call', turnId: 't7', toolCall: { toolCallId: 'read_7', title: 'Read go.mod', kind: 'read', status: 'completed' } },
    ],
    plan: { entries: [{ content: 'Only step', priority: 'medium', status: 'completed' }] },
    usage: { used: 1000, size: 10000 },
    sessionInfo: { title: 'Resynced session' },
  };
  await page.route(`**/v1/sessions/${id}`, async (route) => {
    const real = await route.fetch();
    const body = await real.json();
    await route.fulfill({ response: real, json: { ...body, epoch: E2, lastSeq: 40, snapshot } });
  });
  sock.send(JSON.stringify({ jsonrpc: '2.0', method: '_gateway/resync_required', params: { reason: 'epoch_changed', earliestSeq: 1 } }));
  await waitText(page, '.msg-agent', 'Live after the resync.');
  assert.equal(urls.length, 2);
  assert.match(urls[1], /[?&]after=40(&|$)/);
  assert.match(urls[1], new RegExp(`[?&]epoch=${E2}(&|$)`));
  const text = await page.textContent('#transcript');
  assert.equal(count(text, 'From the snapshot'), 1);
  assert.equal(count(text, 'Show me'), 0, 'the old transcript is replaced by the snapshot');
  assert.equal(await page.textContent('.msg-agent strong'), 'answer');
  await page.waitForSelector('.tool-card[data-tool-call-id="read_7"][data-status="completed"]');
  assert.equal(await page.textContent('#session-title'), 'Resynced session');
  await shot(page, '18-resynced-from-snapshot');
  await closePage(page);
});

test('keyboard only: create a session, prompt, answer the permission', { timeout: 60000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await page.waitForSelector('.agent-item');
  // The first Tab reaches the skip link; it leads to the prompt.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.className), 'skip-link');
  await page.focus('#new-session');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#new-dialog[open]');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'new-agent');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'new-cwd');
  await page.keyboard.press('Enter'); // implicit submission of the form
  await waitLive(page);
  await page.waitForFunction(() => document.activeElement && document.activeElement.id === 'prompt-input');
  await page.keyboard.type('all by keyboard');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#perm-dialog[open]');
  // Focus lands on the first option inside the modal dialog.
  await page.waitForFunction(() => document.activeElement && document.activeElement.dataset.optionId === 'allow-once');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.optionId), 'allow-always');
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.tool-card[data-tool-call-id^="edit_"][data-status="completed"]');
  await waitTurnsEnded(page, 1);
  // Every interactive element has an accessible name.
  const unnamed = await page.evaluate(() => [...document.querySelectorAll('button, select, textarea, input, a[href]')]
    .filter((e) => e.getClientRects().length > 0)
    .filter((e) => !(e.getAttribute('aria-label') || e.textContent.trim() || (e.labels && e.labels.length) || e.title))
    .map((e) => e.outerHTML.slice(0, 80)));
  assert.deepEqual(unnamed, []);
  await closePage(page);
});

/** Holds every POST /v1/sessions of the page until release() is called, so a starting agent can be looked at. */
async function holdSessionCreation(page) {
  let release;
  const held = new Promise((r) => { release = r; });
  await page.route(/\/v1\/sessions$/, async (route) => {
    if (route.request().method() === 'POST') await held;
    await route.continue();
  });
  return release;
}

/** Whether the turn's elapsed time ("Running 1:05" is 65 s) is shown and at least min seconds. Runs in the page. */
function elapsedAtLeast(min) {
  const el = document.getElementById('turn-elapsed');
  const m = el && !el.hidden ? /(\d+):(\d\d)$/.exec(el.textContent) : null;
  return !!m && Number(m[1]) * 60 + Number(m[2]) >= min;
}

test('empty state: Enter starts a session with the default agent and sends the prompt', { timeout: 60000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  const release = await holdSessionCreation(page);
  await page.waitForSelector('#prompt-input:not([disabled])');
  assert.match(await page.getAttribute('#prompt-input', 'placeholder'), /Ask demo/);
  await sendPrompt(page, 'quick');
  // While the agent starts, the empty state says which one and for how long; the prompt waits in the queue.
  await page.waitForFunction(() => /^Starting demo… \d+\.\d s$/.test(document.getElementById('empty-starting').textContent));
  assert.equal(await page.isDisabled('#prompt-input'), false);
  assert.equal(await page.inputValue('#prompt-input'), '');
  assert.equal(await page.textContent('#queue .queue-text'), 'quick');
  await shot(page, '20-empty-state-starting');
  release();

  await page.waitForFunction(() => /^#\/s\//.test(location.hash));
  await waitLive(page);
  await waitText(page, '.msg-user', 'quick');
  await waitText(page, '.msg-agent', 'You said: quick');
  assert.deepEqual(await waitTurnsEnded(page, 1), ['end_turn']);
  assert.equal(await page.inputValue('#prompt-input'), '');
  assert.match(await page.textContent('#session-meta'), /demo/);
  assert.equal(await page.isHidden('#empty-starting'), true);
  assert.equal(count(await page.textContent('#transcript'), 'You said: quick'), 1);
  const id = await page.evaluate(() => decodeURIComponent(location.hash.replace(/^#\/s\//, '')));
  await page.waitForSelector(`.session-item[data-session-id="${id}"][aria-current="page"]`);
  await closePage(page);
});

test('the new-session dialog says which agent is starting and for how long', { timeout: 60000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  const release = await holdSessionCreation(page);
  await page.waitForSelector('.agent-item');
  await page.click('#new-session');
  await page.waitForSelector('#new-dialog[open]');
  await page.click('#new-create');
  // The elapsed time runs (past a second) in place of the Create button.
  await page.waitForFunction(() => /^Starting demo… [1-9]\d*\.\d s$/.test(document.getElementById('new-starting').textContent));
  assert.equal(await page.isHidden('#new-create'), true);
  await shot(page, '21-dialog-starting');
  release();
  await page.waitForSelector('#new-dialog:not([open])', { state: 'attached' });
  await waitLive(page);
  assert.equal(await page.isHidden('#new-starting'), true);
  assert.equal(await page.isVisible('#new-create'), false); // the dialog is closed; the button is back inside it
  assert.equal(await page.$eval('#new-create', (b) => b.hidden), false);
  await closePage(page);
});

test('a silent running turn shows its elapsed time, also after a reload', { timeout: 60000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  const id = await createSession(page, { agent: 'stubborn' });
  assert.equal(await page.isHidden('#turn-elapsed'), true);
  await sendPrompt(page, 'run forever');
  await waitText(page, '.msg-agent', 'working'); // the agent's last word: it stays silent from here
  await page.waitForFunction(elapsedAtLeast, 3);
  await shot(page, '22-turn-elapsed');

  // After a reload the time counts from the turn's start, not from the page's.
  await page.reload();
  await waitLive(page);
  await page.waitForFunction(elapsedAtLeast, 0);
  const seen = await page.evaluate(async (sid) => {
    const s = await (await fetch('/v1/sessions/' + encodeURIComponent(sid))).json();
    const m = /(\d+):(\d\d)$/.exec(document.getElementById('turn-elapsed').textContent);
    return { shown: Number(m[1]) * 60 + Number(m[2]), expected: (Date.now() - Date.parse(s.currentTurn.startedAt)) / 1000 };
  }, id);
  assert.ok(seen.expected >= 3, JSON.stringify(seen));
  assert.ok(seen.shown >= Math.floor(seen.expected) - 2 && seen.shown <= Math.ceil(seen.expected) + 1, JSON.stringify(seen));

  // The turn ends when the session closes; the time goes away with it.
  const res = await fetch(`${gw.base}/v1/sessions/${encodeURIComponent(id)}`, { method: 'DELETE' });
  assert.equal(res.status, 204);
  await page.waitForSelector('#turn-elapsed', { state: 'hidden' });
  await closePage(page);
});

test('an agent that fails to start: the error is shown and the typed prompt is kept', { timeout: 60000 }, async () => {
  // A gateway of its own whose default agent exits at once.
  const bin = await buildGateway(tmp);
  const broken = await startGateway(bin, ['--agent', 'broken=/bin/false', '--default-agent', 'broken']);
  try {
    const page = await openPage(ctx, broken.base + '/');
    await page.waitForSelector('#prompt-input:not([disabled])');
    await sendPrompt(page, 'keep this prompt');
    await page.waitForSelector('.toast[data-kind="error"]');
    assert.match(await page.textContent('.toast[data-kind="error"]'), /Could not start a session with broken: .+/);
    await page.waitForSelector('#prompt-input:not([disabled])');
    assert.equal(await page.inputValue('#prompt-input'), 'keep this prompt');
    assert.equal(await page.evaluate(() => location.hash), '');
    assert.equal(await page.isHidden('#empty-starting'), true);

    // The dialog shows the gateway's error in place and offers Create again.
    await page.click('#new-session');
    await page.waitForSelector('#new-dialog[open]');
    await page.click('#new-create');
    await page.waitForSelector('#new-error:not([hidden])');
    assert.match(await page.textContent('#new-error'), /\S/);
    assert.equal(await page.isVisible('#new-create'), true);
    assert.equal(await page.isHidden('#new-starting'), true);
    await shot(page, '23-agent-failed-to-start');
    // Chromium logs each failed request itself; anything else logged is a defect.
    const problems = page.problems();
    assert.deepEqual(problems.filter((p) => !/Failed to load resource: .*status of 502/.test(p)), []);
    assert.equal(problems.length, 2);
    await page.close();
  } finally {
    await broken.stop();
  }
});

// A detached session (stored, agent stopped; docs/rest.md) cannot be produced by this gateway's flags (the
// registry's detach runs in the store modes only), so the session's REST answers and socket are crafted here:
// the UI must badge it, keep the composer enabled, and explain a 409 session_not_resumable.
test('a detached session: badge and tooltip, composer enabled, 409 session_not_resumable explained (crafted)', { timeout: 60000 }, async () => {
  const page = await openPage(ctx);
  const created = await (await fetch(gw.base + '/v1/sessions', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ permissionPolicy: 'ask' }),
  })).json();
  const id = created.id;
  const detached = (s) => (s.id === id ? { ...s, status: 'detached', statusReason: 'idle' } : s);
  await page.route(`**/v1/sessions/${id}`, async (route) => {
    if (route.request().method() !== 'GET') return route.continue();
    const real = await route.fetch();
    await route.fulfill({ response: real, json: detached(await real.json()) });
  });
  await page.route(/\/v1\/sessions$/, async (route) => {
    if (route.request().method() !== 'GET') return route.continue();
    const real = await route.fetch();
    const body = await real.json();
    await route.fulfill({ response: real, json: { ...body, sessions: (body.sessions || []).map(detached) } });
  });
  await page.routeWebSocket(/\/v1\/sessions\/[^/]+\/ws/, (ws) => {
    ws.onMessage(() => {});
    ws.send(JSON.stringify({ jsonrpc: '2.0', method: '_gateway/replay_complete', params: { lastSeq: 0 } }));
  });
  const prompts = [];
  await page.route('**/prompt', async (route) => {
    prompts.push(route.request().postData());
    await route.fulfill({
      status: 409, contentType: 'application/problem+json',
      body: JSON.stringify({ type: 'about:blank', title: 'Conflict', status: 409, code: 'session_not_resumable', detail: 'the agent can neither load nor resume sessions' }),
    });
  });

  await page.goto(`${gw.base}/#/s/${encodeURIComponent(id)}`);
  await waitLive(page);
  const tip = 'agent stopped; your next prompt restarts it';
  await page.waitForSelector('#session-status[data-status="detached"]');
  assert.equal(await page.textContent('#session-status'), 'detached');
  assert.equal(await page.getAttribute('#session-status', 'title'), tip);
  const item = `.session-item[data-session-id="${id}"]`;
  await page.waitForSelector(`${item}[data-status="detached"] .status-badge[data-status="detached"]`);
  assert.equal(await page.getAttribute(`${item} .status-badge`, 'title'), tip);
  assert.equal(await page.getAttribute(`${item} .session-dot`, 'data-status'), 'detached');
  // The composer takes a prompt: it is what re-attaches the session.
  assert.equal(await page.isDisabled('#prompt-input'), false);
  await page.fill('#prompt-input', 'wake up');
  assert.equal(await page.isDisabled('#send'), false);
  await shot(page, '60-detached');

  await page.press('#prompt-input', 'Enter');
  await page.waitForSelector('#session-problem');
  assert.match(await page.textContent('#session-problem'), /cannot be restarted/);
  await waitText(page, '.toast', 'cannot be restarted');
  assert.equal(prompts.length, 1);
  assert.equal(await page.inputValue('#prompt-input'), 'wake up', 'the refused prompt is kept');
  assert.equal(await page.getAttribute('#session-status', 'data-status'), 'detached');
  await shot(page, '61-not-resumable');
  assert.deepEqual(page.problems().filter((p) => !/Failed to load resource: .*status of 409/.test(p)), []);
  await page.close();
  await fetch(`${gw.base}/v1/sessions/${id}`, { method: 'DELETE' });
});
