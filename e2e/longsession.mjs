// A long session for the transcript's benchmark and browser test: the test agent's transcript mode writes N
// Markdown messages, each followed by an edit tool call with a diff, per prompt, so a few prompts over REST make
// a session of thousands of messages in seconds.

import { buildGateway, buildTestAgent, startGateway } from './harness.mjs';

/**
 * Starts a gateway whose default agent is the test agent in transcript mode, with a log long enough to replay
 * the whole session (so a client that replays every frame can be measured too). Returns the gateway.
 */
export async function startLongGateway(tmp) {
  const agent = await buildTestAgent(tmp);
  return startGateway(await buildGateway(tmp), [
    '--agent', `long=${agent} -mode transcript`, '--default-agent', 'long', '--log-max-frames', '200000',
  ]);
}

/**
 * Creates a session and sends `prompts` prompts of `perPrompt` messages each, waiting for each turn to end.
 * The session then holds prompts × (perPrompt + 1) messages (the user's included) and prompts × perPrompt
 * tool calls. Returns {id, messages, lastMessage}: lastMessage is the number the last agent message carries.
 */
export async function buildLongSession(base, { prompts, perPrompt }) {
  const call = async (method, path, body) => {
    const r = await fetch(base + path, {
      method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined,
    });
    const text = await r.text();
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  const s = await call('POST', '/v1/sessions', { agent: 'long', permissionPolicy: 'approve-all' });
  for (let i = 0; i < prompts; i++) {
    const t = await call('POST', `/v1/sessions/${encodeURIComponent(s.id)}/prompt?wait=true&timeout=5m`, { text: String(perPrompt) });
    if (t.stopReason !== 'end_turn') throw new Error(`turn ${i} ended ${JSON.stringify(t)}`);
  }
  return { id: s.id, messages: prompts * (perPrompt + 1), lastMessage: prompts * perPrompt };
}

// Waits until the list stops moving the position (rows measured after a change move it until known).
export function settle(page) {
  return page.evaluate(async () => {
    const el = document.getElementById('transcript');
    const frame = () => new Promise((r) => requestAnimationFrame(r));
    let same = 0;
    let last = '';
    while (same < 5) {
      await frame();
      const key = `${el.scrollTop}/${document.querySelector('.entries').style.paddingTop}`;
      same = key === last ? same + 1 : 0;
      last = key;
    }
  });
}
