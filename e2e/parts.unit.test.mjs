// Unit tests of the pure parts of the modules app.js wires (the queue's view, the connection pill, the notify
// toggle, sendability, the sign-in view's texts, composer items), in node: no browser.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PromptQueue, canSendQueued, sendability } from '../web/static/js/queue.js';
import { queueWaitText, attachedText } from '../web/static/js/views/queue.js';
import { pillText } from '../web/static/js/views/connpill.js';
import { notifyTitle } from '../web/static/js/views/notify.js';
import { accountLine, signInFailure, SIGNIN_REASON } from '../web/static/js/signin.js';
import { itemsOf } from '../web/static/js/attach.js';

/** An open session as session.js's OpenSession shows itself to the queue. */
function openSession(over = {}) {
  return { session: { id: 'a' }, replayed: true, status: 'idle', turn: { running: false }, sending: false, readOnly: false, held: false, ...over };
}

test('sendability: a loaded, replayed, idle session takes the next queued prompt; anything else holds it', () => {
  assert.equal(canSendQueued(sendability(openSession())), true);
  assert.equal(canSendQueued(sendability(openSession({ session: null }))), false, 'GET not answered');
  assert.equal(canSendQueued(sendability(openSession({ replayed: false }))), false, 'still replaying');
  assert.equal(canSendQueued(sendability(openSession({ turn: { running: true } }))), false, 'a turn runs');
  assert.equal(canSendQueued(sendability(openSession({ sending: true }))), false, 'a prompt in flight');
  assert.equal(canSendQueued(sendability(openSession({ readOnly: true }))), false, 'viewer');
  assert.equal(canSendQueued(sendability(openSession({ held: true }))), false, 'refused as too early');
  for (const status of ['starting', 'closed', 'failed']) assert.equal(canSendQueued(sendability(openSession({ status }))), false, status);
  assert.deepEqual(sendability(openSession()), { loaded: true, status: 'idle', running: false, sending: false, readOnly: false, held: false });
});

test('queue view: why the prompts wait, for the empty state, a viewer, an ended session, a turn, a failure', () => {
  const q = new PromptQueue();
  const items = [q.add('a', 'one'), q.add('a', 'two')];
  const s = { readOnly: false, usable: true, status: 'idle', running: false };
  assert.equal(queueWaitText(items, null, 'demo'), 'Sends when demo is ready.');
  assert.equal(queueWaitText(items, null, null), 'Sends when the session is ready.');
  assert.equal(queueWaitText(items, { ...s, readOnly: true }), 'This session is shared with you as viewer: these prompts cannot be sent.');
  assert.equal(queueWaitText(items, { ...s, usable: false, status: 'closed' }), 'This session is closed: edit these prompts into another one.');
  assert.equal(queueWaitText(items, { ...s, running: true }), 'Sends when the turn ends.');
  assert.equal(queueWaitText(items, s), 'Sends when the session is ready.');
  items[1].error = 'the agent is gone.';
  assert.equal(queueWaitText(items, { ...s, running: true }), 'Not sent: the agent is gone. Retry, edit or remove it.', 'a failure comes first');
  assert.equal(attachedText(0), '');
  assert.equal(attachedText(1), ' + 1 attachment');
  assert.equal(attachedText(3), ' + 3 attachments');
});

test('connection pill: each socket state, and the countdown to the next try while offline', () => {
  assert.equal(pillText('connecting'), 'Connecting…');
  assert.equal(pillText('replaying'), 'Loading history…');
  assert.equal(pillText('live'), 'Live');
  assert.equal(pillText('resyncing'), 'Resyncing…');
  assert.equal(pillText('reconnecting', { connecting: true, attempt: 2 }), 'Reconnecting… (try 3)');
  assert.equal(pillText('reconnecting', {}), 'Reconnecting…');
  assert.equal(pillText('reconnecting', { at: 10_000 }, 7_200), 'Offline · retrying in 3s');
  assert.equal(pillText('reconnecting', { at: 10_000 }, 10_000), 'Reconnecting…');
  assert.equal(pillText('closed', { reason: 'session not found' }), 'Disconnected: session not found');
  assert.equal(pillText('closed'), 'Disconnected');
  assert.equal(pillText('idle'), 'Not connected');
});

test('notify toggle: on, blocked by the browser, or offered', () => {
  assert.match(notifyTitle(true, 'granted'), /^Notifications on/);
  assert.match(notifyTitle(false, 'denied'), /blocked/);
  assert.equal(notifyTitle(false, 'default'), 'Notify me when an agent waits for me');
});

test('sign-in: why the view is up, why a typed token failed, and the account line', () => {
  assert.match(SIGNIN_REASON.expired, /no longer accepted/);
  const errorText = (e) => e.message;
  assert.match(signInFailure({ status: 401 }, errorText), /not accepted/);
  assert.match(signInFailure({ status: 429 }, errorText), /Too many failed attempts/);
  assert.equal(signInFailure({ status: 0 }, errorText), 'The gateway could not be reached.');
  assert.equal(signInFailure({ status: 500, message: 'boom' }, errorText), 'Could not sign in: boom');
  assert.equal(signInFailure(new Error('offline'), errorText), 'Could not sign in: offline');
  assert.equal(accountLine({ role: 'admin', via: 'token' }), 'admin · the gateway token');
  assert.equal(accountLine({ role: 'user', via: 'oidc' }, '14:05'), 'user · OIDC · until 14:05');
  assert.equal(accountLine({ role: 'user', via: 'none' }), 'user');
});

test('composer items: a sent message\'s blocks come back as attachments; untyped ones are left out', () => {
  const img = { type: 'image', mimeType: 'image/png', data: 'AA==' };
  const link = { type: 'resource_link', uri: 'file:///w/a.go', name: 'a.go' };
  assert.deepEqual(itemsOf([img, link, null, 'x', {}]), [
    { kind: 'image', name: '', size: 0, block: img },
    { kind: 'mention', name: 'a.go', size: 0, block: link },
  ]);
  assert.deepEqual(itemsOf(undefined), []);
});
