// The web UI with a real agent from npm: claude-agent-acp (pinned in package.json), offline: its model endpoint is
// a loopback fake (fakemodel.mjs) that answers "ok", or runs a scripted Bash tool call. It offers its modes twice,
// as the legacy `modes` and as a config option of category `mode`; the UI must show one Mode selector.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { homedir } from 'node:os';
import {
  buildGateway, startGateway, launchBrowser, makeTmp, cleanup, openPage, shot, sendPrompt, waitTurnsEnded,
  waitText, waitLive, createSession,
} from './harness.mjs';
import { startFakeModel } from './fakemodel.mjs';

const agentBin = path.resolve(import.meta.dirname, 'node_modules', '.bin', 'claude-agent-acp');

let tmp;
let gw;
let ctx;
let model;

// The Bash call of the terminal test: colours, a bold, a second line, and a title change that must not leak.
const COLOUR_DEMO = "printf '\\033]0;pwned-title\\007\\033[31mred\\033[0m \\033[1;32mgreen\\033[0m\\nline two\\n'";
let releaseAnswer;
const answerGate = new Promise((r) => { releaseAnswer = r; });

before(async () => {
  assert.ok(existsSync(agentBin), 'claude-agent-acp is not installed: run npm ci in e2e/');
  model = await startFakeModel([{
    trigger: 'run the colour demo', tool: 'Bash', input: { command: COLOUR_DEMO, description: 'Print colours' },
    answer: 'The colours were printed.', gate: answerGate,
  }]);
  // Outside /tmp: the agent may write /tmp only while no gateway file or workspace lies inside it (a confined
  // grant that holds one is split around it, and then nothing new can be made in /tmp itself).
  tmp = makeTmp(path.join(homedir(), '.cache', 'acp-gateway-e2e'));
  const home = path.join(tmp, 'home');
  const proj = path.join(tmp, 'proj');
  mkdirSync(home);
  mkdirSync(proj);
  const agents = path.join(tmp, 'agents.json');
  writeFileSync(agents, JSON.stringify({
    agent_servers: {
      claude: {
        command: agentBin,
        // Claude Code's Bash tool writes under /tmp whatever TMPDIR says (docs/agents.md, Confinement).
        confine: { write: ['/tmp'] },
        env: {
          HOME: home,
          IS_SANDBOX: '1', // claude refuses its own permission bypass as root otherwise
          ANTHROPIC_BASE_URL: model.url,
          ANTHROPIC_API_KEY: 'sk-ant-fake-key-for-the-loopback-model',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_TELEMETRY: '1',
          DISABLE_AUTOUPDATER: '1',
        },
      },
    },
  }));
  const bin = await buildGateway(tmp);
  gw = await startGateway(bin, ['--agents', agents, '--default-agent', 'claude', '--workdir', proj]);
  ctx = await launchBrowser(tmp);
}, { timeout: 240000 });

after(async () => {
  if (ctx) await ctx.close().catch(() => {});
  if (gw) await gw.stop();
  releaseAnswer();
  if (model) await model.close();
  cleanup(tmp);
});

async function closePage(page) {
  assert.deepEqual(page.problems(), [], 'the page logged errors');
  await page.close();
}

/** Labels of the session bar's selectors, in order. */
function selectorLabels(page) {
  return page.$$eval('#selectors .selector-label', (els) => els.map((e) => e.textContent));
}

/** Records every text #id shows from now on (the starting state may be brief). */
function recordTexts(page, id) {
  return page.evaluate((elId) => {
    const el = document.getElementById(elId);
    window.__seen = [];
    if (!el) return;
    new MutationObserver(() => { if (!el.hidden) window.__seen.push(el.textContent); })
      .observe(el, { childList: true, subtree: true, characterData: true, attributes: true });
  }, id);
}

test('claude-agent-acp: the session bar shows one Mode selector (config options supersede modes)', { timeout: 120000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await page.waitForSelector('.agent-item[data-agent="claude"]');
  await page.click('#new-session');
  await page.waitForSelector('#new-dialog[open]');
  assert.equal(await page.inputValue('#new-agent'), 'claude');
  await recordTexts(page, 'new-starting');
  await page.click('#new-create');
  await page.waitForSelector('#new-dialog:not([open])', { state: 'attached', timeout: 60000 });
  await waitLive(page);
  await page.waitForSelector('#toolbar:not([hidden]) select[data-config-id="model"]');

  const labels = await selectorLabels(page);
  assert.deepEqual(labels.filter((l) => l === 'Mode'), ['Mode'], `selectors: ${labels}`);
  assert.ok(labels.includes('Model'), `selectors: ${labels}`);
  assert.equal(await page.$('#mode-select'), null, 'the legacy modes selector is hidden');
  const seen = await page.evaluate(() => window.__seen);
  assert.ok(seen.some((t) => /^Starting claude… \d+\.\d s$/.test(t)), `the dialog said: ${JSON.stringify(seen)}`);
  await shot(page, '30-claude-selectors');

  // The Mode config option switches the agent's mode.
  await page.selectOption('select[data-config-id="mode"]', 'plan');
  await page.waitForFunction(() => {
    const s = document.querySelector('select[data-config-id="mode"]');
    return s && !s.disabled && s.value === 'plan';
  });
  await page.reload();
  await waitLive(page);
  await page.waitForFunction(() => document.querySelector('select[data-config-id="mode"]')?.value === 'plan');
  assert.deepEqual((await selectorLabels(page)).filter((l) => l === 'Mode'), ['Mode']);
  await closePage(page);
});

