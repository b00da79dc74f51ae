// Third-party client check: the npm @agentclientprotocol/sdk client side
// drives `foya acp` (usage: node client.mjs FOYA_BIN KERNEL_ADDR PROJECT_DIR MCP_SERVER_BIN).
// MCP_SERVER_BIN is a stdio MCP test server (run with FOYA_MCPTEST_STDIO=1).
// The Go test queues the fake model's answers, in this order:
//  1. a write tool call (permission: allow once), then "Written."
//  2. a call of mcp__editor__env (the editor's MCP server), then "Env read."
//  3. a call of mcp__editor__note (permission decided by another client), then "Noted."
//  4. a reply that streams "partial" and hangs (cancelled with session/cancel).
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [foya, addr, project, mcpBin] = process.argv.slice(2);
const SECRET = "s3cret-token";
const editorMCP = {
  name: "editor",
  command: mcpBin,
  args: ["-test.run=^$"],
  env: [
    { name: "FOYA_MCPTEST_STDIO", value: "1" },
    { name: "MCPTEST_TOKEN", value: SECRET },
  ],
};

function check(cond, what, extra) {
  if (!cond) {
    console.error("FAIL:", what);
    if (extra !== undefined) console.error(JSON.stringify(extra, null, 1));
    process.exit(1);
  }
}

// gql talks to the kernel directly, as another client (GraphiQL, a second editor) would.
async function gql(query, variables) {
  const res = await fetch(`http://${addr}/graphql`, {
    method: "POST",
    // The kernel requires its token on loopback too (FOYA_TOKEN, as the CLI).
    headers: { "content-type": "application/json", authorization: "Bearer " + (process.env.FOYA_TOKEN || "") },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  check(!body.errors, "graphql " + query, body.errors);
  return body.data;
}

async function pendingApproval(sessionId, tool) {
  for (let i = 0; i < 600; i++) {
    const { events } = await gql(`query($s: ID!) { events(sessionId: $s, limit: 5000) { type payload } }`, { s: sessionId });
    const open = new Map();
    for (const e of events) {
      if (e.type === "approval_requested" && e.payload.tool === tool) open.set(e.payload.requestId, true);
      if (e.type === "approval_resolved") open.delete(e.payload.requestId);
    }
    if (open.size > 0) return [...open.keys()].pop();
    await new Promise((r) => setTimeout(r, 50));
  }
  check(false, "no pending approval of " + tool);
}

function startAgent() {
  const child = spawn(foya, ["acp", "--addr", addr], { stdio: ["pipe", "pipe", "inherit"] });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  return { child, stream };
}

const updates = [];
const permissions = [];
const withdrawn = [];
let sessionId;
const first = startAgent();
const app = acp
  .client({ name: "foya-acp-check" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
  })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params, signal }) => {
    permissions.push(params);
    if (params.toolCall.kind === "edit") {
      const allow = params.options.find((o) => o.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: allow.optionId } };
    }
    // Another client decides first; foya acp withdraws this dialog with
    // $/cancel_request, which aborts signal.
    const requestId = await pendingApproval(params.sessionId, "mcp__editor__note");
    await gql(`mutation($s: ID!, $r: ID!) { resolveApproval(sessionId: $s, requestId: $r, decision: DENIED) }`, { s: params.sessionId, r: requestId });
    await new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", resolve)));
    withdrawn.push(params.toolCall.toolCallId);
    throw signal.reason;
  });

const since = (n) => updates.slice(n);
const chunks = (us, kind) => us.filter((u) => u.sessionUpdate === kind).map((u) => u.content.text ?? "").join("");

