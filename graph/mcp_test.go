package graph_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/plugins/mcphost/mcptest"
	"github.com/foya-dev/foya/providers/openai/openaitest"

	"github.com/foya-dev/foya/internal/testenv"
)

func TestMCPStdioEndToEnd(t *testing.T) {
	t.Setenv("FOYA_KERNEL_ONLY_SECRET", "must-not-leak")
	k := newMCPKernel(t)
	mark := filepath.Join(t.TempDir(), "mark")
	created := k.createMCP(t, stdioServer(t, "files",
		map[string]any{"key": "MCPTEST_TOKEN", "value": "s3cret-token"},
		map[string]any{"key": "MCPTEST_MARK", "value": mark}))
	if created.Status != "STARTING" && created.Status != "READY" || !created.Enabled || created.TimeoutSeconds != 60 {
		t.Fatalf("created %+v", created)
	}
	if !slices.Equal(created.EnvKeys, []string{"FOYA_MCPTEST_STDIO", "MCPTEST_TOKEN", "MCPTEST_MARK"}) {
		t.Fatalf("envKeys %v", created.EnvKeys)
	}
	srv := k.waitStatus(t, created.ID, "READY")
	if srv.ProtocolVersion == nil || *srv.ProtocolVersion != "2026-07-28" {
		t.Fatalf("protocolVersion %v", srv.ProtocolVersion)
	}
	if ok, ro := srv.tool("echo"); !ok || !ro {
		t.Fatalf("echo tool %+v", srv.Tools)
	}
	if ok, ro := srv.tool("note"); !ok || ro {
		t.Fatalf("note tool %+v", srv.Tools)
	}
	// mcp.json holds the secret with mode 0600 (PostgreSQL: sealed in the
	// database, nowhere in plain text); no API answer ever does.
	if k.pgURL != "" {
		if strings.Contains(k.storedText(t), "s3cret-token") {
			t.Fatal("the MCP env value is in the database in plain text")
		}
	} else {
		info, err := os.Stat(filepath.Join(k.dataDir, "mcp.json"))
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("mcp.json: %v %v", info, err)
		}
		if raw, _ := os.ReadFile(filepath.Join(k.dataDir, "mcp.json")); !strings.Contains(string(raw), "s3cret-token") {
			t.Fatalf("mcp.json lacks the env value: %s", raw)
		}
	}

	t.Run("read-only tool in EXPLORE, minimal env", func(t *testing.T) {
		sid := k.chatSession(t, nil, "EXPLORE")
		w := k.watch(t, sid)
		k.fake.Enqueue(callStream("c1", "mcp__files__echo", `{"text":"hi"}`), callStream("c2", "mcp__files__env", `{}`), openaitest_TextStream("done"))
		k.send(t, sid, "echo hi")
		if p := w.turnEnd(); p.Status != core.TurnCompleted {
			t.Fatalf("turn %+v", p)
		}
		msgs := k.messages(t, sid)
		var texts []string
		for _, m := range msgs {
			if m.Role == "TOOL" {
				texts = append(texts, m.Text)
				if m.IsError {
					t.Fatalf("tool error %+v", m)
				}
			}
		}
		if len(texts) != 2 || texts[0] != "echo: hi" {
			t.Fatalf("tool texts %q", texts)
		}
		if !strings.Contains(texts[1], "token_set=true") || strings.Contains(texts[1], "FOYA_KERNEL_ONLY_SECRET") {
			t.Fatalf("server env %s", texts[1])
		}
		// The model was offered the tool with its schema.
		var body struct {
			Tools []struct {
				Function struct {
					Name       string
					Parameters map[string]any
				}
			}
		}
		_ = json.Unmarshal(k.fake.Requests()[0].Body, &body)
		found := false
		for _, tl := range body.Tools {
			if tl.Function.Name == "mcp__files__echo" && tl.Function.Parameters["type"] == "object" {
				found = true
			}
		}
		if !found {
			t.Fatalf("tools offered: %s", k.fake.Requests()[0].Body)
		}
	})

	t.Run("non-read tool refused in EXPLORE, asked and denied in ASK", func(t *testing.T) {
		sid := k.chatSession(t, nil, "EXPLORE")
		w := k.watch(t, sid)
		k.fake.Enqueue(callStream("c1", "mcp__files__note", `{"text":"x"}`), openaitest_TextStream("ok"))
		k.send(t, sid, "note")
		w.turnEnd()
		if m := lastToolMessage(t, k.messages(t, sid)); !m.IsError || !strings.Contains(m.Text, "EXPLORE") {
			t.Fatalf("explore: %+v", m)
		}
		sid = k.chatSession(t, nil, "ASK")
		w = k.watch(t, sid)
		k.fake.Enqueue(callStream("c1", "mcp__files__note", `{"text":"x"}`), openaitest_TextStream("ok"))
		k.send(t, sid, "note")
		var req core.ApprovalPayload
		if err := w.next(core.EventApprovalRequested).Decode(&req); err != nil {
			t.Fatal(err)
		}
		if req.Tool != "mcp__files__note" || req.Action != "command" {
			t.Fatalf("approval %+v", req)
		}
		k.mustDo(t, `mutation($s: ID!, $r: ID!) { resolveApproval(sessionId: $s, requestId: $r, decision: DENIED) }`, map[string]any{"s": sid, "r": req.RequestID}, nil)
		w.turnEnd()
		if m := lastToolMessage(t, k.messages(t, sid)); !m.IsError || !strings.Contains(m.Text, "denied") {
			t.Fatalf("ask: %+v", m)
		}
	})

	t.Run("PLAN mode runs reads and refuses commands", func(t *testing.T) {
		sid := k.chatSession(t, nil, "BYPASS")
		k.mustDo(t, `mutation($s: ID!) { updateSession(id: $s, input: {agentMode: PLAN}) { id } }`, map[string]any{"s": sid}, nil)
		w := k.watch(t, sid)
		k.fake.Enqueue(callStream("c1", "mcp__files__note", `{"text":"x"}`), callStream("c2", "mcp__files__echo", `{"text":"plan"}`), openaitest_TextStream("ok"))
		k.send(t, sid, "plan")
		w.turnEnd()
		var tools []msgJSON
		for _, m := range k.messages(t, sid) {
			if m.Role == "TOOL" {
				tools = append(tools, m)
			}
		}
		if len(tools) != 2 || !tools[0].IsError || !strings.Contains(tools[0].Text, "PLAN") || tools[1].IsError || tools[1].Text != "echo: plan" {
			t.Fatalf("plan mode %+v", tools)
		}
	})

	t.Run("isError and structuredContent", func(t *testing.T) {
		sid := k.chatSession(t, nil, "BYPASS")
		w := k.watch(t, sid)
		k.fake.Enqueue(callStream("c1", "mcp__files__fail", `{}`), callStream("c2", "mcp__files__structured", `{}`), openaitest_TextStream("ok"))
		k.send(t, sid, "go")
		w.turnEnd()
		var out struct {
			Session struct {
				Messages []struct {
					Role              string
					Text              string
					IsError           bool
					StructuredContent json.RawMessage
				}
			}
		}
		k.mustDo(t, `query($s: ID!) { session(id: $s) { messages { role text isError structuredContent } } }`, map[string]any{"s": sid}, &out)
		var tools []int
		for i, m := range out.Session.Messages {
			if m.Role == "TOOL" {
				tools = append(tools, i)
			}
		}
		fail, st := out.Session.Messages[tools[0]], out.Session.Messages[tools[1]]
		if !fail.IsError || fail.Text != "it broke: disk on fire" {
			t.Fatalf("fail %+v", fail)
		}
		if st.IsError || st.Text != `{"answer":42}` || string(st.StructuredContent) != `{"answer":42}` {
			t.Fatalf("structured %+v %s", st, st.StructuredContent)
		}
	})

	t.Run("image reaches a vision model, a note reaches the others", func(t *testing.T) {
		for _, vision := range []bool{true, false} {
			sid := k.chatSession(t, map[string]any{"imageInput": vision}, "EXPLORE")
			w := k.watch(t, sid)
			n := len(k.fake.Requests())
			k.fake.Enqueue(callStream("c1", "mcp__files__image", `{}`), openaitest_TextStream("a red dot"))
			k.send(t, sid, "look")
			w.turnEnd()
			m := lastToolMessage(t, k.messages(t, sid))
			if !strings.Contains(m.Text, "here is the picture") || !strings.Contains(m.Text, "caption: a red dot") {
				t.Fatalf("tool text %q", m.Text)
			}
			body := string(k.fake.Requests()[n+1].Body)
			hasImage := strings.Contains(body, `"url":"data:image/png;base64,`)
			if hasImage != vision || (!vision && !strings.Contains(body, "does not accept images")) {
				t.Fatalf("vision %t: second request %s", vision, body)
			}
		}
	})

	t.Run("server killed mid-call: tool error, restart, next call works", func(t *testing.T) {
		sid := k.chatSession(t, nil, "BYPASS")
		w := k.watch(t, sid)
		k.fake.Enqueue(callStream("c1", "mcp__files__crash", `{}`), callStream("c2", "mcp__files__echo", `{"text":"again"}`), openaitest_TextStream("ok"))
		k.send(t, sid, "crash")
		w.turnEnd()
		var tools []msgJSON
		for _, m := range k.messages(t, sid) {
			if m.Role == "TOOL" {
				tools = append(tools, m)
			}
		}
		if len(tools) != 2 || !tools[0].IsError || !strings.Contains(tools[0].Text, "stopped during the call") {
			t.Fatalf("crash result %+v", tools)
		}
		if tools[1].IsError || tools[1].Text != "echo: again" {
			t.Fatalf("call after restart %+v", tools[1])
		}
		k.waitStatus(t, created.ID, "READY")
	})

	t.Run("list_changed", func(t *testing.T) {
		sid := k.chatSession(t, nil, "BYPASS")
		w := k.watch(t, sid)
		k.fake.Enqueue(callStream("c1", "mcp__files__grow", `{}`), openaitest_TextStream("grown"))
		k.send(t, sid, "grow")
		w.turnEnd()
		k.waitMCP(t, created.ID, "listed the late tool", func(s mcpServerJSON) bool { ok, _ := s.tool("late"); return ok })
		k.fake.Enqueue(callStream("c2", "mcp__files__late", `{}`), openaitest_TextStream("ok"))
		k.send(t, sid, "late")
		w.turnEnd()
		if m := lastToolMessage(t, k.messages(t, sid)); m.IsError || m.Text != "late tool ran" {
			t.Fatalf("late %+v", m)
		}
	})

	t.Run("cancellation reaches the server", func(t *testing.T) {
		sid := k.chatSession(t, nil, "BYPASS")
		w := k.watch(t, sid)
		k.fake.Enqueue(callStream("c1", "mcp__files__slow", `{}`))
		k.send(t, sid, "slow")
		waitFile(t, mark, "started slow")
		k.mustDo(t, `mutation($s: ID!) { stopTurn(sessionId: $s) { id } }`, map[string]any{"s": sid}, nil)
		if p := w.turnEnd(); p.Status != core.TurnCancelled {
			t.Fatalf("turn %+v", p)
		}
		waitFile(t, mark, "cancelled slow")
	})

	if strings.Contains(k.responses.String(), "s3cret-token") || strings.Contains(k.logs.String(), "s3cret-token") {
		t.Fatal("an env value reached an API answer or the log")
	}
}

