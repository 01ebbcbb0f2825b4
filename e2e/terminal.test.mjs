// The terminal pane of tool cards, driven by crafted frames: REST goes to a real gateway (demo agent), the
// session's WebSocket is answered by the test, so the agent's `_meta.terminal_*` fields and the gateway's
// `_gateway/terminal_*` frames can be streamed exactly, including hostile escape sequences.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateway, startGateway, launchBrowser, makeTmp, cleanup, openPage, shot, waitLive, waitText } from './harness.mjs';

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

const E = 'epoch-term';

function update(sessionId, seq, upd) {
  return JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId, update: upd, _meta: { gateway: { seq, epoch: E, turnId: 't1' } } } });
}

function note(seq, method, params) {
  return JSON.stringify({ jsonrpc: '2.0', method, params: { ...params, _meta: { gateway: { seq, epoch: E, turnId: 't1' } } } });
}

const pane = (id) => `.terminal[data-terminal-id="${id}"]`;

test('terminal pane: streamed output with ANSI styles, neutralised escapes, progress lines, bounds, copy', { timeout: 90000 }, async () => {
  const page = await openPage(ctx);
  const created = await (await fetch(gw.base + '/v1/sessions', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ permissionPolicy: 'ask' }),
  })).json();
  const id = created.id;
  let sock = null;
  let seq = 0;
  const send = (f) => sock.send(f);
  await page.routeWebSocket(/\/v1\/sessions\/[^/]+\/ws/, (ws) => {
    sock = ws;
    ws.onMessage(() => {});
    // claude-agent-acp's shapes: terminal_info on the tool_call, terminal_output on an update, terminal_exit last.
    ws.send(update(id, ++seq, {
      sessionUpdate: 'tool_call', toolCallId: 'toolu_1', title: 'printf colours', kind: 'execute', status: 'in_progress',
      rawInput: { command: 'printf colours' }, content: [{ type: 'terminal', terminalId: 'toolu_1' }],
      _meta: { claudeCode: { toolName: 'Bash' }, terminal_info: { terminal_id: 'toolu_1' } },
    }));
    ws.send(update(id, ++seq, {
      sessionUpdate: 'tool_call_update', toolCallId: 'toolu_1',
      _meta: { terminal_output: { terminal_id: 'toolu_1', data: '\x1b]0;pwned title\x07\x1b[31mred\x1b[0m <script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">\n' } },
    }));
    ws.send(JSON.stringify({ jsonrpc: '2.0', method: '_gateway/replay_complete', params: { lastSeq: seq } }));
  });

  await page.goto(`${gw.base}/#/s/${encodeURIComponent(id)}`);
  await waitLive(page);
  const card = '.tool-card[data-tool-call-id="toolu_1"]';
  await waitText(page, `${card} ${pane('toolu_1')} .ansi-fg-1`, 'red');
  assert.match(await page.textContent(`${card} .terminal-head`), /\$ printf colours/);

  // Live output streams into the same pane: a \r progress line, a screen clear and cursor moves (dropped),
  // 256-colour and truecolor, a title change split across two updates.
  const chunks = ['10%\r50%\r', '100%\n\x1b[2J\x1b[1;1H\x1b[5Aafter clear\n', '\x1b[38;5;208morange\x1b[0m \x1b[48;2;1;2;3;1mtrue\x1b[0m\n',
    'a\x1b]2;split ', 'title\x1b\\b\n'];
  for (const data of chunks) {
    send(update(id, ++seq, { sessionUpdate: 'tool_call_update', toolCallId: 'toolu_1', _meta: { terminal_output: { terminal_id: 'toolu_1', data } } }));
  }
  send(update(id, ++seq, {
    sessionUpdate: 'tool_call_update', toolCallId: 'toolu_1', status: 'completed', rawOutput: 'the whole output again',
    content: [{ type: 'terminal', terminalId: 'toolu_1' }],
    _meta: { claudeCode: { toolName: 'Bash' }, terminal_exit: { terminal_id: 'toolu_1', exit_code: 0, signal: null } },
  }));
  await page.waitForSelector(`${card}[data-status="completed"] ${pane('toolu_1')} .terminal-status[data-state="ok"]`);
  // The pane renders on the next animation frame (term.js), the status at once: wait for the last line.
  await page.waitForFunction((sel) => [...document.querySelectorAll(sel)].some((e) => e.textContent === 'ab'),
    `${card} ${pane('toolu_1')} .term-line`);
  const lines = await page.$$eval(`${card} ${pane('toolu_1')} .term-line`, (es) => es.map((e) => e.textContent));
  assert.deepEqual(lines, [
    'red <script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">', '100%', 'after clear', 'orange true', 'ab', '',
  ]);
  assert.equal(await page.textContent(`${card} .terminal-status`), 'exit 0');
  assert.equal(await page.$eval(`${card} .term-line:nth-child(4) span`, (e) => getComputedStyle(e).color), 'rgb(255, 135, 0)');
  assert.deepEqual(await page.$eval(`${card} .term-line:nth-child(4) span:last-child`, (e) => [getComputedStyle(e).backgroundColor, e.className]),
    ['rgb(1, 2, 3)', 'ansi-bold']);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.locator('#transcript script, #transcript img:not(.content-image)').count(), 0);
  assert.doesNotMatch(await page.textContent('#transcript'), /title|\x1b/);
  assert.doesNotMatch(await page.title(), /pwned|split/);

  // The copy button copies the plain text.
  await page.evaluate(() => { navigator.clipboard.writeText = async (t) => { window.__copied = t; }; });
  await page.click(`${card} .terminal-copy`);
  await page.waitForFunction(() => typeof window.__copied === 'string');
  assert.equal(await page.evaluate(() => window.__copied),
    'red <script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">\n100%\nafter clear\norange true\nab');
  await waitText(page, `${card} .terminal-copy`, 'Copied');

  // A gateway-served terminal: output may come before the card names the terminal; the exit frame ends it.
  send(note(++seq, '_gateway/terminal_output', { terminalId: 'gt-1', data: 'early \x1b[1mbold\x1b[22m\n' }));
  send(update(id, ++seq, {
    sessionUpdate: 'tool_call', toolCallId: 'gw_call', title: 'make test', kind: 'execute', status: 'in_progress',
    rawInput: { command: 'make', args: ['test'] }, content: [{ type: 'terminal', terminalId: 'gt-1' }],
  }));
  const many = Array.from({ length: 2500 }, (_, i) => `line ${i}`).join('\n') + '\n';
  send(note(++seq, '_gateway/terminal_output', { terminalId: 'gt-1', data: many }));
  send(note(++seq, '_gateway/terminal_exit', { terminalId: 'gt-1', exitCode: null, signal: 'SIGTERM' }));
  const gwCard = '.tool-card[data-tool-call-id="gw_call"]';
  await page.waitForSelector(`${gwCard} ${pane('gt-1')} .terminal-status[data-state="failed"]`);
  assert.match(await page.textContent(`${gwCard} .terminal-head`), /\$ make test/);
  assert.equal(await page.textContent(`${gwCard} .terminal-status`), 'killed by SIGTERM');
  // Scroll-back keeps the last 2 000 lines (the last one is the empty line after the final \n).
  await page.waitForSelector(`${gwCard} ${pane('gt-1')}[data-lines="2000"]`);
  assert.equal(await page.locator(`${gwCard} .term-line`).count(), 2000);
  assert.equal(await page.textContent(`${gwCard} .term-line:first-child`), 'line 501');
  assert.equal(await page.textContent(`${gwCard} .term-line:nth-last-child(2)`), 'line 2499');
  const out = `${gwCard} .terminal-out`;
  assert.ok(await page.$eval(out, (e) => e.scrollTop > 0 && e.scrollTop + e.clientHeight >= e.scrollHeight - 2), 'the pane follows the output');

  // Past its log budget a terminal's frames stop with a truncated note; at its end the tail follows, its first
  // frame truncated too (the same gap): the pane says once that output is missing, then shows the latest.
  send(update(id, ++seq, {
    sessionUpdate: 'tool_call', toolCallId: 'gw_big', title: 'yes', kind: 'execute', status: 'in_progress',
    content: [{ type: 'terminal', terminalId: 'gt-2' }],
  }));
  send(note(++seq, '_gateway/terminal_output', { terminalId: 'gt-2', data: 'first\n' }));
  send(note(++seq, '_gateway/terminal_output', { terminalId: 'gt-2', data: '', truncated: true }));
  send(note(++seq, '_gateway/terminal_output', { terminalId: 'gt-2', data: 'tail', truncated: true }));
  send(note(++seq, '_gateway/terminal_output', { terminalId: 'gt-2', data: ' end\n' }));
  send(note(++seq, '_gateway/terminal_exit', { terminalId: 'gt-2', exitCode: 0, signal: null }));
  const bigCard = '.tool-card[data-tool-call-id="gw_big"]';
  await page.waitForSelector(`${bigCard} ${pane('gt-2')} .terminal-status[data-state="ok"]`);
  // The status shows at once, the lines on the next animation frame: wait for the last one.
  await page.waitForFunction((sel) => [...document.querySelectorAll(sel)].some((e) => e.textContent === 'tail end'),
    `${bigCard} .term-line`);
  assert.deepEqual(await page.$$eval(`${bigCard} .term-line`, (es) => es.map((e) => e.textContent)),
    ['first', '', '[output not kept]', 'tail end', '']);
  await shot(page, '40-terminal-pane');
  assert.deepEqual(page.problems(), [], 'the page logged errors');
  await page.close();
});

