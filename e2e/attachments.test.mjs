// Attachments in the composer: a real gateway with the repository's test agent in echo mode, which advertises
// image and embedded-context support (-init) and answers with what it received (type, mime type, byte length).
// Files are pasted, dropped and picked the way a browser delivers them (DataTransfer, the file input).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildGateway, buildTestAgent, startGateway, launchBrowser, makeTmp, cleanup, openPage, shot, createSession,
  sendPrompt, waitTurnsEnded, waitText, waitLive,
} from './harness.mjs';

let tmp;
let gw;
let ctx;

before(async () => {
  tmp = makeTmp();
  const bin = await buildGateway(tmp);
  const agent = await buildTestAgent(tmp);
  gw = await startGateway(bin, [
    '--agent', `echo=${agent} -mode echo -init echo`, // every promptCapability
    '--agent', `plain=${agent} -mode echo`, // none
    '--max-prompt-bytes', '400000', // under one image at the UI's cap, base64 included
  ]);
  ctx = await launchBrowser(tmp);
}, { timeout: 240000 });

after(async () => {
  if (ctx) await ctx.close().catch(() => {});
  if (gw) await gw.stop();
  cleanup(tmp);
});

const PNG_1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const PNG_BYTES = Buffer.from(PNG_1x1, 'base64').length;
const NOTES = 'line one\nline <two> é\n';

/** Delivers files to the composer as a paste (into the textarea) or a drop (onto the composer). */
function deliver(page, how, files) {
  return page.evaluate(([how, files]) => {
    const dt = new DataTransfer();
    for (const f of files) {
      const bytes = f.b64 !== undefined ? Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0)) : new Uint8Array(f.size).fill(f.fill ?? 65);
      dt.items.add(new File([f.text ?? bytes], f.name, { type: f.type }));
    }
    if (how === 'paste') {
      document.getElementById('prompt-input').dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
    } else {
      const composer = document.getElementById('composer');
      composer.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      composer.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }
  }, [how, files]);
}

const chipNames = (page, sel) => page.$$eval(`${sel} .attach-chip`, (es) => es.map((e) => `${e.dataset.kind}:${e.querySelector('.attach-name').textContent}`));

