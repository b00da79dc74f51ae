package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/internal/testenv"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// The ACP agent end to end: a real `foya acp` process, a real kernel and the
// fake OpenAI-compatible server.
func TestACPAgent(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	proj := filepath.Join(t.TempDir(), "proj")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	p := startACP(t, "--addr", k.addr, "--log-level", "debug")

	// initialize: protocol version 1 and capabilities.
	var ini struct {
		ProtocolVersion   int
		AgentCapabilities struct {
			LoadSession         bool
			PromptCapabilities  struct{ Image, Audio, EmbeddedContext bool }
			SessionCapabilities map[string]any
		}
		AgentInfo   struct{ Name, Version string }
		AuthMethods []any
	}
	p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": false, "writeTextFile": false}, "terminal": false},
		"clientInfo": map[string]any{"name": "go-test", "version": "1"}}, &ini)
	if ini.ProtocolVersion != 1 || !ini.AgentCapabilities.LoadSession || !ini.AgentCapabilities.PromptCapabilities.Image ||
		!ini.AgentCapabilities.PromptCapabilities.EmbeddedContext || ini.AgentInfo.Name != "foya" || ini.AuthMethods == nil ||
		ini.AgentCapabilities.SessionCapabilities["list"] == nil {
		t.Fatalf("initialize: %+v", ini)
	}

	// session/new refuses SSE MCP servers and relative paths with clear errors.
	m := p.await(p.start("session/new", map[string]any{"cwd": proj, "mcpServers": []any{map[string]any{"type": "sse", "name": "x", "url": "http://127.0.0.1:1/sse", "headers": []any{}}}}), "new with sse mcp")
	if m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "SSE") {
		t.Fatalf("session/new with an SSE MCP server: %+v", m)
	}
	m = p.await(p.start("session/new", map[string]any{"cwd": "relative/dir", "mcpServers": []any{}}), "new relative")
	if m.Error == nil || m.Error.Code != -32602 {
		t.Fatalf("session/new with a relative cwd: %+v", m)
	}

	var ns struct {
		SessionID string
		Modes     struct {
			CurrentModeID  string
			AvailableModes []struct{ ID, Name string }
		}
	}
	p.call("session/new", map[string]any{"cwd": proj, "mcpServers": []any{}}, &ns)
	// ask, explore, bypass, guarded (the guardian reviews what ask would put to a person) and plan.
	if ns.SessionID == "" || ns.Modes.CurrentModeID != "ask" || len(ns.Modes.AvailableModes) != 5 {
		t.Fatalf("session/new: %+v", ns)
	}
	sid := ns.SessionID
	ks := k.sessionDetail(t, sid)
	if ks.Session.Project.Path != proj {
		t.Fatalf("session's project %+v, want %s", ks.Session, proj)
	}

	// A prompt streams reasoning and text, then ends the turn. The title
	// request that follows the first completed turn gets its own answer.
	fake.Enqueue(openaitest.Response{Events: []string{
		openaitest.Chunk("gpt-t", map[string]any{"role": "assistant", "reasoning_content": "Let me "}, ""),
		openaitest.Chunk("gpt-t", map[string]any{"reasoning_content": "think."}, ""),
		openaitest.Chunk("gpt-t", map[string]any{"content": "Hello "}, ""),
		openaitest.Chunk("gpt-t", map[string]any{"content": "from Foya"}, ""),
		openaitest.Chunk("gpt-t", map[string]any{}, "stop"),
	}}, openaitest.Completion("gpt-t", "ACP chat", "stop", 5, 2))
	mk := p.mark()
	var pr struct{ StopReason string }
	p.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{
		map[string]any{"type": "text", "text": "hello"},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file://" + proj + "/notes.md", "text": "some notes", "mimeType": "text/markdown"}},
	}}, &pr)
	if pr.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", pr.StopReason)
	}
	us := p.since(mk)
	if got := chunks(us, "agent_thought_chunk"); got != "Let me think." {
		t.Fatalf("thought chunks %q in %v", got, us)
	}
	if got := chunks(us, "agent_message_chunk"); got != "Hello from Foya" {
		t.Fatalf("message chunks %q in %v", got, us)
	}
	if body := string(fake.Requests()[0].Body); !strings.Contains(body, "some notes") || !strings.Contains(body, "hello") {
		t.Fatalf("the embedded resource did not reach the model: %s", body)
	}
	waitTitles(t, fake, 1)

	// Tools: a write allowed once (a created file's diff), an edit allowed
	// for the session (a diff of the change), a command rejected.
	p.mu.Lock()
	p.permit = func(prm map[string]any) any {
		tc, _ := prm["toolCall"].(map[string]any)
		if raw, _ := json.Marshal(tc["rawInput"]); strings.Contains(string(raw), "rm ") {
			return choose("reject_once")(prm)
		}
		if tc["toolCallId"] == "call_2" {
			return choose("allow_always")(prm)
		}
		return choose("allow_once")(prm)
	}
	p.mu.Unlock()
	fake.Enqueue(
		toolCallResponse("call_1", "write", `{"path":"a.txt","content":"alpha\nbeta\n"}`),
		toolCallResponse("call_2", "edit", `{"path":"a.txt","old_string":"beta","new_string":"gamma"}`),
		toolCallResponse("call_3", "bash", `{"command":"rm a.txt"}`),
		openaitest.TextStream("gpt-t", "Done."),
	)
	mk = p.mark()
	p.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "make a file"}}}, &pr)
	if pr.StopReason != "end_turn" {
		t.Fatalf("tool turn stopReason %q", pr.StopReason)
	}
	if b, err := os.ReadFile(filepath.Join(proj, "a.txt")); err != nil || string(b) != "alpha\ngamma\n" {
		t.Fatalf("a.txt: %q %v", b, err)
	}
	us = p.since(mk)
	st, diffs, kind := finalTool(us, "call_1")
	if st != "completed" || kind != "edit" || len(diffs) != 1 || diffs[0]["oldText"] != nil || diffs[0]["newText"] != "alpha\nbeta\n" ||
		diffs[0]["path"] != filepath.Join(proj, "a.txt") {
		t.Fatalf("write tool call: %s %s %v\n%v", st, kind, diffs, toolUpdates(us, "call_1"))
	}
	first := toolUpdates(us, "call_1")[0]
	if first["sessionUpdate"] != "tool_call" || first["rawInput"] == nil {
		t.Fatalf("first update of call_1: %v", first)
	}
	if locs, _ := first["locations"].([]any); len(locs) != 1 || locs[0].(map[string]any)["path"] != filepath.Join(proj, "a.txt") {
		t.Fatalf("call_1 locations: %v", first["locations"])
	}
	st, diffs, _ = finalTool(us, "call_2")
	if st != "completed" || len(diffs) != 1 || !strings.Contains(diffs[0]["oldText"].(string), "beta") || !strings.Contains(diffs[0]["newText"].(string), "gamma") {
		t.Fatalf("edit tool call: %s %v\n%v", st, diffs, toolUpdates(us, "call_2"))
	}
	if st, _, kind = finalTool(us, "call_3"); st != "failed" || kind != "execute" {
		t.Fatalf("rejected command: %s %s\n%v", st, kind, toolUpdates(us, "call_3"))
	}
	p.mu.Lock()
	perms := append([]map[string]any(nil), p.perms...)
	p.mu.Unlock()
	if len(perms) != 3 {
		t.Fatalf("%d permission requests, want 3: %v", len(perms), perms)
	}
	if opts, _ := perms[0]["options"].([]any); len(opts) != 3 || opts[1].(map[string]any)["kind"] != "allow_always" {
		t.Fatalf("permission options %v", perms[0]["options"])
	}

	// set_mode, and a mode changed by another client arrives as current_mode_update.
	p.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": "bypass"}, nil)
	ks = k.sessionDetail(t, sid)
	if ks.Session.ApprovalMode != "BYPASS" || ks.Session.AgentMode != "EXECUTE" {
		t.Fatalf("after set_mode bypass: %+v", ks.Session)
	}
	p.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": "plan"}, nil)
	ks = k.sessionDetail(t, sid)
	if ks.Session.AgentMode != "PLAN" {
		t.Fatalf("after set_mode plan: %+v", ks.Session)
	}
	if m := p.await(p.start("session/set_mode", map[string]any{"sessionId": sid, "modeId": "yolo"}), "bad mode"); m.Error == nil || m.Error.Code != -32602 {
		t.Fatalf("set_mode yolo: %+v", m)
	}
	mk = p.mark()
	k.updateSession(t, sid, client.UpdateSessionInput{ApprovalMode: ptr(client.ApprovalModeExplore), AgentMode: ptr(client.AgentModeExecute)})
	p.waitFor(mk, "current_mode_update explore", func(u map[string]any) bool {
		return u["sessionUpdate"] == "current_mode_update" && u["currentModeId"] == "explore"
	})
	p.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": "ask"}, nil)

	// A prompt sent while a turn runs is queued and answered when its own
	// turn ends: the first turn waits on a permission until the second
	// prompt has been sent.
	second := make(chan (<-chan acpMsg), 1)
	p.mu.Lock()
	p.permit = func(prm map[string]any) any {
		second <- p.start("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "queued one"}}})
		return choose("reject_once")(prm)
	}
	p.mu.Unlock()
	fake.Enqueue(
		toolCallResponse("call_4", "write", `{"path":"b.txt","content":"x"}`),
		openaitest.TextStream("gpt-t", "First done."),
		openaitest.TextStream("gpt-t", "Second done."),
	)
	mk = p.mark()
	firstCh := p.start("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "running one"}}})
	r1 := p.await(firstCh, "first prompt")
	var secondCh <-chan acpMsg
	select {
	case secondCh = <-second:
	case <-time.After(60 * time.Second):
		t.Fatal("no permission request in the first turn")
	}
	if r1.Error != nil || !strings.Contains(string(r1.Result), "end_turn") {
		t.Fatalf("first prompt: %+v %s", r1.Error, r1.Result)
	}
	if got := chunks(p.before(mk, r1), "agent_message_chunk"); got != "First done." {
		t.Fatalf("when the first prompt answered the chunks were %q", got)
	}
	r2 := p.await(secondCh, "queued prompt")
	if r2.Error != nil || !strings.Contains(string(r2.Result), "end_turn") {
		t.Fatalf("queued prompt: %+v %s", r2.Error, r2.Result)
	}
	if got := chunks(p.since(mk), "agent_message_chunk"); got != "First done.Second done." {
		t.Fatalf("chunks %q", got)
	}

	// Cancel mid-stream: the prompt answers cancelled and the provider
	// request is abandoned.
	fake.Enqueue(openaitest.Response{Hang: true, Events: []string{
		openaitest.Chunk("gpt-t", map[string]any{"role": "assistant", "content": "partial"}, ""),
	}})
	mk = p.mark()
	ch := p.start("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "go on"}}})
	p.waitFor(mk, "partial chunk", func(u map[string]any) bool { return u["sessionUpdate"] == "agent_message_chunk" })
	p.send(map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": sid}})
	m = p.await(ch, "cancelled prompt")
	if m.Error != nil || !strings.Contains(string(m.Result), `"cancelled"`) {
		t.Fatalf("cancelled prompt: %+v %s", m.Error, m.Result)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := fake.WaitCancelled(ctx); err != nil {
		t.Fatal(err)
	}

	// session/list, then a second client loads the session: its history is
	// replayed before the answer.
	var ls struct {
		Sessions []struct{ SessionID, Cwd, Title string }
	}
	p.call("session/list", map[string]any{"cwd": proj}, &ls)
	if len(ls.Sessions) != 1 || ls.Sessions[0].SessionID != sid || ls.Sessions[0].Cwd != proj || ls.Sessions[0].Title != "ACP chat" {
		t.Fatalf("session/list: %+v", ls)
	}
	q := startACP(t, "--addr", k.addr)
	q.call("initialize", map[string]any{"protocolVersion": 1}, nil)
	var ld struct {
		Modes struct{ CurrentModeID string }
	}
	q.call("session/load", map[string]any{"sessionId": sid, "cwd": proj, "mcpServers": []any{}}, &ld)
	us = q.since(0)
	if ld.Modes.CurrentModeID != "ask" {
		t.Fatalf("load modes %+v", ld)
	}
	if got := chunks(us, "user_message_chunk"); !strings.HasPrefix(got, "hello") || !strings.Contains(got, "make a file") || !strings.Contains(got, "queued one") {
		t.Fatalf("replayed user chunks %q", got)
	}
	if got := chunks(us, "agent_message_chunk"); !strings.Contains(got, "Hello from Foya") || !strings.Contains(got, "Second done.") {
		t.Fatalf("replayed agent chunks %q", got)
	}
	if got := chunks(us, "agent_thought_chunk"); got != "Let me think." {
		t.Fatalf("replayed thoughts %q", got)
	}
	if st, diffs, _ := finalTool(us, "call_2"); st != "completed" || len(diffs) != 1 {
		t.Fatalf("replayed edit: %s %v", st, diffs)
	}
	if st, _, _ := finalTool(us, "call_3"); st != "failed" {
		t.Fatalf("replayed rejected command: %s", st)
	}
	// Loading an unknown session is an error.
	if m := q.await(q.start("session/load", map[string]any{"sessionId": "ses_missing", "cwd": proj, "mcpServers": []any{}}), "load missing"); m.Error == nil {
		t.Fatalf("load of a missing session: %s", m.Result)
	}
	for _, peer := range []*acpPeer{p, q} {
		peer.mu.Lock()
		if peer.protoErr != "" {
			t.Error(peer.protoErr)
		}
		peer.mu.Unlock()
	}
	o.checkNoKey(t)
}

// A client nobody here wrote: the npm @agentclientprotocol/sdk (client side)
// drives `foya acp`, validating every message against its schema.
func TestACPNodeSDKClient(t *testing.T) {
	t.Parallel()
	// Under CI=true (.ci/run installs Node.js and npm) the check must run.
	skip := t.Skip
	if os.Getenv("CI") == "true" {
		skip = t.Fatal
	}
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("-short: skipping the npm ACP client check")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		skip("npm is not installed: skipping the @agentclientprotocol/sdk client check (install Node.js and npm to run it)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skip("node is not installed: skipping the @agentclientprotocol/sdk client check")
	}
	dir := repoPath("test", "acp")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := testenv.NPMInstall(ctx, npm, dir, filepath.Join("@agentclientprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	proj := t.TempDir()
	exe, err := os.Executable() // the test binary doubles as a stdio MCP server
	if err != nil {
		t.Fatal(err)
	}
	fake.Enqueue(
		toolCallResponse("call_1", "write", `{"path":"hello.txt","content":"hi\n"}`), openaitest.TextStream("gpt-t", "Written."),
		toolCallResponse("call_env", "mcp__editor__env", `{}`), openaitest.TextStream("gpt-t", "Env read."),
		toolCallResponse("call_note", "mcp__editor__note", `{"text":"x"}`), openaitest.TextStream("gpt-t", "Noted."),
		openaitest.Response{Hang: true, Events: []string{openaitest.Chunk("gpt-t", map[string]any{"role": "assistant", "content": "partial"}, "")}},
	)
	cmd := exec.CommandContext(ctx, node, "client.mjs", foyaBin, k.addr, proj, exe)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "XDG_DATA_HOME="+t.TempDir()), tokenEnv([]string{"--addr", k.addr}, nil)...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok:") {
		t.Fatalf("node ACP client: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(proj, "hello.txt")); err != nil || string(b) != "hi\n" {
		t.Fatalf("hello.txt: %q %v", b, err)
	}
	if strings.Contains(string(out), "s3cret-token") || strings.Contains(k.Logs(), "s3cret-token") {
		t.Fatal("the MCP server's env value was printed or logged")
	}
	t.Logf("%s", bytes.TrimSpace(out))
}

// The task list becomes a plan, a question is answered by the next prompt,
// and an image is uploaded as an attachment.
func TestACPAgentPlanQuestionImage(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	proj := t.TempDir()
	p := startACP(t, "--addr", k.addr)
	p.call("initialize", map[string]any{"protocolVersion": 1}, nil)
	var ns struct{ SessionID string }
	p.call("session/new", map[string]any{"cwd": proj, "mcpServers": []any{}}, &ns)
	sid := ns.SessionID

	fake.Enqueue(
		toolCallResponse("call_t", "tasks", `{"tasks":[{"text":"step one","status":"in_progress"},{"text":"step two","status":"pending"}]}`),
		openaitest.TextStream("gpt-t", "Planned."),
		openaitest.Completion("gpt-t", "Plans", "stop", 5, 2),
	)
	mk := p.mark()
	var pr struct{ StopReason string }
	p.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "plan it"}}}, &pr)
	plan := p.waitFor(mk, "plan", func(u map[string]any) bool { return u["sessionUpdate"] == "plan" })
	entries, _ := plan["entries"].([]any)
	if pr.StopReason != "end_turn" || len(entries) != 2 || entries[0].(map[string]any)["status"] != "in_progress" ||
		entries[1].(map[string]any)["content"] != "step two" {
		t.Fatalf("plan %v (stop %s)", plan, pr.StopReason)
	}
	waitTitles(t, fake, 1)

	// A question: shown as an agent message; the next prompt answers it.
	fake.Enqueue(toolCallResponse("call_q", "question", `{"question":"Which colour?"}`), openaitest.TextStream("gpt-t", "Blue it is."))
	mk = p.mark()
	first := p.start("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "paint"}}})
	p.waitFor(mk, "the question", func(u map[string]any) bool {
		return u["sessionUpdate"] == "agent_message_chunk" && strings.Contains(chunks([]map[string]any{u}, "agent_message_chunk"), "Which colour?")
	})
	answer := p.start("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "blue"}}})
	for _, ch := range []<-chan acpMsg{first, answer} {
		if m := p.await(ch, "question prompts"); m.Error != nil || !strings.Contains(string(m.Result), "end_turn") {
			t.Fatalf("question prompt: %+v %s", m.Error, m.Result)
		}
	}
	if body := string(fake.LastRequest().Body); !strings.Contains(body, "blue") {
		t.Fatalf("the answer did not reach the model: %s", body)
	}

	// A question answered by another client: the prompt that waits for the
	// turn answers, and the next prompt is a normal message.
	fake.Enqueue(toolCallResponse("call_q2", "question", `{"question":"Which size?"}`), openaitest.TextStream("gpt-t", "Large it is."))
	mk = p.mark()
	asked := p.start("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "size"}}})
	p.waitFor(mk, "the second question", func(u map[string]any) bool {
		return strings.Contains(chunks([]map[string]any{u}, "agent_message_chunk"), "Which size?")
	})
	var evs struct {
		Events []struct {
			Type    string
			Payload struct{ RequestID string }
		}
	}
	decodeAs(t, k.eventLog(t, sid), &evs)
	var qid string
	for _, e := range evs.Events {
		if e.Type == "question_requested" {
			qid = e.Payload.RequestID
		}
	}
	if _, err := client.AnswerQuestion(context.Background(), k.client(), sid, qid, "large"); err != nil {
		t.Fatalf("answerQuestion: %v", err)
	}
	if m := p.await(asked, "question answered elsewhere"); m.Error != nil || !strings.Contains(string(m.Result), "end_turn") {
		t.Fatalf("prompt: %+v %s", m.Error, m.Result)
	}
	fake.Enqueue(openaitest.TextStream("gpt-t", "Plain reply."))
	p.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "thanks"}}}, &pr)
	if body := string(fake.LastRequest().Body); pr.StopReason != "end_turn" || !strings.Contains(body, "large") || !strings.Contains(body, "thanks") {
		t.Fatalf("after a question answered elsewhere: %s %.300s", pr.StopReason, body)
	}

	// An image is uploaded as an attachment of the message.
	var buf bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	fake.Enqueue(openaitest.TextStream("gpt-t", "A tiny image."))
	p.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{
		map[string]any{"type": "text", "text": "what is this?"},
		map[string]any{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(buf.Bytes()), "uri": "file:///tmp/dot.png"},
	}}, &pr)
	ks := k.sessionDetail(t, sid)
	last := ks.Session.Messages[len(ks.Session.Messages)-2]
	if pr.StopReason != "end_turn" || last.Role != "USER" || len(last.Attachments) != 1 || last.Attachments[0].Name != "dot.png" || last.Attachments[0].MediaType != "image/png" {
		t.Fatalf("image prompt: %s %+v", pr.StopReason, ks.Session.Messages)
	}
	if body := string(fake.LastRequest().Body); !strings.Contains(body, "data:image/png;base64,") {
		t.Fatalf("the image did not reach the model: %.400s", body)
	}
	o.checkNoKey(t)
}

