// The session list's markers and the browser's notifications: a session where a permission or a question waits
// is marked "needs you" (and counted in the tab's title), one where a turn ended since this browser last showed it
// is marked unread, and a person who turned notifications on is told when a session they are not looking at waits
// for them. A real gateway with the built-in demo agent; the second session is driven over REST, as another tab or
// a script would.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildGateway, startGateway, launchBrowser, makeTmp, cleanup, openPage, shot, createSession, waitLive,
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

class MemoryStorage {
  constructor() { this.m = new Map(); }
  getItem(k) { return this.m.has(k) ? this.m.get(k) : null; }
  setItem(k, v) { this.m.set(k, String(v)); }
}

test('markers: unread is a turn ended after the last one shown, and a first sight counts as read', async () => {
  const { SeenTurns, waitingRequests } = await import('../web/static/js/markers.js');
  const store = new MemoryStorage();
  const seen = new SeenTurns(store, 'ann');
  const s = { id: 's1', lastTurn: { turnId: 't1' } };
  assert.equal(seen.unread(s), false, 'first sight');
  assert.equal(seen.unread({ id: 's1', lastTurn: { turnId: 't2' } }), true);
  seen.see({ id: 's1', lastTurn: { turnId: 't2' } });
  assert.equal(seen.unread({ id: 's1', lastTurn: { turnId: 't2' } }), false);
  // Kept per principal across a reload.
  assert.equal(new SeenTurns(store, 'ann').unread({ id: 's1', lastTurn: { turnId: 't3' } }), true);
  assert.equal(new SeenTurns(store, 'bob').unread({ id: 's1', lastTurn: { turnId: 't3' } }), false);
  store.setItem('acpgw.seenTurns.ann', '{not json');
  assert.equal(new SeenTurns(store, 'ann').unread({ id: 's1', lastTurn: { turnId: 't3' } }), false, 'damaged entry starts over');
  assert.deepEqual(waitingRequests({
    pendingPermissions: [{ id: 'p1', toolCall: { title: 'Edit notes.md' } }],
    pendingElicitations: [{ id: 'e1', message: 'Your name?' }],
  }).map((r) => [r.id, r.kind, r.title]), [['p1', 'permission', 'Edit notes.md'], ['e1', 'question', 'Your name?']]);
});

test('markers: each new waiting request is announced once, not on the first look and not where the person is looking', async () => {
  const { WaitNotifier } = await import('../web/static/js/markers.js');
  const shown = [];
  class FakeNotification {
    static permission = 'default';
    static async requestPermission() { FakeNotification.permission = 'granted'; return 'granted'; }
    constructor(title, opts) { shown.push([title, opts.body, opts.tag]); }
    close() {}
  }
  const n = new WaitNotifier({ win: { Notification: FakeNotification, focus() {} }, storage: new MemoryStorage() });
  assert.equal(n.on, false);
  const a = { id: 'a', agent: 'demo', title: 'A', pendingPermissions: [{ id: 'p0', toolCall: { title: 'Old' } }] };
  n.update([a], { current: '' });
  assert.equal(await n.enable(), 'granted');
  assert.equal(n.on, true);
  const b = { id: 'b', agent: 'demo', title: 'B', pendingPermissions: [{ id: 'p1', toolCall: { title: 'Edit notes.md' } }] };
  n.update([a, b], { current: 'a', visible: true });
  n.update([a, b], { current: 'a', visible: true });
  assert.deepEqual(shown, [['demo is waiting for you', 'B: permission for Edit notes.md', 'p1']], 'old p0 is not announced, p1 once');
  const a2 = { ...a, pendingElicitations: [{ id: 'e1', message: 'Name?' }] };
  n.update([a2, b], { current: 'a', visible: true });
  assert.equal(shown.length, 1, 'the session on screen is not announced');
  const a3 = { ...a, pendingElicitations: [{ id: 'e2', message: 'Age?' }] };
  n.update([a3, b], { current: 'a', visible: false });
  assert.deepEqual(shown[1], ['demo is waiting for you', 'A: a question Age?', 'e2'], 'a hidden tab is told');
  n.disable();
  n.update([{ ...b, pendingPermissions: [{ id: 'p9', toolCall: {} }] }], {});
  assert.equal(shown.length, 2, 'off means off');
});

async function api(method, path, body) {
  const r = await fetch(gw.base + path, {
    method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  assert.ok(r.ok, `${method} ${path}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

const item = (id) => `.session-item[data-session-id="${id}"]`;

test('markers: a session waiting for you is marked and announced; a turn ended there is unread until opened', { timeout: 120000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  // The browser's Notification, replaced by one that records: headless Chromium shows none.
  await page.evaluate(() => {
    window.__shown = [];
    class Recording {
      static permission = 'granted';
      static async requestPermission() { return 'granted'; }
      constructor(title, opts) { window.__shown.push({ title, body: opts.body }); }
      close() {}
    }
    window.Notification = Recording;
  });
  const a = await createSession(page);
  await page.click('#notify-toggle');
  await page.waitForSelector('#notify-toggle[aria-pressed="true"]');

  // A second session, prompted over REST: its permission request waits for someone.
  const b = await api('POST', '/v1/sessions', { agent: 'demo' });
  await api('POST', `/v1/sessions/${b.id}/prompt`, { prompt: [{ type: 'text', text: 'change the notes' }] });
  await page.waitForSelector(`${item(b.id)}[data-needs-you="true"] .needs-you`, { timeout: 30000 });
  assert.equal(await page.textContent(`${item(b.id)} .needs-you`), '1');
  await page.waitForFunction(() => document.title.startsWith('(1) '));
  await page.waitForFunction(() => window.__shown.length > 0);
  const shown = await page.evaluate(() => window.__shown);
  assert.equal(shown.length, 1);
  assert.equal(shown[0].title, 'demo is waiting for you');
  assert.match(shown[0].body, /permission for Edit notes\.md/);
  assert.equal(await page.$(`${item(a)}[data-needs-you]`), null, 'the open session waits for nobody');
  await shot(page, '70-markers-needs-you');

  // Answered elsewhere: the turn ends, the marker goes, and b is unread here.
  const perms = await api('GET', `/v1/sessions/${b.id}/permissions`);
  const pid = (perms.permissions || perms)[0].id;
  await api('POST', `/v1/sessions/${b.id}/permissions/${pid}`, { optionId: 'allow-once' });
  await page.waitForSelector(`${item(b.id)}[data-unread="true"]:not([data-needs-you])`, { timeout: 30000 });
  await page.waitForFunction(() => !document.title.startsWith('('));
  assert.equal(await page.$(`${item(a)}[data-unread]`), null);

  // Opening b reads it; a turn ending in a meanwhile leaves a unread, also after a reload.
  await page.click(`${item(b.id)}`);
  await waitLive(page);
  await page.waitForSelector(`${item(b.id)}:not([data-unread])`);
  await api('POST', `/v1/sessions/${a}/prompt?wait=true`, { prompt: [{ type: 'text', text: 'quick' }] });
  await page.waitForSelector(`${item(a)}[data-unread="true"]`, { timeout: 30000 });
  await page.reload();
  await page.waitForSelector(`${item(a)}[data-unread="true"]`);
  assert.equal(await page.$(`${item(b.id)}[data-unread]`), null);
  assert.deepEqual(page.problems(), [], 'the page logged errors');
  await page.close();
});