test('attachments: paste an image, drop and pick text files, remove one, send; the agent gets the blocks', { timeout: 90000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await page.waitForSelector('.agent-item[data-agent="echo"]');
  await createSession(page, { agent: 'echo' });
  await page.waitForSelector('#attach:not([hidden])');

  await deliver(page, 'paste', [{ name: 'dot.png', type: 'image/png', b64: PNG_1x1 }]);
  await page.waitForSelector('#attachments .attach-chip[data-kind="image"] img.attach-thumb[src^="data:image/png;base64,"]');
  await deliver(page, 'drop', [{ name: 'notes.txt', type: 'text/plain', text: NOTES }, { name: 'extra.md', type: 'text/markdown', text: '# x' }]);
  await page.setInputFiles('#attach-input', { name: 'picked.json', mimeType: 'application/json', buffer: Buffer.from('{"a":1}') });
  await page.waitForFunction(() => document.querySelectorAll('#attachments .attach-chip').length === 4);
  assert.deepEqual(await chipNames(page, '#attachments'), ['image:dot.png', 'file:notes.txt', 'file:extra.md', 'file:picked.json']);

  // Bad files are refused with a message saying why; nothing is attached for them.
  await deliver(page, 'paste', [{ name: 'huge.png', type: 'image/png', size: 600 * 1024 }]);
  await waitText(page, '#attach-error', '“huge.png” is 600 KB; an image can be at most 512 KB.');
  await deliver(page, 'drop', [{ name: 'logo.svg', type: 'image/svg+xml', text: '<svg/>' }, { name: 'a.bin', type: '', size: 10, fill: 0 }]);
  await waitText(page, '#attach-error', '“logo.svg” is image/svg+xml; images can be PNG, JPEG, GIF or WebP.');
  assert.match(await page.textContent('#attach-error'), /“a\.bin” is not a UTF-8 text file\./);
  assert.equal(await page.locator('#attachments .attach-chip').count(), 4);
  await shot(page, '41-attachments-tray');

  await page.click('#attachments button[aria-label="Remove extra.md"]');
  await page.waitForFunction(() => document.querySelectorAll('#attachments .attach-chip').length === 3);
  assert.equal(await page.isHidden('#attach-error'), true);

  // The prompt's 202 is held back until the turn has ended on the page, as happens with a fast agent.
  await page.route('**/prompt', async (route) => {
    const res = await route.fetch();
    await page.waitForSelector('.turn-end');
    await route.fulfill({ response: res });
  });
  await sendPrompt(page, 'look at these');
  await waitText(page, '.msg-agent', `image image/png ${PNG_BYTES} bytes`);
  const said = await page.textContent('.msg-agent');
  assert.match(said, /text 13 bytes/);
  assert.match(said, new RegExp(`resource file:///notes\\.txt text/plain ${Buffer.byteLength(NOTES)} bytes`));
  assert.match(said, /resource file:\/\/\/picked\.json application\/json 7 bytes/);
  assert.doesNotMatch(said, /extra\.md/);
  assert.deepEqual(await waitTurnsEnded(page, 1), ['end_turn']);
  // The tray empties once the gateway took the prompt (its 202). The turn ended before that: the composer must
  // not think it still runs.
  await page.waitForSelector('#attachments[hidden]', { state: 'attached' });
  assert.equal(await page.getAttribute('#composer', 'data-running'), 'false');
  assert.equal(await page.isHidden('#cancel-turn'), true);
  await page.unroute('**/prompt');

  // The transcript shows the user's attachments: a thumbnail and file chips; also after a reload.
  const userSel = '.msg-user .msg-attachments';
  const expectUser = async () => {
    await page.waitForSelector(`${userSel} .attach-chip[data-kind="image"] img.attach-thumb[src^="data:image/png;base64,"]`);
    assert.deepEqual(await chipNames(page, userSel), ['image:Image (image/png)', 'file:notes.txt', 'file:picked.json']);
    assert.equal(await page.textContent('.msg-user .plain-text'), 'look at these');
  };
  await expectUser();
  await shot(page, '42-attachments-sent');
  await page.reload();
  await waitLive(page);
  await expectUser();
  assert.deepEqual(page.problems(), [], 'the page logged errors');
  await page.close();
});

test('attachments: an agent without image or embedded-context support gets no attach button', { timeout: 60000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await page.waitForSelector('.agent-item[data-agent="plain"]');
  await createSession(page, { agent: 'plain' });
  await page.waitForSelector('#prompt-input:not([disabled])');
  assert.equal(await page.isHidden('#attach'), true);
  await deliver(page, 'paste', [{ name: 'dot.png', type: 'image/png', b64: PNG_1x1 }]);
  await waitText(page, '#attach-error', '“dot.png”: this agent does not accept images.');
  assert.equal(await page.locator('#attachments .attach-chip').count(), 0);
  await sendPrompt(page, 'hi');
  await waitText(page, '.msg-agent', 'text 2 bytes');
  assert.doesNotMatch(await page.textContent('.msg-agent'), /image/);
  assert.deepEqual(page.problems(), [], 'the page logged errors');
  await page.close();
});

test('attachments: a prompt the gateway refuses as too large keeps its text and attachments', { timeout: 60000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await page.waitForSelector('.agent-item[data-agent="echo"]');
  await createSession(page, { agent: 'echo' });
  await deliver(page, 'drop', [{ name: 'big.png', type: 'image/png', size: 400 * 1024 }]);
  await page.waitForSelector('#attachments .attach-chip[data-kind="image"]');
  await sendPrompt(page, 'too much');
  await waitText(page, '.toast', 'the limit is 400000 (prompt_too_large)');
  assert.equal(await page.inputValue('#prompt-input'), 'too much');
  assert.deepEqual(await chipNames(page, '#attachments'), ['image:big.png']);
  assert.equal(await page.locator('.msg-user').count(), 0);
  const problems = page.problems();
  assert.deepEqual(problems.filter((p) => !/Failed to load resource: .*status of 413/.test(p)), []);
  await page.close();
});
