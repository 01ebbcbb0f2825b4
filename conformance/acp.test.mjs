// Conformance of the gateway's `/acp` face with the official ACP TypeScript SDK: a client built with the
// SDK's client app (`client()` … `connectWith`) over `createWebSocketStream` (Node `ws` as the WebSocket
// constructor) talks to the real gateway binary and its built-in demo agent.
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

function stream() {
  return createWebSocketStream(`ws://${base}/acp`, { WebSocket });
}

function withTimeout(promise, what) {
  let timer;
  const t = new Promise((_, fail) => {
    timer = setTimeout(() => fail(new Error(`timed out: ${what}\n${gatewayLog.slice(-4000)}`)), STEP_MS);
  });
  return Promise.race([promise, t]).finally(() => clearTimeout(timer));
}

function textOf(updates, kind) {
  return updates
    .filter((u) => u.sessionUpdate === kind && u.content?.type === "text")
    .map((u) => u.content.text)
    .join("");
}

// Shared between the two tests: the first makes the transcript, the second loads it.
let sessionId;
let liveUpdates = [];
const PROMPT = "hello from the TypeScript SDK";

test("initialize, session/new, prompt with a permission, end_turn", async () => {
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
    "first socket",
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

test("a second socket loads the session and receives the transcript before the load response", async () => {
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
    "second socket",
  );

  assert.equal(textOf(replay, "user_message_chunk"), PROMPT, "the user's prompt is part of the transcript");
  const agentReplay = replay.filter((u) => u.sessionUpdate !== "user_message_chunk");
  // The live socket saw the same updates (it also got available_commands_update after session/new).
  assert.deepEqual(agentReplay, liveUpdates);
  assert.equal(textOf(replay, "agent_message_chunk"), textOf(liveUpdates, "agent_message_chunk"));
});
