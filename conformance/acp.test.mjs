// Conformance of the gateway's `/acp` face with the official ACP TypeScript SDK: a client built with the
// SDK's client app (`client()` … `connectWith`) talks to the real gateway binary and its built-in demo agent,
// every scenario twice: over `createWebSocketStream` (Node `ws` as the WebSocket constructor) and over
// `createHttpStream` (Streamable HTTP). Over HTTP only: the session's SSE stream dropped mid-turn, and the
// client re-attaching.
//
// The gateway is built from this repository (`go build ./cmd/gateway`, or $GATEWAY_PKG) and started on a
// free loopback port with `--demo-delay 0`.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { client, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { WebSocket } from "ws";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const STEP_MS = 20_000;

let work;
let gateway;
let gatewayLog = "";
let base;

function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once("error", fail);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

async function waitHealthy(url, deadlineMs) {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    if (gateway.exitCode !== null) {
      throw new Error(`gateway exited with ${gateway.exitCode}:\n${gatewayLog}`);
    }
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`gateway not healthy:\n${gatewayLog}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), "acp-conformance-"));
  const bin = join(work, "gateway");
  execFileSync("go", ["build", "-o", bin, process.env.GATEWAY_PKG ?? "./cmd/gateway"], {
    cwd: repo,
    stdio: ["ignore", "inherit", "inherit"],
  });
  const port = await freePort();
  base = `127.0.0.1:${port}`;
  gateway = spawn(bin, ["--addr", base, "--demo-delay", "0", "--workdir", work], {
    cwd: work,
    stdio: ["ignore", "pipe", "pipe"],
  });
  gateway.stdout.on("data", (b) => (gatewayLog += b));
  gateway.stderr.on("data", (b) => (gatewayLog += b));
  await waitHealthy(`http://${base}/healthz`, 30_000);
});

after(async () => {
  if (gateway && gateway.exitCode === null) {
    const exited = new Promise((r) => gateway.once("exit", r));
    gateway.kill("SIGTERM");
    const timer = setTimeout(() => gateway.kill("SIGKILL"), 15_000);
    await exited;
    clearTimeout(timer);
  }
  if (work) rmSync(work, { recursive: true, force: true });
});

// The two transports of the official SDK, on the same URL.
const transports = {
  ws: () => createWebSocketStream(`ws://${base}/acp`, { WebSocket }),
  http: (options = {}) => createHttpStream(`http://${base}/acp`, options),
};

function withTimeout(promise, what) {
  let timer;
  const t = new Promise((_, fail) => {
    timer = setTimeout(() => fail(new Error(`timed out: ${what}\n${gatewayLog.slice(-4000)}`)), STEP_MS);
  });
  return Promise.race([promise, t]).finally(() => clearTimeout(timer));
}

