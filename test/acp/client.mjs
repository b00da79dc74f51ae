// Third-party client check: the npm @agentclientprotocol/sdk client side
// drives `foya acp` (usage: node client.mjs FOYA_BIN KERNEL_ADDR PROJECT_DIR).
// The Go test queues the fake model's answers: a write tool call, then text.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [foya, addr, project] = process.argv.slice(2);
const child = spawn(foya, ["acp", "--addr", addr], { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const updates = [];
const permissions = [];
const app = acp
  .client({ name: "foya-acp-check" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    permissions.push(params);
    const allow = params.options.find((o) => o.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  });

function check(cond, what) {
  if (!cond) {
    console.error("FAIL:", what);
    console.error(JSON.stringify({ updates, permissions }, null, 1));
    process.exit(1);
  }
}

try {
  const summary = await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: "foya-acp-check", version: "1.0.0" },
    });
    check(init.protocolVersion === 1 && init.agentCapabilities.loadSession === true, "initialize: " + JSON.stringify(init));
    const session = await ctx.request(acp.methods.agent.session.new, { cwd: project, mcpServers: [] });
    check(session.modes.currentModeId === "ask", "modes: " + JSON.stringify(session.modes));
    const res = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "write hello.txt" }],
    });
    check(res.stopReason === "end_turn", "stopReason " + res.stopReason);
    const text = updates.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join("");
    check(text === "Written.", "text " + JSON.stringify(text));
    const done = updates.find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    check(done && done.content.some((c) => c.type === "diff" && c.newText === "hi\n"), "no completed tool call with a diff");
    check(permissions.length === 1 && permissions[0].toolCall.kind === "edit", "permissions " + permissions.length);
    await ctx.request(acp.methods.agent.session.setMode, { sessionId: session.sessionId, modeId: "explore" });
    const list = await ctx.request(acp.methods.agent.session.list, { cwd: project });
    check(list.sessions.some((s) => s.sessionId === session.sessionId), "session/list");
    return { sessionId: session.sessionId, updates: updates.length, text };
  });
  console.log("ok:", JSON.stringify(summary));
} finally {
  child.stdin.end();
}