try {
  const summary = await app.connectWith(first.stream, async (ctx) => {
    const init = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: "foya-acp-check", version: "1.0.0" },
    });
    check(init.protocolVersion === 1 && init.agentCapabilities.loadSession === true, "initialize", init);
    const caps = init.agentCapabilities;
    check(caps.mcpCapabilities.http === true && caps.mcpCapabilities.sse === false, "mcpCapabilities", caps);
    check(caps.sessionCapabilities.resume && caps.sessionCapabilities.close && caps.sessionCapabilities.list && caps.sessionCapabilities.delete, "sessionCapabilities", caps);

    const session = await ctx.request(acp.methods.agent.session.new, { cwd: project, mcpServers: [editorMCP] });
    sessionId = session.sessionId;
    check(session.modes.currentModeId === "ask", "modes", session.modes);
    // A title up front: the kernel then asks the model for none.
    await gql(`mutation($s: ID!) { updateSession(id: $s, input: {title: "npm check"}) { id } }`, { s: sessionId });

    // 1. A permission request answered allow once; the diff of the write.
    let mark = updates.length;
    let res = await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "write hello.txt" }] });
    check(res.stopReason === "end_turn", "stopReason " + res.stopReason);
    check(chunks(since(mark), "agent_message_chunk") === "Written.", "text", since(mark));
    const done = since(mark).find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    check(done && done.content.some((c) => c.type === "diff" && c.newText === "hi\n"), "no completed tool call with a diff", since(mark));
    check(permissions.length === 1 && permissions[0].toolCall.kind === "edit", "permissions " + permissions.length);

    // 2. The model calls a tool of the editor's MCP server.
    mark = updates.length;
    res = await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "read the env" }] });
    const envDone = since(mark).find((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "call_env" && u.status === "completed");
    check(res.stopReason === "end_turn" && envDone && JSON.stringify(envDone.content).includes("token_set=true"), "MCP tool call", since(mark));

    // 3. A permission dialog decided elsewhere is withdrawn.
    mark = updates.length;
    res = await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "note it" }] });
    check(res.stopReason === "end_turn", "stopReason after a withdrawn permission " + res.stopReason);
    // The handler may still be on its way back from resolveApproval.
    for (let i = 0; i < 600 && withdrawn.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    check(withdrawn.length === 1 && withdrawn[0] === "call_note", "withdrawn dialogs", withdrawn);
    const noteDone = since(mark).filter((u) => u.toolCallId === "call_note" && u.status).pop();
    check(noteDone && noteDone.status === "failed", "the denied call", since(mark));

    // 4. session/cancel mid-stream.
    mark = updates.length;
    const pending = ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go on" }] });
    for (let i = 0; i < 600 && !chunks(since(mark), "agent_message_chunk").includes("partial"); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
    res = await pending;
    check(res.stopReason === "cancelled", "stopReason after cancel " + res.stopReason);

    // set_mode, list, close, resume.
    await ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: "explore" });
    const { session: s1 } = await gql(`query($s: ID!) { session(id: $s) { approvalMode mcpServers { name status } } }`, { s: sessionId });
    check(s1.approvalMode === "EXPLORE", "set_mode", s1);
    check(s1.mcpServers.length === 1 && s1.mcpServers[0].status === "READY", "session MCP servers", s1);
    const list = await ctx.request(acp.methods.agent.session.list, { cwd: project });
    check(list.sessions.some((s) => s.sessionId === sessionId && s.title === "npm check"), "session/list", list);
    await ctx.request(acp.methods.agent.session.close, { sessionId });
    const { session: s2 } = await gql(`query($s: ID!) { session(id: $s) { mcpServers { name } } }`, { s: sessionId });
    check(s2.mcpServers.length === 0, "MCP servers after session/close", s2);
    const resumed = await ctx.request(acp.methods.agent.session.resume, { sessionId, cwd: project, mcpServers: [editorMCP] });
    check(resumed.modes.currentModeId === "explore", "resume modes", resumed);
    const { session: s3 } = await gql(`query($s: ID!) { session(id: $s) { mcpServers { name status } } }`, { s: sessionId });
    check(s3.mcpServers.length === 1 && s3.mcpServers[0].status === "READY", "MCP servers after session/resume", s3);
    return { sessionId, updates: updates.length, permissions: permissions.length, withdrawn: withdrawn.length };
  });

  // A second editor loads the session: its history is replayed first.
  const second = startAgent();
  const replayed = [];
  const loader = acp.client({ name: "foya-acp-check-2" }).onNotification(acp.methods.client.session.update, ({ params }) => {
    replayed.push(params.update);
  });
  const loaded = await loader.connectWith(second.stream, async (ctx) => {
    await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    const res = await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: project, mcpServers: [] });
    const user = chunks(replayed, "user_message_chunk");
    check(user.includes("write hello.txt") && user.includes("note it"), "replayed user chunks", replayed);
    check(chunks(replayed, "agent_message_chunk").includes("Written."), "replayed agent chunks", replayed);
    check(replayed.some((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "call_env"), "replayed MCP tool call", replayed);
    // session/delete removes it from the kernel.
    await ctx.request(acp.methods.agent.session.delete, { sessionId });
    const { session: gone } = await gql(`query($s: ID!) { session(id: $s) { id } }`, { s: sessionId });
    check(gone === null, "session after session/delete", gone);
    return { mode: res.modes.currentModeId, replayed: replayed.length };
  });
  second.child.stdin.end();
  console.log("ok:", JSON.stringify({ ...summary, loaded }));
} finally {
  first.child.stdin.end();
}