test('terminal pane: a resync renders the output kept in the snapshot', { timeout: 60000 }, async () => {
  const page = await openPage(ctx);
  const created = await (await fetch(gw.base + '/v1/sessions', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ permissionPolicy: 'ask' }),
  })).json();
  const id = created.id;
  const snapshot = {
    seq: 5,
    entries: [{
      kind: 'tool_call', turnId: 't1', toolCall: {
        toolCallId: 'toolu_9', title: 'ls', kind: 'execute', status: 'completed', content: [{ type: 'terminal', terminalId: 'toolu_9' }],
        _meta: { terminal_info: { terminal_id: 'toolu_9' }, terminal_output: { terminal_id: 'toolu_9', data: '\x1b[32mgo.mod\x1b[0m\nmain.go\n' }, terminal_exit: { terminal_id: 'toolu_9', exit_code: 2, signal: null } },
      },
    }],
  };
  await page.route(`**/v1/sessions/${id}`, async (route) => {
    const real = await route.fetch();
    const body = await real.json();
    await route.fulfill({ response: real, json: { ...body, epoch: E, lastSeq: 5, snapshot } });
  });
  let n = 0;
  await page.routeWebSocket(/\/v1\/sessions\/[^/]+\/ws/, (ws) => {
    ws.onMessage(() => {});
    if (++n === 1) ws.send(JSON.stringify({ jsonrpc: '2.0', method: '_gateway/resync_required', params: { reason: 'trimmed', earliestSeq: 3 } }));
    else ws.send(JSON.stringify({ jsonrpc: '2.0', method: '_gateway/replay_complete', params: { lastSeq: 5 } }));
  });
  await page.goto(`${gw.base}/#/s/${encodeURIComponent(id)}`);
  await waitLive(page);
  const p = `.tool-card[data-tool-call-id="toolu_9"] ${pane('toolu_9')}`;
  await waitText(page, `${p} .ansi-fg-2`, 'go.mod');
  assert.deepEqual(await page.$$eval(`${p} .term-line`, (es) => es.map((e) => e.textContent)), ['go.mod', 'main.go', '']);
  assert.equal(await page.textContent(`${p} .terminal-status`), 'exit 2');
  assert.deepEqual(page.problems(), [], 'the page logged errors');
  await page.close();
});
