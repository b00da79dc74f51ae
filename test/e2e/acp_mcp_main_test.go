package e2e

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// sessionMCPNames reads the names and states of a session's attached MCP servers.
func sessionMCPNames(t *testing.T, k *kernelProc, sid string) []string {
	t.Helper()
	r := k.sessionDetail(t, sid)
	var out []string
	for _, m := range r.Session.McpServers {
		out = append(out, m.Name+":"+string(m.Status))
	}
	return out
}

// pendingApproval waits for the approval_requested event of a tool in the
// session's log and returns its request id.
func pendingApproval(t *testing.T, k *kernelProc, sid, tool string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := k.eventLog(t, sid)
		open := map[string]bool{}
		var last string
		for _, e := range r.Events {
			var p struct{ RequestID, Tool string }
			json.Unmarshal(e.Payload, &p)
			switch e.Type {
			case "approval_requested":
				if p.Tool == tool {
					open[p.RequestID], last = true, p.RequestID
				}
			case "approval_resolved":
				delete(open, p.RequestID)
			}
		}
		if open[last] {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pending approval of %s in %d events", tool, len(r.Events))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitCancelRequest waits until the agent withdrew the n-th permission
// request with $/cancel_request.
func (p *acpPeer) waitCancelRequest(n int) {
	p.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		p.mu.Lock()
		ok := len(p.permIDs) > n && slices.Contains(p.cancels, p.permIDs[n])
		p.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-p.changed:
		case <-deadline:
			p.mu.Lock()
			defer p.mu.Unlock()
			p.t.Fatalf("permission request %d was not withdrawn: ids %v, cancels %v\nstderr:\n%s", n, p.permIDs, p.cancels, p.stderr.String())
		}
	}
}

