// A real agent from npm behind the gateway: claude-agent-acp (pinned in package.json), offline. Its model
// endpoint points at a closed loopback port, so only locally handled commands work — `/context` answers with a
// usage_update and a markdown table without calling a model. This checks the gateway against an agent it was
// not written with: start (initialize, session/new with modes and config options), a turn over REST,
// pass-through of an unstable update kind, then the same session loaded over `/acp` with the official SDK's
// Streamable HTTP client, a turn there, and a clean stop.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { client, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "..");
const agentBin = join(here, "node_modules", ".bin", "claude-agent-acp");

let work, gateway, base;
let log = "";

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

async function api(method, path, body) {
  const res = await fetch(`http://${base}${path}`, {
    method,
    headers: body ? { "content-type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

before(async () => {
  assert.ok(existsSync(agentBin), "claude-agent-acp is not installed: run npm ci in conformance/");
  work = mkdtempSync(join(tmpdir(), "acp-real-agent-"));
  const home = join(work, "home");
  const proj = join(work, "proj");
  mkdirSync(home);
  mkdirSync(proj);
  const agents = join(work, "agents.json");
  writeFileSync(agents, JSON.stringify({
    agent_servers: {
      claude: {
        command: agentBin,
        env: {
          HOME: home,
          IS_SANDBOX: "1", // claude refuses its own permission bypass as root otherwise
          ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          DISABLE_TELEMETRY: "1",
          DISABLE_AUTOUPDATER: "1",
        },
      },
    },
  }));
  const bin = join(work, "gateway");
  execFileSync("go", ["build", "-o", bin, "./cmd/gateway"], { cwd: repo, stdio: ["ignore", "inherit", "inherit"] });
  base = `127.0.0.1:${await freePort()}`;
  gateway = spawn(bin, ["--addr", base, "--agents", agents, "--default-agent", "claude", "--workdir", proj], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  gateway.stdout.on("data", (b) => (log += b));
  gateway.stderr.on("data", (b) => (log += b));
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`http://${base}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (gateway.exitCode !== null || Date.now() > deadline) throw new Error(`gateway did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 50));
  }
});

after(async () => {
  if (gateway && gateway.exitCode === null) {
    const exited = new Promise((r) => gateway.once("exit", r));
    gateway.kill("SIGTERM");
    await exited;
  }
  if (work) rmSync(work, { recursive: true, force: true });
});

// Made over REST by the first test, loaded over /acp by the second (one agent start for both).
let sessionId;

test("claude-agent-acp: session, offline /context turn, usage_update passed through", { timeout: 120_000 }, async () => {
  const created = await api("POST", "/v1/sessions", {});
  assert.equal(created.status, 201, `create: ${JSON.stringify(created.json)}\n${log}`);
  const s = created.json;
  assert.equal(s.agent, "claude");
  assert.equal(s.agentInfo?.name, "@zed-industries/claude-agent-acp");
  assert.ok(s.modes?.availableModes?.length > 0, "modes");
  assert.equal(s.agentCapabilities?.loadSession, true);

  const turn = await api("POST", `/v1/sessions/${s.id}/prompt?wait=true`, { text: "/context" });
  assert.equal(turn.status, 200, `prompt: ${JSON.stringify(turn.json)}\n${log}`);
  assert.equal(turn.json.stopReason, "end_turn");
  assert.match(turn.json.text, /Context Usage/);

  const page = await api("GET", `/v1/sessions/${s.id}/events?after=0&limit=100`);
  const kinds = page.json.frames.map((f) => f.params?.update?.sessionUpdate).filter(Boolean);
  assert.ok(kinds.includes("usage_update"), `kinds: ${kinds}`);
  assert.ok(kinds.includes("agent_message_chunk"), `kinds: ${kinds}`);
  sessionId = s.id;
});

test("claude-agent-acp over /acp Streamable HTTP: initialize, session/load, offline /context turn, session/close", { timeout: 120_000 }, async () => {
  assert.ok(sessionId, "the first test made a session");
  const updates = [];
  const app = client({ name: "conformance-claude-http" }).onNotification("session/update", ({ params }) => {
    assert.equal(params.sessionId, sessionId);
    updates.push(params.update);
  });
  await app.connectWith(createHttpStream(`http://${base}/acp`), async (ctx) => {
    const init = await ctx.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    assert.equal(init.agentInfo?.name, "@zed-industries/claude-agent-acp", JSON.stringify(init));
    assert.equal(init.agentCapabilities?.loadSession, true);
    const loaded = await ctx.request("session/load", { sessionId, cwd: join(work, "proj"), mcpServers: [] });
    assert.ok(loaded.modes?.availableModes?.length > 0, "the agent's modes pass through");
    const replayed = updates.map((u) => u.sessionUpdate);
    assert.ok(replayed.includes("usage_update"), `the REST turn is replayed: ${replayed}`);
    updates.length = 0;

    const res = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "/context" }] });
    assert.equal(res.stopReason, "end_turn");
    const kinds = updates.map((u) => u.sessionUpdate);
    assert.ok(kinds.includes("usage_update"), `kinds: ${kinds}`);
    assert.match(updates.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content?.text ?? "").join(""), /Context Usage/);
    await ctx.request("session/close", { sessionId });
  });
  // session/close closed the registry session: the agent stopped cleanly.
  assert.equal((await api("GET", `/v1/sessions/${sessionId}`)).status, 404);
});
