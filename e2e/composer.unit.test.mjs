// Unit tests of the composer's pure helpers (slash commands, mentions, message text, session search), in node.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { matchCommands, commandHint } from '../web/static/js/slash.js';
import { mentionBlock, mentionItem } from '../web/static/js/mentions.js';
import { messageText } from '../web/static/js/msgactions.js';
import { sessionMatches } from '../web/static/js/sessionsearch.js';
import { promptBlocks } from '../web/static/js/attach.js';

const commands = [
  { name: 'help', description: 'Explain' },
  { name: 'echo', description: 'Repeat', input: { hint: 'text to echo' } },
  { name: 'review-pr', description: 'Review' },
  null, { description: 'no name' },
];

test('matchCommands: prefix matches first, then the rest containing the text; junk is skipped', () => {
  assert.deepEqual(matchCommands(commands, '').map((c) => c.name), ['help', 'echo', 'review-pr']);
  assert.deepEqual(matchCommands(commands, 'E').map((c) => c.name), ['echo', 'help', 'review-pr']);
  assert.deepEqual(matchCommands(commands, 'pr').map((c) => c.name), ['review-pr']);
  assert.deepEqual(matchCommands(undefined, 'x'), []);
});

test('commandHint: the input hint, else the description', () => {
  assert.equal(commandHint(commands, 'echo'), '/echo: text to echo');
  assert.equal(commandHint(commands, 'help'), '/help — Explain');
  assert.equal(commandHint(commands, 'nope'), '');
});

test('mentions are resource_link blocks with a file:// uri, sent after the text', () => {
  const e = { path: '/w/src/my file#1.go', rel: 'src/my file#1.go', type: 'file' };
  assert.deepEqual(mentionBlock(e), { type: 'resource_link', uri: 'file:///w/src/my%20file%231.go', name: 'my file#1.go' });
  assert.deepEqual(promptBlocks('see @src/my file#1.go', [mentionItem(e)]), [
    { type: 'text', text: 'see @src/my file#1.go' },
    { type: 'resource_link', uri: 'file:///w/src/my%20file%231.go', name: 'my file#1.go' },
  ]);
});

test('messageText: the text, then links and embedded text of the other blocks', () => {
  assert.equal(messageText({ text: '**hi**', extras: [] }), '**hi**');
  assert.equal(messageText({ text: 'see', extras: [{ type: 'resource_link', uri: 'file:///a.go', name: 'a.go' }, { type: 'image', data: 'x' }] }),
    'see\n\n[a.go](file:///a.go)');
});

test('sessionMatches: every word in the title, agent or id', () => {
  const s = { title: 'Parser work', agent: 'claude', id: '6acec4fc-8d6b' };
  assert.ok(sessionMatches(s, 'parser'));
  assert.ok(sessionMatches(s, 'CLAUDE 6ace'));
  assert.ok(!sessionMatches(s, 'parser gemini'));
  assert.ok(sessionMatches(s, '  '));
});