// The editor's MCP servers are attached to its session only (session/new,
// session/resume), a tool call reaches them, and session/close and the end
// of the connection detach them. A permission dialog is withdrawn with
// $/cancel_request when the approval is decided elsewhere or the turn is
// stopped by another client.
func TestACPSessionMCPAndWithdrawnPermissions(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-token" // the value the test server checks for
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	proj := t.TempDir()
	p := startACP(t, "--addr", k.addr, "--log-level", "debug")
	var ini struct {
		AgentCapabilities struct {
			McpCapabilities struct{ HTTP, SSE bool }
		}
	}
	p.call("initialize", map[string]any{"protocolVersion": 1}, &ini)
	if !ini.AgentCapabilities.McpCapabilities.HTTP || ini.AgentCapabilities.McpCapabilities.SSE {
		t.Fatalf("mcpCapabilities %+v", ini.AgentCapabilities.McpCapabilities)
	}
	editorMCP := []any{map[string]any{"name": "editor", "command": exe, "args": []any{"-test.run=^$"},
		"env": []any{map[string]any{"name": "FOYA_MCPTEST_STDIO", "value": "1"}, map[string]any{"name": "MCPTEST_TOKEN", "value": secret}}}}

	// Bad MCP input is refused before anything is created.
	m := p.await(p.start("session/new", map[string]any{"cwd": proj, "mcpServers": []any{map[string]any{"name": "x", "command": "", "args": []any{}, "env": []any{}}}}), "empty command")
	if m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "command") {
		t.Fatalf("session/new with an empty command: %+v", m)
	}

	var ns struct{ SessionID string }
	p.call("session/new", map[string]any{"cwd": proj, "mcpServers": editorMCP}, &ns)
	sid := ns.SessionID
	if got := sessionMCPNames(t, k, sid); !slices.Equal(got, []string{"editor:READY"}) {
		t.Fatalf("after session/new the session's MCP servers are %v", got)
	}
	var other struct{ SessionID string }
	p.call("session/new", map[string]any{"cwd": proj, "mcpServers": []any{}}, &other)

	// A tool call of the model reaches the editor's server (a read-only
	// tool: no permission needed in ask mode).
	fake.Enqueue(toolCallResponse("call_env", "mcp__editor__env", `{}`), openaitest.TextStream("gpt-t", "Env read."),
		openaitest.Completion("gpt-t", "MCP chat", "stop", 5, 2))
	mk := p.mark()
	var pr struct{ StopReason string }
	p.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "env"}}}, &pr)
	us := p.since(mk)
	st, _, _ := finalTool(us, "call_env")
	var out string
	for _, u := range toolUpdates(us, "call_env") {
		raw, _ := json.Marshal(u["content"])
		out += string(raw)
	}
	if pr.StopReason != "end_turn" || st != "completed" || !strings.Contains(out, "token_set=true") {
		t.Fatalf("MCP tool call: %s %s %s", pr.StopReason, st, out)
	}
	if body := string(fake.Requests()[0].Body); !strings.Contains(body, "mcp__editor__echo") {
		t.Fatalf("the editor's MCP tools were not offered: %.300s", body)
	}
	waitTitles(t, fake, 1)
	// The other session does not get them.
	n := len(fake.Requests())
	fake.Enqueue(openaitest.TextStream("gpt-t", "No tools."), openaitest.Completion("gpt-t", "Other", "stop", 5, 2))
	p.call("session/prompt", map[string]any{"sessionId": other.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}, &pr)
	if body := string(fake.Requests()[n].Body); strings.Contains(body, "mcp__editor__") {
		t.Fatalf("another session was offered the editor's MCP tools")
	}
	waitTitles(t, fake, 2)

	// A permission dialog decided by another client is withdrawn.
	p.mu.Lock()
	p.permit = func(map[string]any) any {
		p.waitCancelRequest(0)
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}
	}
	p.mu.Unlock()
	fake.Enqueue(toolCallResponse("call_note", "mcp__editor__note", `{"text":"x"}`), openaitest.TextStream("gpt-t", "Noted."))
	ch := p.start("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "note"}}})
	rid := pendingApproval(t, k, sid, "mcp__editor__note")
	k.resolveApproval(t, sid, rid, client.ApprovalDecisionDenied)
	p.waitCancelRequest(0)
	if m := p.await(ch, "prompt with a withdrawn permission"); m.Error != nil || !strings.Contains(string(m.Result), "end_turn") {
		t.Fatalf("prompt: %+v %s", m.Error, m.Result)
	}
	hist := k.getSession(t, sid)
	if last := hist.Session.Messages[len(hist.Session.Messages)-2]; last.Role != "TOOL" || !last.IsError || !strings.Contains(last.Text, "denied") {
		t.Fatalf("the other client's DENIED did not win (the late allow must be ignored): %+v", last)
	}

	// A turn stopped by another client withdraws its dialog too, and the
	// prompt answers cancelled.
	p.mu.Lock()
	p.permit = func(map[string]any) any {
		p.waitCancelRequest(1)
		return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}
	}
	p.mu.Unlock()
	fake.Enqueue(toolCallResponse("call_note2", "mcp__editor__note", `{"text":"y"}`))
	ch = p.start("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "note again"}}})
	pendingApproval(t, k, sid, "mcp__editor__note")
	if _, err := client.StopTurn(context.Background(), k.client(), sid); err != nil {
		t.Fatalf("stopTurn: %v", err)
	}
	p.waitCancelRequest(1)
	if m := p.await(ch, "stopped prompt"); m.Error != nil || !strings.Contains(string(m.Result), `"cancelled"`) {
		t.Fatalf("stopped prompt: %+v %s", m.Error, m.Result)
	}

	// A second editor loads the session while a permission dialog is open
	// in the first: it is asked too, its answer wins, and the first
	// editor's dialog is withdrawn.
	p.mu.Lock()
	p.permit = func(map[string]any) any {
		p.waitCancelRequest(2)
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject_once"}}
	}
	p.mu.Unlock()
	fake.Enqueue(toolCallResponse("call_note3", "mcp__editor__note", `{"text":"z"}`), openaitest.TextStream("gpt-t", "Noted at last."))
	ch = p.start("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "note once more"}}})
	pendingApproval(t, k, sid, "mcp__editor__note")
	q := startACP(t, "--addr", k.addr)
	q.permit = choose("allow_once")
	q.call("initialize", map[string]any{"protocolVersion": 1}, nil)
	q.call("session/load", map[string]any{"sessionId": sid, "cwd": proj, "mcpServers": []any{}}, nil)
	p.waitCancelRequest(2)
	if m := p.await(ch, "prompt answered by the second editor"); m.Error != nil || !strings.Contains(string(m.Result), "end_turn") {
		t.Fatalf("prompt: %+v %s", m.Error, m.Result)
	}
	hist = k.getSession(t, sid)
	if last := hist.Session.Messages[len(hist.Session.Messages)-2]; last.Role != "TOOL" || last.IsError {
		t.Fatalf("the second editor's allow did not win: %+v", last)
	}
	q.mu.Lock()
	if len(q.perms) != 1 {
		t.Errorf("the second editor got %d permission requests, want 1", len(q.perms))
	}
	q.mu.Unlock()

	// session/close detaches the editor's servers; session/resume attaches
	// them again without replaying the history.
	p.call("session/close", map[string]any{"sessionId": sid}, nil)
	if got := sessionMCPNames(t, k, sid); len(got) != 0 {
		t.Fatalf("after session/close: %v", got)
	}
	mk = p.mark()
	p.call("session/resume", map[string]any{"sessionId": sid, "cwd": proj, "mcpServers": editorMCP}, nil)
	if got := sessionMCPNames(t, k, sid); !slices.Equal(got, []string{"editor:READY"}) {
		t.Fatalf("after session/resume: %v", got)
	}
	for _, u := range p.since(mk) {
		if u["sessionUpdate"] == "user_message_chunk" || u["sessionUpdate"] == "agent_message_chunk" {
			t.Fatalf("session/resume replayed history: %v", u)
		}
	}
	// Resuming again with the same list keeps the same server (no restart).
	p.call("session/resume", map[string]any{"sessionId": sid, "cwd": proj, "mcpServers": editorMCP}, nil)
	if got := sessionMCPNames(t, k, sid); !slices.Equal(got, []string{"editor:READY"}) {
		t.Fatalf("after a second session/resume: %v", got)
	}
	// The connection ends: its servers are detached.
	p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("foya acp did not exit")
	}
	if got := sessionMCPNames(t, k, sid); len(got) != 0 {
		t.Fatalf("after the connection ended: %v", got)
	}
	for _, s := range []string{k.Logs(), p.stderrText()} {
		if strings.Contains(s, secret) {
			t.Fatal("an MCP env value was logged")
		}
	}
	p.mu.Lock()
	if p.protoErr != "" {
		t.Error(p.protoErr)
	}
	p.mu.Unlock()
	o.checkNoKey(t)
}
