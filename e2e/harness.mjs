// Test harness: builds and starts a real gateway, launches Debian's chromium through playwright-core, and offers
// small helpers that wait for DOM states (never for fixed times).

import { spawn, execFile } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '..');
export const outDir = path.join(here, 'test-output');

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--disable-quic', '--no-first-run',
];

export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

let builtBinary = null;

/** Builds ./cmd/gateway once per test process into a temp dir (or uses $GATEWAY_BIN); returns the binary's path. */
export async function buildGateway(tmp) {
  if (builtBinary) return builtBinary;
  if (process.env.GATEWAY_BIN) {
    // A prebuilt binary (it embeds web/, so build it from the tree under test).
    builtBinary = path.resolve(process.env.GATEWAY_BIN);
    return builtBinary;
  }
  const bin = path.join(tmp, 'gateway');
  await promisify(execFile)('go', ['build', '-o', bin, './cmd/gateway'], { cwd: repoRoot, maxBuffer: 16 << 20 });
  builtBinary = bin;
  return bin;
}

/**
 * Builds ./internal/testagent (a real ACP agent over stdio whose -mode picks how its turns misbehave) into tmp,
 * or uses $TESTAGENT_BIN; returns the binary's path.
 */
export async function buildTestAgent(tmp) {
  if (process.env.TESTAGENT_BIN) return path.resolve(process.env.TESTAGENT_BIN); // prebuilt by `npm test`
  const bin = path.join(tmp, 'testagent');
  await promisify(execFile)('go', ['build', '-o', bin, './internal/testagent'], { cwd: repoRoot, maxBuffer: 16 << 20 });
  return bin;
}

/** Starts the gateway with extra flags and waits for GET /healthz to answer 200. */
export async function startGateway(bin, extraArgs = []) {
  const port = await freePort();
  const addr = `127.0.0.1:${port}`;
  const proc = spawn(bin, ['--addr', addr, '--demo-delay', '150ms', ...extraArgs], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const keep = (d) => { log = (log + d.toString()).slice(-20000); };
  proc.stdout.on('data', keep);
  proc.stderr.on('data', keep);
  let exited = null;
  proc.on('exit', (code, sig) => { exited = { code, sig }; });
  const base = `http://${addr}`;
  const deadline = Date.now() + 30000;
  for (;;) {
    if (exited) throw new Error(`gateway exited early (${JSON.stringify(exited)}):\n${log}`);
    try {
      const r = await fetch(base + '/healthz');
      if (r.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`gateway did not become healthy:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 50)); // polling interval, not an assertion
  }
  return {
    base,
    proc,
    log: () => log,
    async stop() {
      if (exited) return;
      const done = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 10000);
      await done;
      clearTimeout(t);
    },
  };
}

/** Launches chromium with a fresh user-data-dir. */
export async function launchBrowser(tmp, options = {}) {
  const userDataDir = mkdtempSync(path.join(tmp, 'profile-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 860 },
    ...options,
  });
  return context;
}

/** A fresh directory under base (the system's temporary directory by default). */
export function makeTmp(base = tmpdir()) {
  mkdirSync(base, { recursive: true });
  return mkdtempSync(path.join(base, 'acpgw-e2e-'));
}

export function cleanup(dir) {
  if (dir && existsSync(dir)) rmSync(dir, { recursive: true, force: true });
}

export function ensureOutDir() {
  mkdirSync(outDir, { recursive: true });
}

/**
 * Opens a page that records console errors, page errors and failed requests. `problems()` lists them;
 * tests assert it is empty.
 */
export async function openPage(context, url) {
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  const problems = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console.error: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.problems = () => problems.slice();
  if (url) await page.goto(url);
  return page;
}

export async function shot(page, name) {
  ensureOutDir();
  await page.screenshot({ path: path.join(outDir, name + '.png') });
}

/** Creates a session through the UI's dialog and waits for its socket to be live; returns its id. */
export async function createSession(page, { policy = 'ask', cwd = '', agent = '' } = {}) {
  if (await page.isVisible('#menu-toggle')) {
    // Narrow screen: the sidebar is behind the menu button.
    await page.click('#menu-toggle');
    await page.waitForSelector('#sidebar', { state: 'visible' });
  }
  await page.click('#new-session');
  await page.waitForSelector('#new-dialog[open]');
  if (agent) await page.selectOption('#new-agent', agent);
  await page.selectOption('#new-policy', policy);
  if (cwd) await page.fill('#new-cwd', cwd);
  await page.click('#new-create');
  await page.waitForSelector('#new-dialog:not([open])', { state: 'attached' });
  await page.waitForFunction(() => /^#\/s\//.test(location.hash));
  await waitLive(page);
  const hash = await page.evaluate(() => location.hash);
  return decodeURIComponent(hash.replace(/^#\/s\//, ''));
}

export async function waitLive(page) {
  await page.waitForSelector('#conn-pill[data-state="live"]');
}

export async function sendPrompt(page, text) {
  await page.fill('#prompt-input', text);
  await page.press('#prompt-input', 'Enter');
}

/** Waits until `n` turns have ended; returns their stop reasons. */
export async function waitTurnsEnded(page, n) {
  await page.waitForFunction((k) => document.querySelectorAll('.turn-end').length >= k, n);
  return page.$$eval('.turn-end', (els) => els.map((e) => e.dataset.stopReason));
}

export async function waitText(page, selector, text) {
  await page.waitForFunction(([sel, t]) => {
    return [...document.querySelectorAll(sel)].some((e) => e.textContent.includes(t));
  }, [selector, text]);
}

export function count(haystack, needle) {
  let n = 0;
  let i = haystack.indexOf(needle);
  while (i >= 0) { n++; i = haystack.indexOf(needle, i + needle.length); }
  return n;
}