// until polls cond (an observable condition, not a clock) until it holds, for at most STEP_MS.
async function until(cond, what) {
  const deadline = Date.now() + STEP_MS;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${gatewayLog.slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function textOf(updates, kind) {
  return updates
    .filter((u) => u.sessionUpdate === kind && u.content?.type === "text")
    .map((u) => u.content.text)
    .join("");
}

async function sessionStatus(id) {
  const res = await fetch(`http://${base}/v1/sessions/${id}`);
  return res.ok ? (await res.json()).status : `http ${res.status}`;
}

const PROMPT = "hello from the TypeScript SDK";

for (const [name, stream] of Object.entries(transports)) {
  // Shared between the first two tests: the first makes the transcript, the second loads it.
  let sessionId;
  const liveUpdates = [];

  test(`${name}: initialize, session/new, prompt with a permission, end_turn`, async () => {
    const permissions = [];
    const app = client({ name: "conformance" }).onRequest("session/request_permission", ({ params }) => {
      permissions.push(params);
      const allow = params.options.find((o) => o.kind === "allow_once");
      assert.ok(allow, "the demo agent offers an allow_once option");
      return { outcome: { outcome: "selected", optionId: allow.optionId } };
    });

    await withTimeout(
      app.connectWith(stream(), async (ctx) => {
        const init = await ctx.request("initialize", {
          protocolVersion: PROTOCOL_VERSION,
          clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
          clientInfo: { name: "conformance", version: "1.0.0" },
        });
        assert.equal(init.protocolVersion, 1);
        assert.equal(init.agentCapabilities?.loadSession, true);
        assert.deepEqual(init.authMethods, []);

        const session = await ctx.buildSession(work).start();
        sessionId = session.sessionId;
        assert.ok(sessionId, "session/new returned a sessionId");

        const done = session.prompt(PROMPT);
        let stop;
        for (;;) {
          const m = await session.nextUpdate();
          if (m.kind === "stop") {
            stop = m;
            break;
          }
          assert.equal(m.notification.sessionId, sessionId);
          liveUpdates.push(m.update);
        }
        const response = await done;
        assert.equal(response.stopReason, "end_turn");
        assert.equal(stop.stopReason, "end_turn");
        session.dispose();
      }),
      `${name}: first connection`,
    );

    assert.equal(permissions.length, 1, "one permission request");
    assert.equal(permissions[0].sessionId, sessionId);
    const kinds = new Set(liveUpdates.map((u) => u.sessionUpdate));
    for (const k of ["agent_thought_chunk", "agent_message_chunk", "plan", "tool_call", "tool_call_update"]) {
      assert.ok(kinds.has(k), `received a ${k} update (got ${[...kinds]})`);
    }
    assert.ok(!kinds.has("user_message_chunk"), "the prompt is not echoed to its sender");
    const edit = liveUpdates.find(
      (u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "edit_1" && u.status === "completed",
    );
    assert.ok(edit, "the allowed edit completed");
    assert.ok(textOf(liveUpdates, "agent_message_chunk").startsWith(`You said: ${PROMPT}`));

    // The session is an ordinary registry session, visible over REST.
    const rest = await fetch(`http://${base}/v1/sessions/${sessionId}`);
    assert.equal(rest.status, 200);
    const view = await rest.json();
    assert.equal(view.id, sessionId);
    assert.equal(view.status, "idle");
  });

  test(`${name}: a second connection loads the session and receives the transcript before the load response`, async () => {
    assert.ok(sessionId, "the first test made a session");
    const replay = [];
    let loaded = false;
    const app = client({ name: "conformance-load" }).onNotification("session/update", ({ params }) => {
      assert.equal(loaded, false, "no update after the load response in this test");
      assert.equal(params.sessionId, sessionId);
      replay.push(params.update);
    });

    await withTimeout(
      app.connectWith(stream(), async (ctx) => {
        const init = await ctx.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
        assert.equal(init.agentCapabilities?.loadSession, true);
        await ctx.request("session/load", { sessionId, cwd: work, mcpServers: [] });
        loaded = true;
        // Everything arrived before the response resolved.
        assert.ok(replay.length > 0, "the load replayed updates");
      }),
      `${name}: second connection`,
    );

    assert.equal(textOf(replay, "user_message_chunk"), PROMPT, "the user's prompt is part of the transcript");
    const agentReplay = replay.filter((u) => u.sessionUpdate !== "user_message_chunk");
    // The live connection saw the same updates (it also got available_commands_update after session/new).
    assert.deepEqual(agentReplay, liveUpdates);
    assert.equal(textOf(replay, "agent_message_chunk"), textOf(liveUpdates, "agent_message_chunk"));
  });

  test(`${name}: session/cancel while a permission is pending ends the turn cancelled and withdraws the request`, async () => {
    let asked;
    const askedP = new Promise((r) => (asked = r));
    let withdrawn = false;
    const app = client({ name: "conformance-cancel" }).onRequest("session/request_permission", ({ signal }) => {
      asked();
      // Never answered: the gateway withdraws it ($/cancel_request aborts this handler).
      return new Promise((resolve) => {
        signal.addEventListener(
          "abort",
          () => {
            withdrawn = true;
            resolve({ outcome: { outcome: "cancelled" } });
          },
          { once: true },
        );
      });
    });
    await withTimeout(
      app.connectWith(stream(), async (ctx) => {
        await ctx.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
        const { sessionId: sid } = await ctx.request("session/new", { cwd: work, mcpServers: [] });
        const prompt = ctx.request("session/prompt", { sessionId: sid, prompt: [{ type: "text", text: "cancel me" }] });
        await askedP;
        await ctx.notify("session/cancel", { sessionId: sid });
        const res = await prompt;
        assert.equal(res.stopReason, "cancelled");
        await until(() => withdrawn, "the pending permission request to be withdrawn");
        assert.equal(await sessionStatus(sid), "idle");
      }),
      `${name}: cancel`,
    );
  });

  test(`${name}: bad input gets JSON-RPC errors and the connection lives on`, async () => {
    const app = client({ name: "conformance-bad" });
    await withTimeout(
      app.connectWith(stream(), async (ctx) => {
        await ctx.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
        await assert.rejects(ctx.request("session/new", { cwd: "relative/dir", mcpServers: [] }), (e) => e.code === -32602);
        await assert.rejects(ctx.request("_vendor/no_such_method", {}), (e) => e.code === -32601);
        await assert.rejects(ctx.request("session/list", { cwd: "relative/dir" }), (e) => e.code === -32602);
        const { sessionId: sid } = await ctx.request("session/new", { cwd: work, mcpServers: [] });
        assert.ok(sid, "the connection still works");
      }),
      `${name}: bad input`,
    );
    // What the SDK cannot send: a body or frame that is not JSON.
    if (name === "ws") {
      const ws = new WebSocket(`ws://${base}/acp`);
      const reply = await withTimeout(
        new Promise((ok, fail) => {
          ws.once("open", () => ws.send("{"));
          ws.once("message", (d) => ok(JSON.parse(d.toString())));
          ws.once("error", fail);
        }),
        "ws: parse error",
      );
      ws.close();
      assert.equal(reply.error.code, -32700);
      assert.equal(reply.id, null);
    } else {
      const post = (body, headers = {}) =>
        fetch(`http://${base}/acp`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body });
      let res = await post("{");
      assert.equal(res.status, 400);
      assert.equal((await res.json()).error.code, -32700);
      res = await post("[]");
      assert.equal(res.status, 400);
      assert.equal((await res.json()).error.code, -32600);
      res = await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/list", params: {} }), { "Acp-Connection-Id": "nope" });
      assert.equal(res.status, 404);
      assert.equal((await res.json()).code, "unknown_connection");
    }
  });
}

// A fetch for createHttpStream whose session streams the test can drop: the SDK sees a clean end of the
// stream (as when a proxy closes it) and the gateway sees its request end.
function droppableFetch() {
  const drops = new Map();
  const wrapped = async (url, init) => {
    const res = await fetch(url, init);
    const sid = new Headers(init?.headers).get("Acp-Session-Id");
    if (init?.method !== "GET" || !sid || !res.ok) return res;
    const reader = res.body.getReader();
    let controller;
    const body = new ReadableStream({
      start(c) {
        controller = c;
      },
      async pull(c) {
        const { value, done } = await reader.read().catch(() => ({ done: true }));
        try {
          if (done) c.close();
          else c.enqueue(value);
        } catch {
          // dropped meanwhile
        }
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    });
    drops.set(sid, () => {
      try {
        controller.close();
      } catch {
        // already closed
      }
      reader.cancel().catch(() => {});
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
  return { fetch: wrapped, drop: (sid) => drops.get(sid)?.() };
}

test("http: the session stream dropped mid-turn; the client re-attaches with session/load and gets the whole turn", async () => {
  const net = droppableFetch();
  const updates = [];
  let asked;
  const askedP = new Promise((r) => (asked = r));
  let dropped = false;
  const app = client({ name: "conformance-drop" })
    .onNotification("session/update", ({ params }) => {
      updates.push(params.update);
    })
    .onRequest("session/request_permission", ({ params, requestId, signal }) => {
      const allow = params.options.find((o) => o.kind === "allow_once").optionId;
      if (dropped) return { outcome: { outcome: "selected", optionId: allow } };
      dropped = true;
      net.drop(params.sessionId); // the stream goes away while the turn waits for this answer
      asked({ requestId, allow });
      // Answered over REST below; the gateway then withdraws it here, once the stream is back.
      return new Promise((resolve) => {
        signal.addEventListener("abort", () => resolve({ outcome: { outcome: "cancelled" } }), { once: true });
      });
    });

  await withTimeout(
    app.connectWith(transports.http({ fetch: net.fetch }), async (ctx) => {
      await ctx.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
      const { sessionId: sid } = await ctx.request("session/new", { cwd: work, mcpServers: [] });
      const text = "drop the stream";
      const prompt = ctx.request("session/prompt", { sessionId: sid, prompt: [{ type: "text", text }] });
      const { requestId, allow } = await askedP;
      // The SDK fails requests in flight on a session stream that ended.
      await assert.rejects(prompt, /SSE stream closed/);

      // Meanwhile the turn goes on in the gateway: another client (REST) answers the permission.
      const answered = await fetch(`http://${base}/v1/sessions/${sid}/permissions/${requestId}`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ optionId: allow }),
      });
      assert.equal(answered.status, 200, await answered.text());
      await until(async () => (await sessionStatus(sid)) === "idle", "the turn to end");

      // Re-attach. A 409 (the gateway has not yet seen the dropped stream go) is retried, as the SDK asks.
      const from = updates.length;
      await until(async () => {
        try {
          await ctx.request("session/load", { sessionId: sid, cwd: work, mcpServers: [] });
          return true;
        } catch (e) {
          assert.equal(e.data?.status, 409, `session/load failed: ${e.message}`);
          return false;
        }
      }, "session/load");
      const replay = updates.slice(from);
      assert.equal(textOf(replay, "user_message_chunk"), text, "the replay holds the prompt");
      // What was queued for the dropped stream comes first, then the replay.
      assert.ok(textOf(replay, "agent_message_chunk").includes(`You said: ${text}`), "and the agent's answer");
      assert.ok(
        replay.some((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "edit_1" && u.status === "completed"),
        "and the edit the REST answer allowed",
      );

      // The session works on this connection again.
      const again = await ctx.request("session/prompt", { sessionId: sid, prompt: [{ type: "text", text: "again" }] });
      assert.equal(again.stopReason, "end_turn");
    }),
    "http: drop and re-attach",
  );
});
