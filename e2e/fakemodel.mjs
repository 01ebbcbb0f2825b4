// A loopback stand-in for the Anthropic Messages API, so claude-agent-acp (Claude Code) runs real turns offline.
// It answers every POST /v1/messages: a conversation whose last user message holds a tool result gets a short
// text answer; one whose prompt contains a scripted trigger gets that script's tool call (streamed as
// tool_use); anything else (titles, quota checks, other prompts) gets "ok". Requests are recorded for asserts.

import http from 'node:http';

/**
 * Starts the fake on a free loopback port. scripts: [{trigger, tool, input, answer, gate?}] — when the last user
 * text contains `trigger`, the model calls `tool` with `input`, then says `answer` once the tool result came back
 * (and `gate`, if given, has resolved).
 * Returns {url, requests, close()}.
 */
export async function startFakeModel(scripts = []) {
  const requests = [];
  let n = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      let msg = null;
      try { msg = JSON.parse(body); } catch { /* not JSON */ }
      requests.push({ method: req.method, url: req.url, body: msg });
      if (req.method !== 'POST' || !/^\/v1\/messages(\?|$)/.test(req.url) || !msg) {
        if (/count_tokens/.test(req.url)) return json(res, 200, { input_tokens: 10 });
        return json(res, 404, { type: 'error', error: { type: 'not_found_error', message: 'not here' } });
      }
      const reply = decide(msg, scripts);
      const id = `msg_fake_${++n}`;
      // A script's `gate` (a promise) holds its answer after the tool result back, so a test sees the turn
      // still running while the tool's output is already on screen.
      Promise.resolve(reply.gate).then(() => {
        if (msg.stream) stream(res, id, msg.model, reply);
        else json(res, 200, message(id, msg.model, reply));
      });
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  };
}

function lastUser(msg) {
  const users = (msg.messages || []).filter((m) => m.role === 'user');
  const last = users[users.length - 1];
  if (!last) return { text: '', toolResult: false };
  const parts = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content || [];
  return {
    text: parts.filter((p) => p.type === 'text').map((p) => p.text).join('\n'),
    toolResult: parts.some((p) => p.type === 'tool_result'),
  };
}

// The reply: {text} or {tool, input}.
function decide(msg, scripts) {
  const u = lastUser(msg);
  const all = JSON.stringify(msg.messages || []);
  const script = scripts.find((s) => all.includes(s.trigger));
  if (u.toolResult) return script ? { text: script.answer, gate: script.gate } : { text: 'Done.' };
  if (script && u.text.includes(script.trigger) && (msg.tools || []).some((t) => t.name === script.tool)) {
    return { tool: script.tool, input: script.input };
  }
  return { text: 'ok' };
}

function json(res, status, v) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(v));
}

const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

function message(id, model, reply) {
  const content = reply.tool
    ? [{ type: 'tool_use', id: `toolu_${id}`, name: reply.tool, input: reply.input }]
    : [{ type: 'text', text: reply.text }];
  return { id, type: 'message', role: 'assistant', model: model || 'fake', content, stop_reason: reply.tool ? 'tool_use' : 'end_turn', stop_sequence: null, usage };
}

function stream(res, id, model, reply) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  ev('message_start', { message: { id, type: 'message', role: 'assistant', model: model || 'fake', content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
  if (reply.tool) {
    ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: `toolu_${id}`, name: reply.tool, input: {} } });
    ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(reply.input) } });
  } else {
    ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: reply.text } });
  }
  ev('content_block_stop', { index: 0 });
  ev('message_delta', { delta: { stop_reason: reply.tool ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } });
  ev('message_stop', {});
  res.end();
}