// JSON-RPC errors, and `foya acp` starting its own kernel when none answers.
func TestACPProtocolErrorsAndSpawn(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	p := startACP(t, "--addr", freeAddr(t), "--data-dir", data)
	p.call("initialize", map[string]any{"protocolVersion": 1}, nil)
	if !p.waitStderr("started a kernel for this command (data dir " + data + ")") {
		t.Fatalf("stderr: %s", p.stderrText())
	}
	for _, c := range []struct {
		method string
		params any
		code   int
	}{
		{"no/such_method", map[string]any{}, -32601},
		{"initialize", map[string]any{}, -32602},
		{"session/prompt", map[string]any{"sessionId": "ses_x", "prompt": []any{}}, -32002},
		{"session/load", map[string]any{"sessionId": "ses_x", "cwd": data, "mcpServers": []any{}}, -32002},
		{"session/new", map[string]any{"cwd": filepath.Join(data, "missing"), "mcpServers": []any{}}, -32602},
	} {
		m := p.await(p.start(c.method, c.params), c.method)
		if m.Error == nil || m.Error.Code != c.code {
			t.Errorf("%s: %+v %s, want code %d", c.method, m.Error, m.Result, c.code)
		}
	}
	// A malformed line gets a parse error with id null; the connection lives on.
	ch := make(chan acpMsg, 1)
	p.mu.Lock()
	p.waiting[0] = ch
	p.stdin.Write([]byte("{not json\n"))
	p.mu.Unlock()
	if m := p.await(ch, "parse error"); m.Error == nil || m.Error.Code != -32700 {
		t.Fatalf("parse error: %+v", m)
	}
	var ls struct{ Sessions []any }
	p.call("session/list", map[string]any{}, &ls)
}