test('claude-agent-acp: a prompt in the empty state starts a session and runs the turn', { timeout: 120000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await page.waitForSelector('#prompt-input:not([disabled])');
  await recordTexts(page, 'empty-starting');
  await sendPrompt(page, '/context');
  await page.waitForFunction(() => /^#\/s\//.test(location.hash), null, { timeout: 60000 });
  await waitLive(page);
  await waitText(page, '.msg-agent', 'Context Usage');
  assert.deepEqual(await waitTurnsEnded(page, 1), ['end_turn']);
  assert.match(await page.textContent('#session-meta'), /claude/);
  const seen = await page.evaluate(() => window.__seen);
  assert.ok(seen.some((t) => /^Starting claude… \d+\.\d s$/.test(t)), `the empty state said: ${JSON.stringify(seen)}`);
  await shot(page, '31-claude-context');
  await closePage(page);
});

test('claude-agent-acp: prompts typed while the session starts are queued and both go once it is up', { timeout: 120000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  // The start-up is held until the second prompt is queued, so it surely falls in it; then the agent starts for real.
  let release;
  const held = new Promise((r) => { release = r; });
  await page.route(/\/v1\/sessions$/, async (route) => {
    if (route.request().method() === 'POST') await held;
    await route.continue();
  });
  await page.waitForSelector('#prompt-input:not([disabled])');
  await sendPrompt(page, 'say hello');
  await page.waitForSelector('#empty-starting:not([hidden])');
  await sendPrompt(page, 'then say goodbye');
  await page.waitForFunction(() => document.querySelectorAll('#queue .queue-item').length === 2);
  assert.match(await page.textContent('#queue'), /Sends when claude is ready/);
  release();
  await page.waitForFunction(() => /^#\/s\//.test(location.hash), null, { timeout: 60000 });
  await waitLive(page);
  assert.deepEqual(await waitTurnsEnded(page, 2), ['end_turn', 'end_turn']);
  const users = await page.$$eval('.msg-user', (els) => els.map((e) => e.textContent.trim().replace(/^You/, '').trim()));
  assert.deepEqual(users, ['say hello', 'then say goodbye']);
  await page.waitForSelector('#queue', { state: 'hidden' });
  await closePage(page);
});

test('claude-agent-acp: a Bash call\'s output shows live in the terminal pane, coloured, its title escape neutralised', { timeout: 120000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await page.waitForSelector('.agent-item[data-agent="claude"]');
  await createSession(page, { policy: 'approve-all' });
  await sendPrompt(page, 'please run the colour demo');
  // The model's answer after the tool result is held back: the output must be on screen while the turn runs.
  const pane = '.tool-card[data-kind="execute"] .terminal';
  await waitText(page, `${pane} .ansi-fg-1`, 'red');
  assert.equal(await page.getAttribute('#composer', 'data-running'), 'true', 'the turn is still running');
  // Output may come in more than one update, each rendered on its own animation frame.
  await page.waitForFunction((sel) => [...document.querySelectorAll(sel)].some((e) => e.textContent === 'line two'),
    `${pane} .term-line`);
  assert.deepEqual(await page.$$eval(`${pane} .term-line`, (es) => es.map((e) => e.textContent)), ['red green', 'line two']);
  assert.equal(await page.textContent(`${pane} .ansi-fg-2.ansi-bold`), 'green');
  assert.equal(await page.$eval(`${pane} .ansi-fg-1`, (e) => getComputedStyle(e).color), 'rgb(248, 113, 113)');
  assert.doesNotMatch(await page.textContent(`${pane} .terminal-out`), /pwned|\x1b|\x07/);
  await page.waitForSelector(`${pane} .terminal-status[data-state="ok"]`);
  assert.equal(await page.textContent(`${pane} .terminal-status`), 'exit 0');
  await shot(page, '32-claude-terminal');
  releaseAnswer();
  await waitText(page, '.msg-agent', 'The colours were printed.');
  assert.deepEqual(await waitTurnsEnded(page, 1), ['end_turn']);
  assert.doesNotMatch(await page.title(), /pwned/);
  await closePage(page);
});
