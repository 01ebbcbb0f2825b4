// Elicitations in the web UI: a real gateway with the repository's test agent in elicit mode, which asks a form
// (a required name, an integer age, a number, a boolean and an enum with a default) or, prompted "url", a login
// link, and says what it got back ("elicited accept {…}").

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildGateway, buildTestAgent, startGateway, launchBrowser, makeTmp, cleanup, openPage, shot, createSession,
  sendPrompt, waitTurnsEnded, waitText,
} from './harness.mjs';

let tmp;
let gw;
let ctx;

before(async () => {
  tmp = makeTmp();
  const bin = await buildGateway(tmp);
  const agent = await buildTestAgent(tmp);
  gw = await startGateway(bin, ['--agent', `ask=${agent} -mode elicit`]);
  ctx = await launchBrowser(tmp);
}, { timeout: 240000 });

after(async () => {
  if (ctx) await ctx.close().catch(() => {});
  if (gw) await gw.stop();
  cleanup(tmp);
});

const form = '.elicitations .elicit-form';

test('elicitation: form fields from a schema, and typed content back', async () => {
  const { formFields, contentOf } = await import('../web/static/js/elicit.js');
  const fields = formFields({
    type: 'object', required: ['name', 'size'],
    properties: {
      name: { type: 'string', title: 'Name', default: 'x' },
      n: { type: 'integer' },
      size: { type: 'string', oneOf: [{ const: 's', title: 'Small' }, { const: 'l', title: 'Large' }] },
      tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } },
      ok: { type: 'boolean' },
    },
  });
  assert.deepEqual(fields.map((f) => [f.name, f.title, f.required]), [['name', 'Name', true], ['n', 'n', false], ['size', 'size', true], ['tags', 'tags', false], ['ok', 'ok', false]]);
  assert.deepEqual(fields[2].choices, [{ value: 's', label: 'Small' }, { value: 'l', label: 'Large' }]);
  assert.equal(fields[3].multiple, true);
  assert.deepEqual(contentOf(fields, { name: 'Ann', n: '3', size: 'l', tags: ['b'], ok: true }), { content: { name: 'Ann', n: 3, size: 'l', tags: ['b'], ok: true } });
  assert.deepEqual(contentOf(fields, { name: 'Ann', n: '', size: 's', tags: [], ok: false }), { content: { name: 'Ann', size: 's', ok: false } });
  assert.deepEqual(contentOf(fields, { name: 'Ann', n: '2.5', size: 's' }), { error: 'n must be a whole number.' });
  assert.deepEqual(contentOf(fields, { name: '', size: 's' }), { error: 'Name is required.' });
});
const field = (name) => `${form} .elicit-field[data-field="${name}"]`;

test('elicitation: a form with titles, defaults and required fields, refused then accepted', { timeout: 90000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await page.waitForSelector('.agent-item[data-agent="ask"]');
  await createSession(page, { agent: 'ask' });
  await sendPrompt(page, 'form');
  await waitText(page, `${form} .elicit-message`, 'Tell me about you');

  // Titles label the fields, required ones are marked, defaults are filled in.
  assert.match(await page.textContent(`${field('name')} label`), /Your name \*/);
  assert.match(await page.textContent(`${field('colour')} label`), /Colour \*/);
  assert.equal(await page.inputValue(`${field('colour')} select`), 'green');
  assert.equal(await page.isChecked(`${field('subscribe')} input`), true);
  assert.equal(await page.inputValue(`${field('height')} input`), '1.7');
  assert.equal(await page.getAttribute(`${field('age')} input`, 'type'), 'number');
  await shot(page, '60-elicitation-form');

  // A required field left empty is caught before sending; a value the gateway refuses keeps the form open with
  // the gateway's reason.
  await page.click(`${form} button[type="submit"]`);
  await waitText(page, `${form} .elicit-status`, 'Your name is required.');
  await page.fill(`${field('name')} input`, 'Ann');
  await page.fill(`${field('age')} input`, '151');
  await page.click(`${form} button[type="submit"]`);
  await waitText(page, `${form} .elicit-status`, 'content.age: must be at most 150');

  await page.fill(`${field('age')} input`, '42');
  await page.selectOption(`${field('colour')} select`, 'blue');
  await page.uncheck(`${field('subscribe')} input`);
  await page.click(`${form} button[type="submit"]`);
  await waitText(page, '.msg-agent', 'elicited accept {"age":42,"colour":"blue","height":1.7,"name":"Ann","subscribe":false}');
  await page.waitForSelector('.elicitations[hidden]', { state: 'attached' });
  assert.deepEqual(await waitTurnsEnded(page, 1), ['end_turn']);
  assert.deepEqual(page.problems().filter((p) => !/status of 400/.test(p)), []);
});

test('elicitation: a link shows its host, opens on consent and stays pending until complete', { timeout: 90000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await page.waitForSelector('.agent-item[data-agent="ask"]');
  await createSession(page, { agent: 'ask' });
  // The link is only observed: nothing leaves the machine.
  await page.evaluate(() => { window.__opened = []; window.open = (u) => { window.__opened.push(u); return null; }; });
  await sendPrompt(page, 'url');
  const card = '.elicitations .elicit-form[data-mode="url"]';
  await waitText(page, `${card} .elicit-url strong`, 'login.example.com');
  assert.match(await page.textContent(`${card} .elicit-message`), /Log in to the example service/);
  await shot(page, '61-elicitation-url');

  // The turn ends right after the agent's elicitation/complete: the card is gone, the agent heard "accept".
  await page.click(`${card} button.btn-primary`);
  await waitText(page, '.msg-agent', 'elicited accept null');
  await page.waitForSelector('.elicitations[hidden]', { state: 'attached' });
  assert.deepEqual(await page.evaluate(() => window.__opened), ['https://login.example.com/device?code=ABCD']);
  assert.deepEqual(page.problems(), []);
});

test('elicitation: declining, and a question answered in another page disappears here', { timeout: 90000 }, async () => {
  const page = await openPage(ctx, gw.base + '/');
  await page.waitForSelector('.agent-item[data-agent="ask"]');
  const id = await createSession(page, { agent: 'ask' });
  const other = await openPage(ctx, `${gw.base}/#/s/${encodeURIComponent(id)}`);
  await sendPrompt(page, 'form');
  await waitText(page, `${form} .elicit-message`, 'Tell me about you');
  await waitText(other, `${form} .elicit-message`, 'Tell me about you');
  await other.click(`${form} button:has-text("Decline")`);
  await waitText(page, '.msg-agent', 'elicited decline');
  await page.waitForSelector('.elicitations[hidden]', { state: 'attached' });
  await other.waitForSelector('.elicitations[hidden]', { state: 'attached' });
  assert.deepEqual(page.problems(), []);
  assert.deepEqual(other.problems(), []);
  await other.close();
});