func TestMCPHTTPEndToEnd(t *testing.T) {
	t.Parallel()
	k := newMCPKernel(t)
	obs := &mcptest.Observer{Started: make(chan string, 4), Cancelled: make(chan string, 4)}
	server := mcptest.NewServer(obs, "")
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(func() {
		k.host.Close() // the client's streams end before the server closes
		hs.CloseClientConnections()
		hs.Close()
	})
	created := k.createMCP(t, map[string]any{"name": "web tools", "transport": "HTTP", "url": hs.URL,
		"headers": []any{map[string]any{"key": "Authorization", "value": "Bearer http-secret"}}, "timeoutSeconds": 30})
	if !slices.Equal(created.HeaderKeys, []string{"Authorization"}) || created.URL == nil || *created.URL != hs.URL || created.TimeoutSeconds != 30 {
		t.Fatalf("created %+v", created)
	}
	srv := k.waitStatus(t, created.ID, "READY")
	if srv.ProtocolVersion == nil || *srv.ProtocolVersion == "" {
		t.Fatalf("protocol version %+v", srv)
	}

	sid := k.chatSession(t, nil, "EXPLORE")
	w := k.watch(t, sid)
	k.fake.Enqueue(callStream("c1", "mcp__web_tools__echo", `{"text":"over http"}`), openaitest_TextStream("ok"))
	k.send(t, sid, "echo")
	w.turnEnd()
	if m := lastToolMessage(t, k.messages(t, sid)); m.IsError || m.Text != "echo: over http" {
		t.Fatalf("echo %+v", m)
	}
	if h := obs.SeenHeaders(); len(h) == 0 || h[len(h)-1] != "Bearer http-secret" {
		t.Fatalf("headers seen %q", h)
	}

	// A non-read tool asks in ASK mode; denied.
	sid = k.chatSession(t, nil, "ASK")
	w = k.watch(t, sid)
	k.fake.Enqueue(callStream("c1", "mcp__web_tools__note", `{"text":"x"}`), openaitest_TextStream("ok"))
	k.send(t, sid, "note")
	var req core.ApprovalPayload
	_ = w.next(core.EventApprovalRequested).Decode(&req)
	k.mustDo(t, `mutation($s: ID!, $r: ID!) { resolveApproval(sessionId: $s, requestId: $r, decision: DENIED) }`, map[string]any{"s": sid, "r": req.RequestID}, nil)
	w.turnEnd()
	if m := lastToolMessage(t, k.messages(t, sid)); !m.IsError || !strings.Contains(m.Text, "denied") {
		t.Fatalf("ask %+v", m)
	}

	// list_changed over HTTP.
	sid = k.chatSession(t, nil, "BYPASS")
	w = k.watch(t, sid)
	k.fake.Enqueue(callStream("c1", "mcp__web_tools__grow", `{}`), openaitest_TextStream("ok"))
	k.send(t, sid, "grow")
	w.turnEnd()
	k.waitMCP(t, created.ID, "listed the late tool", func(s mcpServerJSON) bool { ok, _ := s.tool("late"); return ok })

	// Cancellation: stopTurn cancels the call on the server.
	k.fake.Enqueue(callStream("c2", "mcp__web_tools__slow", `{}`))
	k.send(t, sid, "slow")
	<-obs.Started
	k.mustDo(t, `mutation($s: ID!) { stopTurn(sessionId: $s) { id } }`, map[string]any{"s": sid}, nil)
	w.turnEnd()
	select {
	case <-obs.Cancelled:
	case <-time.After(20 * time.Second):
		t.Fatal("the HTTP server never saw the cancellation")
	}
	// Two calls of one reply run concurrently (pair returns only when both
	// run at once), under the server's timeoutSeconds.
	sid = k.chatSession(t, nil, "BYPASS")
	w = k.watch(t, sid)
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "p1", "mcp__web_tools__pair", `{"text":"a"}`), ""),
		chunk(toolCallDelta(1, "p2", "mcp__web_tools__pair", `{"text":"b"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest_TextStream("ok"))
	k.send(t, sid, "pair")
	w.turnEnd()
	var paired []string
	for _, m := range k.messages(t, sid) {
		if m.Role == "TOOL" {
			paired = append(paired, m.Text)
		}
	}
	if !slices.Equal(paired, []string{"paired a", "paired b"}) {
		t.Fatalf("concurrent calls %q", paired)
	}

	// timeoutSeconds: the call ends as a tool error and is cancelled on
	// the server. The update restarts the server with the new setting.
	k.mustDo(t, `mutation($id: ID!) { updateMcpServer(id: $id, input: {name: "web tools", transport: HTTP, timeoutSeconds: 1}) { id } }`, map[string]any{"id": created.ID}, nil)
	k.waitStatus(t, created.ID, "READY")
	k.fake.Enqueue(callStream("c3", "mcp__web_tools__slow", `{}`), openaitest_TextStream("ok"))
	k.send(t, sid, "slow again")
	w.turnEnd()
	if m := lastToolMessage(t, k.messages(t, sid)); !m.IsError || !strings.Contains(m.Text, "timed out after 1s") {
		t.Fatalf("timeout %+v", m)
	}
	select {
	case <-obs.Cancelled:
	case <-time.After(20 * time.Second):
		t.Fatal("the timed-out call was not cancelled on the server")
	}
	if strings.Contains(k.responses.String(), "http-secret") || strings.Contains(k.logs.String(), "http-secret") {
		t.Fatal("a header value reached an API answer or the log")
	}
}

func TestMCPServerCatalog(t *testing.T) {
	t.Parallel()
	k := newMCPKernel(t)
	const create = `mutation($in: McpServerInput!) { createMcpServer(input: $in) { id } }`
	for name, tc := range map[string]struct {
		in   map[string]any
		code string
		want string
	}{
		"no command":      {map[string]any{"name": "a", "transport": "STDIO"}, "BAD_INPUT", "input.command"},
		"no url":          {map[string]any{"name": "a", "transport": "HTTP"}, "BAD_INPUT", "input.url"},
		"bad url":         {map[string]any{"name": "a", "transport": "HTTP", "url": "ftp://x"}, "BAD_INPUT", "input.url"},
		"empty name":      {map[string]any{"name": " ", "transport": "STDIO", "command": "x"}, "BAD_INPUT", "input.name"},
		"bad env key":     {map[string]any{"name": "a", "transport": "STDIO", "command": "x", "env": []any{map[string]any{"key": "1X", "value": "v"}}}, "BAD_INPUT", "input.env"},
		"header on stdio": {map[string]any{"name": "a", "transport": "STDIO", "command": "x", "headers": []any{map[string]any{"key": "A", "value": "v"}}}, "BAD_INPUT", "input.headers"},
		"bad header":      {map[string]any{"name": "a", "transport": "HTTP", "url": "http://x", "headers": []any{map[string]any{"key": "A", "value": "v\nw"}}}, "BAD_INPUT", "input.headers"},
		"timeout":         {map[string]any{"name": "a", "transport": "HTTP", "url": "http://x", "timeoutSeconds": 99999}, "BAD_INPUT", "input.timeoutSeconds"},
	} {
		t.Run(name, func(t *testing.T) {
			msg := k.mustFail(t, tc.code, create, map[string]any{"in": tc.in})
			if !strings.Contains(msg, tc.want) || strings.Contains(msg, "v\nw") {
				t.Fatalf("message %q", msg)
			}
		})
	}

	off := k.createMCP(t, map[string]any{"name": "off", "transport": "STDIO", "command": "/nonexistent/mcp-server", "enabled": false,
		"env": []any{map[string]any{"key": "TOKEN", "value": "hidden-value"}}})
	if off.Status != "DISABLED" || off.Enabled {
		t.Fatalf("disabled %+v", off)
	}
	k.mustFail(t, "CONFLICT", create, map[string]any{"in": map[string]any{"name": "off", "transport": "STDIO", "command": "x"}})
	k.mustFail(t, "CONFLICT", `mutation($id: ID!) { restartMcpServer(id: $id) { id } }`, map[string]any{"id": off.ID})
	k.mustFail(t, "NOT_FOUND", `mutation { deleteMcpServer(id: "mcp_nope") }`, nil)
	k.mustFail(t, "NOT_FOUND", `mutation { updateMcpServer(id: "mcp_nope", input: {name: "x", transport: STDIO, command: "x"}) { id } }`, nil)

	// Enabling it: a command that cannot start fails repeatedly, then FAILED
	// with the reason; env is kept when left out of the update.
	var upd struct{ UpdateMcpServer mcpServerJSON }
	k.mustDo(t, `mutation($id: ID!) { updateMcpServer(id: $id, input: {name: "off", transport: STDIO, enabled: true}) { `+mcpFields+` } }`, map[string]any{"id": off.ID}, &upd)
	if !slices.Equal(upd.UpdateMcpServer.EnvKeys, []string{"TOKEN"}) || !upd.UpdateMcpServer.Enabled {
		t.Fatalf("updated %+v", upd.UpdateMcpServer)
	}
	// Status changes are catalog_updated on kernelEvents, naming the server
	// (it keeps failing and restarting, so an event follows the subscription).
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws := dialWS(t, ctx, k.srv.URL)
	defer ws.conn.Close(websocket.StatusNormalClosure, "")
	// ready: the restart comes after the subscription is live (else a
	// loaded machine could see every attempt fail before it).
	ws.subscribe(ctx, "k", `subscription { kernelEvents(ready: true) { type mcpServerId } }`, nil)
	if m := ws.read(ctx); !strings.Contains(string(m.Payload), `"subscribed"`) {
		t.Fatalf("first kernel event %s %s, want subscribed", m.Type, m.Payload)
	}
	k.mustDo(t, `mutation($id: ID!) { restartMcpServer(id: $id) { id } }`, map[string]any{"id": off.ID}, nil)
	for {
		m := ws.read(ctx)
		if strings.Contains(string(m.Payload), `"mcpServerId":"`+off.ID+`"`) && strings.Contains(string(m.Payload), "catalog_updated") {
			break
		}
	}
	failed := k.waitStatus(t, off.ID, "FAILED")
	if failed.Error == nil || !strings.Contains(*failed.Error, "3 failures in a row") {
		t.Fatalf("failed %+v", failed)
	}
	var rs struct{ RestartMcpServer mcpServerJSON }
	k.mustDo(t, `mutation($id: ID!) { restartMcpServer(id: $id) { `+mcpFields+` } }`, map[string]any{"id": off.ID}, &rs)
	if rs.RestartMcpServer.Status != "STARTING" {
		t.Fatalf("restart %+v", rs.RestartMcpServer)
	}
	k.waitStatus(t, off.ID, "FAILED")

	// A process that exits at once fails the same way.
	exits := k.createMCP(t, map[string]any{"name": "exits", "transport": "STDIO", "command": "/bin/false"})
	k.waitStatus(t, exits.ID, "FAILED")

	k.mustDo(t, `mutation($id: ID!) { deleteMcpServer(id: $id) }`, map[string]any{"id": off.ID}, nil)
	var list struct{ McpServers []mcpServerJSON }
	k.mustDo(t, `{ mcpServers { id name } }`, nil, &list)
	if len(list.McpServers) != 1 || list.McpServers[0].Name != "exits" {
		t.Fatalf("after delete %+v", list.McpServers)
	}
	if strings.Contains(k.responses.String(), "hidden-value") || strings.Contains(k.logs.String(), "hidden-value") {
		t.Fatal("an env value was shown")
	}
}

// The npm reference server over stdio, when Node.js is present (always
// under CI=true, where .ci/run installs it).
func TestMCPEverythingServer(t *testing.T) {
	t.Parallel()
	if testing.Short() && !testenv.CI() {
		t.Skip("-short: skipping the npm MCP server check")
	}
	ci := os.Getenv("CI") == "true"
	npm, err := execLookPath("npm")
	node, err2 := execLookPath("node")
	if err != nil || err2 != nil {
		if ci {
			t.Fatal("CI=true but node/npm are missing: .ci/run installs them")
		}
		testenv.Optional(t, "node and npm are not installed: skipping the @modelcontextprotocol/server-everything check")
	}
	dir, _ := filepath.Abs(filepath.Join("..", "test", "mcp-everything"))
	entry := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		if err := npmCI(dir, npm, entry); err != nil {
			if ci {
				t.Fatalf("npm ci in %s: %v", dir, err)
			}
			t.Skipf("npm ci in %s failed (registry unreachable?): %v", dir, err)
		}
	}
	k := newMCPKernel(t)
	created := k.createMCP(t, map[string]any{"name": "everything", "transport": "STDIO", "command": node, "args": []string{entry, "stdio"}})
	srv := k.waitStatus(t, created.ID, "READY")
	if ok, _ := srv.tool("echo"); !ok {
		t.Fatalf("tools %+v", srv.Tools)
	}
	t.Logf("server-everything: protocol %s, %d tools", strOr(srv.ProtocolVersion), len(srv.Tools))
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(callStream("c1", "mcp__everything__echo", `{"message":"hello from foya"}`), openaitest_TextStream("ok"))
	k.send(t, sid, "echo")
	w.turnEnd()
	if m := lastToolMessage(t, k.messages(t, sid)); m.IsError || !strings.Contains(m.Text, "hello from foya") {
		t.Fatalf("echo %+v", m)
	}
}
