// Elicitation through `/acp` with the official ACP TypeScript SDK as the client: the gateway runs the repository's
// test agent in elicit mode (it asks a form, or prompted "url" a login link, and says what it got back). A client
// that advertises elicitation answers the agent's question; over both of the SDK's transports.

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

before(async () => {
  work = mkdtempSync(join(tmpdir(), "acp-elicitation-"));
  const bin = join(work, "gateway");
  const agent = join(work, "testagent");
  execFileSync("go", ["build", "-o", bin, process.env.GATEWAY_PKG ?? "./cmd/gateway"], { cwd: repo, stdio: ["ignore", "inherit", "inherit"] });
  execFileSync("go", ["build", "-o", agent, "./internal/testagent"], { cwd: repo, stdio: ["ignore", "inherit", "inherit"] });
  base = `127.0.0.1:${await freePort()}`;
  gateway = spawn(bin, ["--addr", base, "--workdir", work, "--agent", `ask=${agent} -mode elicit`, "--default-agent", "ask"], {
    cwd: work,
    stdio: ["ignore", "pipe", "pipe"],
  });
  gateway.stdout.on("data", (b) => (gatewayLog += b));
  gateway.stderr.on("data", (b) => (gatewayLog += b));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (gateway.exitCode !== null) throw new Error(`gateway exited with ${gateway.exitCode}:\n${gatewayLog}`);
    try {
      if ((await fetch(`http://${base}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`gateway not healthy:\n${gatewayLog}`);
    await new Promise((r) => setTimeout(r, 50)); // polling interval, not an assertion
  }
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

const transports = {
  ws: () => createWebSocketStream(`ws://${base}/acp`, { WebSocket }),
  http: () => createHttpStream(`http://${base}/acp`),
};

function withTimeout(promise, what) {
  let timer;
  const t = new Promise((_, fail) => {
    timer = setTimeout(() => fail(new Error(`timed out: ${what}\n${gatewayLog.slice(-4000)}`)), STEP_MS);
  });
  return Promise.race([promise, t]).finally(() => clearTimeout(timer));
}

/** Runs one prompt on a new session with an SDK client that answers elicitations with answer(params). */
async function turn(stream, text, answer) {
  const asked = [];
  const said = [];
  const app = client({ name: "conformance-elicitation" })
    .onRequest("elicitation/create", ({ params }) => {
      asked.push(params);
      return answer(params);
    })
    .onNotification("session/update", ({ params }) => {
      if (params.update.sessionUpdate === "agent_message_chunk") said.push(params.update.content.text);
    });
  let stopReason;
  await withTimeout(
    app.connectWith(stream, async (ctx) => {
      await ctx.request("initialize", {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: { elicitation: { form: {}, url: {} } },
        clientInfo: { name: "conformance", version: "1.0.0" },
      });
      const { sessionId } = await ctx.request("session/new", { cwd: work, mcpServers: [] });
      ({ stopReason } = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] }));
    }),
    `prompt ${text}`,
  );
  return { asked, said: said.join(""), stopReason };
}

for (const [name, stream] of Object.entries(transports)) {
  test(`${name}: the SDK client fills in the agent's form`, async () => {
    const { asked, said, stopReason } = await turn(stream(), "form", () => ({ action: "accept", content: { name: "Ann", colour: "red", age: 30 } }));
    assert.equal(stopReason, "end_turn");
    assert.equal(asked.length, 1);
    assert.equal(asked[0].mode, "form");
    assert.equal(asked[0].message, "Tell me about you");
    assert.deepEqual(asked[0].requestedSchema.required, ["name", "colour"]);
    assert.equal(said, 'elicited accept {"age":30,"colour":"red","name":"Ann"}');
  });

  test(`${name}: the SDK client is sent to a URL and declines`, async () => {
    const { asked, said } = await turn(stream(), "url", () => ({ action: "decline" }));
    assert.equal(asked.length, 1);
    assert.equal(asked[0].mode, "url");
    assert.equal(asked[0].url, "https://login.example.com/device?code=ABCD");
    assert.equal(asked[0].elicitationId, "login-1");
    assert.equal(said, "elicited decline");
  });
}
