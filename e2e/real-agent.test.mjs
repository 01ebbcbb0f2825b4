// The web UI with a real agent from npm: claude-agent-acp (pinned in package.json), offline like the conformance
// suite's: its model endpoint is a closed loopback port, so only locally handled commands (`/context`) answer.
// It offers its modes twice, as the legacy `modes` and as a config option of category `mode`; the UI must show
// one Mode selector.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  buildGateway, startGateway, launchBrowser, makeTmp, cleanup, openPage, shot, sendPrompt, waitTurnsEnded,
  waitText, waitLive,
} from './harness.mjs';

const agentBin = path.resolve(import.meta.dirname, 'node_modules', '.bin', 'claude-agent-acp');

let tmp;
let gw;
let ctx;

before(async () => {
  assert.ok(existsSync(agentBin), 'claude-agent-acp is not installed: run npm ci in e2e/');
  tmp = makeTmp();
  const home = path.join(tmp, 'home');
  const proj = path.join(tmp, 'proj');
  mkdirSync(home);
  mkdirSync(proj);
  const agents = path.join(tmp, 'agents.json');
  writeFileSync(agents, JSON.stringify({
    agent_servers: {
      claude: {
        command: agentBin,
        env: {
          HOME: home,
          IS_SANDBOX: '1', // claude refuses its own permission bypass as root otherwise
          ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
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
