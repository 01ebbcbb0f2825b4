// The prompts queued for the open session (or for the session the empty state is starting), above the composer:
// why they wait, and Retry, Edit and Remove on each. Drawn from the queue (queue.js) and the session's state.

import { h, clear, icon } from '../dom.js';

/**
 * Why the queued prompts wait, said above them. s: the open session ({readOnly, usable, status, running}), or null
 * in the empty state, where startingAgent is the agent being started (if any).
 */
export function queueWaitText(items, s, startingAgent) {
  const failed = items.find((x) => x.error);
  if (failed) return `Not sent: ${failed.error} Retry, edit or remove it.`;
  if (!s) return startingAgent ? `Sends when ${startingAgent} is ready.` : 'Sends when the session is ready.';
  if (s.readOnly) return 'This session is shared with you as viewer: these prompts cannot be sent.';
  if (!s.usable) return `This session is ${s.status}: edit these prompts into another one.`;
  if (s.running) return 'Sends when the turn ends.';
  return 'Sends when the session is ready.';
}

/** What a queued prompt's attachments add to its line ('' without any). */
export function attachedText(n) {
  return n ? ` + ${n} attachment${n > 1 ? 's' : ''}` : '';
}

/** root: the #queue list. acts: retry(item), edit(key), remove(key). draw(items, s, startingAgent) as queueWaitText. */
export function queueView(root, acts) {
  return {
    draw(items, s, startingAgent) {
      clear(root);
      root.hidden = !items.length;
      if (!items.length) return;
      root.appendChild(h('li.queue-wait', { role: 'status' }, icon('clock'), h('span', queueWaitText(items, s, startingAgent))));
      for (const it of items) {
        const extra = attachedText(it.attachments.length);
        root.appendChild(h('li.queue-item', { dataset: { queueKey: String(it.key), failed: String(!!it.error) } },
          h('span.queue-badge', it.error ? 'Not sent' : 'Queued'),
          h('span.queue-text', { title: it.text }, it.text),
          extra ? h('span.queue-extra', extra) : null,
          it.error ? h('button.btn.btn-small.queue-retry', { type: 'button', on: { click: () => acts.retry(it) } }, 'Retry') : null,
          h('button.icon-btn.queue-edit', { type: 'button', 'aria-label': 'Edit this queued prompt', title: 'Edit: back into the composer', on: { click: () => acts.edit(it.key) } }, icon('edit')),
          h('button.icon-btn.queue-remove', { type: 'button', 'aria-label': 'Remove this queued prompt', title: 'Remove: it is not sent', on: { click: () => acts.remove(it.key) } }, icon('close'))));
      }
    },
  };
}
