// The official ACP client (@agentclientprotocol/sdk) driving `kakeibo --acp` over real stdio,
// with the scripted demo model. It prints what it saw as one JSON object on stdout; the Rust test
// (crates/acp/tests/acp_sdk.rs) checks that and the database.
//
//   KAKEIBO_BIN=target/debug/kakeibo node crates/acp/tests/client/acp_client.mjs
//
// With ACP_ONE_PROMPT set, it opens one session and sends that prompt alone; with ACP_PROMPTS (a
// JSON array) it sends those, in order, to one session. ACP_MCP_SERVERS (a JSON array) is the
// `mcpServers` of every session; ACP_ANSWER (default `reject`) answers its permission requests.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const bin = process.env.KAKEIBO_BIN;
if (!bin) throw new Error("KAKEIBO_BIN names the kakeibo binary");

const child = spawn(bin, ["--acp", ...JSON.parse(process.env.ACP_ARGS ?? "[]")], { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

// Per session: its updates in order, the permission requests it got, how each prompt stopped.
const seen = {};
const of = (sessionId) => (seen[sessionId] ??= { updates: [], permissions: [], stops: [] });
// How each session's permission requests are answered.
const answers = {};

const app = acp
  .client({ name: "kakeibo-acp-test" })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params, agent }) => {
    of(params.sessionId).permissions.push(params);
    return answers[params.sessionId](params, agent);
  })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    of(params.sessionId).updates.push(params.update);
  });

const out = { sessions: {} };
try {
  await app.connectWith(stream, async (agent) => {
    out.initialize = await agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } },
      clientInfo: { name: "kakeibo-acp-test", version: "1" },
    });

    const session = async (name, answer) => {
      const { sessionId } = await agent.request(acp.methods.agent.session.new, {
        cwd: process.cwd(),
        mcpServers: JSON.parse(process.env.ACP_MCP_SERVERS ?? "[]"),
      });
      answers[sessionId] = answer;
      out.sessions[name] = sessionId;
      return sessionId;
    };
    const prompt = async (sessionId, text) => {
      const { stopReason } = await agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text }],
      });
      of(sessionId).stops.push(stopReason);
    };
    const select = (optionId) => () => ({ outcome: { outcome: "selected", optionId } });

    // ACP_ONE_PROMPT: one session, that one prompt, and nothing else.
    if (process.env.ACP_ONE_PROMPT || process.env.ACP_PROMPTS) {
      const only = await session("only", select(process.env.ACP_ANSWER ?? "reject"));
      const prompts = process.env.ACP_PROMPTS ? JSON.parse(process.env.ACP_PROMPTS) : [process.env.ACP_ONE_PROMPT];
      for (const text of prompts) await prompt(only, text);
      return;
    }

    // A read, then a write allowed, in one session (one conversation).
    const allowed = await session("allowed", select("allow"));
    await prompt(allowed, "how much did I spend on groceries in March 2025?");
    await prompt(allowed, "set a ₹20,000 monthly budget for groceries");

    // Two writes rejected.
    const rejected = await session("rejected", select("reject"));
    await prompt(rejected, "set budgets for dining and transport");

    // Cancelled while the write is asked about: the client cancels the turn, then answers
    // the pending request `cancelled`, as ACP asks of it.
    const cancelled = await session("cancelled", async (params, agent) => {
      await agent.notify(acp.methods.agent.session.cancel, { sessionId: params.sessionId });
      return { outcome: { outcome: "cancelled" } };
    });
    await prompt(cancelled, "set a budget");

    // "Always" for a tool: its next write in the session runs unasked.
    const always = await session("always", select("always"));
    await prompt(always, "always put Swiggy under dining");
    await prompt(always, "always put Zomato under dining");

    // A relative working folder is refused.
    try {
      await agent.request(acp.methods.agent.session.new, { cwd: "relative/dir", mcpServers: [] });
      out.relativeCwd = "accepted";
    } catch (e) {
      out.relativeCwd = { code: e.code, data: e.data };
    }
    // A prompt to a session that does not exist.
    try {
      await prompt("no-such-session", "hello");
      out.unknownSession = "accepted";
    } catch (e) {
      out.unknownSession = { code: e.code, data: e.data };
    }
  });
} finally {
  child.stdin.end();
}
out.exitCode = await exited;
out.seen = seen;
process.stdout.write(JSON.stringify(out));
