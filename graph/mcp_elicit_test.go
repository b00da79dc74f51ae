package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/internal/testenv"
	"github.com/foya-dev/foya/plugins/mcphost"
)

// elicitServer is a go-sdk MCP server over HTTP whose tools ask the client:
// profile (a form), login (a URL).
func elicitServer(t *testing.T) string {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "elicit", Version: "1"}, nil)
	reply := func(res *mcp.ElicitResult, err error) (*mcp.CallToolResult, any, error) {
		if err != nil {
			return nil, nil, err
		}
		content, _ := json.Marshal(res.Content)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("action=%s content=%s", res.Action, content)}}}, nil, nil
	}
	mcp.AddTool(server, &mcp.Tool{Name: "profile"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return reply(req.Session.Elicit(ctx, &mcp.ElicitParams{
			Message: "Who are you?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{
				"name":{"type":"string","title":"Name","minLength":2},
				"age":{"type":"integer","minimum":0,"maximum":150},
				"color":{"type":"string","oneOf":[{"const":"r","title":"Red"},{"const":"b","title":"Blue"}]},
				"subscribe":{"type":"boolean","default":false}},
				"required":["name"]}`),
		}))
	})
	mcp.AddTool(server, &mcp.Tool{Name: "login"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return reply(req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: "Sign in to Example", URL: "https://example.com/login?x=1", ElicitationID: "el-1"}))
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(func() {
		hs.CloseClientConnections() // the kernel's client may still hold its stream open
		hs.Close()
	})
	return hs.URL
}

const answerMutation = `mutation($s: ID!, $r: ID!, $a: String!, $x: QuestionAction) { answerQuestion(sessionId: $s, requestId: $r, answer: $a, action: $x) }`

// askTool runs one call of tool in a new turn and returns its question.
func askTool(t *testing.T, k *mcpKernel, w *watcher, sid, tool string) core.QuestionPayload {
	t.Helper()
	k.fake.Enqueue(callStream("c_"+tool, tool, `{}`), openaitest_TextStream("ok"))
	k.send(t, sid, "go")
	var q core.QuestionPayload
	if err := w.next(core.EventQuestionRequested).Decode(&q); err != nil {
		t.Fatal(err)
	}
	if q.Elicitation == nil || q.ToolCallID != "c_"+tool {
		t.Fatalf("question %+v", q)
	}
	return q
}

// An MCP server's elicitation/create (go-sdk server) becomes a question on
// the calling session; answers are checked against its fields and reach
// the server as accept, decline or cancel.
func TestMCPElicitation(t *testing.T) {
	t.Parallel()
	k := newMCPKernel(t)
	srv := k.createMCP(t, map[string]any{"name": "el", "transport": "HTTP", "url": elicitServer(t)})
	k.waitStatus(t, srv.ID, "READY")
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)

	t.Run("accept", func(t *testing.T) {
		q := askTool(t, k, w, sid, "mcp__el__profile")
		el := q.Elicitation
		if el.Server != "el" || el.Mode != "form" || el.Message != "Who are you?" || len(el.Fields) != 4 {
			t.Fatalf("elicitation %+v", el)
		}
		// The SDK hands the schema over as a map: fields come in name order.
		if f := el.Fields[2]; f.Name != "name" || !f.Required || f.Title != "Name" || f.MinLength == nil || *f.MinLength != 2 {
			t.Fatalf("fields and their flags: %+v", el.Fields)
		}
		if f := el.Fields[1]; f.Name != "color" || len(f.Options) != 2 || f.Options[1].Value != "b" || f.Options[1].Title != "Blue" {
			t.Fatalf("choice %+v", f)
		}
		if !strings.Contains(q.Question, "Who are you?") {
			t.Fatalf("question text %q", q.Question)
		}
		for answer, want := range map[string]string{
			`{"age":3}`:                  "answer.name: required",
			`{"name":"Ada","age":-1}`:    "answer.age: at least 0",
			`{"name":"Ada","age":"old"}`: "answer.age: want a integer",
			`{"name":"Ada","color":"g"}`: `answer.color: "g" is not one of r, b`,
			`{"name":"Ada","nick":"A"}`:  "answer.nick: no such field",
			`Ada`:                        "give a JSON object with the fields age, color, name, subscribe",
		} {
			if msg := k.mustFail(t, "BAD_INPUT", answerMutation, map[string]any{"s": sid, "r": q.RequestID, "a": answer}); !strings.Contains(msg, want) {
				t.Fatalf("answer %s: %q, want %q", answer, msg, want)
			}
		}
		k.mustDo(t, answerMutation, map[string]any{"s": sid, "r": q.RequestID, "a": `{"name":"Ada","age":36,"color":"b","subscribe":true}`}, nil)
		k.mustFail(t, "CONFLICT", answerMutation, map[string]any{"s": sid, "r": q.RequestID, "a": `{"name":"Bob"}`})
		var a core.QuestionPayload
		if err := w.next(core.EventQuestionAnswered).Decode(&a); err != nil || a.Action != "accept" || a.Content["name"] != "Ada" {
			t.Fatalf("answered %+v %v", a, err)
		}
		w.turnEnd()
		m := lastToolMessage(t, k.messages(t, sid))
		if m.IsError || !strings.Contains(m.Text, `action=accept content={"age":36,"color":"b","name":"Ada","subscribe":true}`) {
			t.Fatalf("tool result %+v", m)
		}
	})
	for _, action := range []string{"DECLINE", "CANCEL"} {
		t.Run(strings.ToLower(action), func(t *testing.T) {
			q := askTool(t, k, w, sid, "mcp__el__profile")
			k.mustDo(t, answerMutation, map[string]any{"s": sid, "r": q.RequestID, "a": "", "x": action}, nil)
			w.turnEnd()
			if m := lastToolMessage(t, k.messages(t, sid)); !strings.Contains(m.Text, "action="+strings.ToLower(action)+" content=null") {
				t.Fatalf("tool result %+v", m)
			}
		})
	}
	t.Run("url", func(t *testing.T) {
		q := askTool(t, k, w, sid, "mcp__el__login")
		if el := q.Elicitation; el.Mode != "url" || el.URL != "https://example.com/login?x=1" || el.ElicitationID != "el-1" || !strings.Contains(q.Question, el.URL) {
			t.Fatalf("url elicitation %+v %q", el, q.Question)
		}
		k.mustDo(t, answerMutation, map[string]any{"s": sid, "r": q.RequestID, "a": ""}, nil)
		w.turnEnd()
		if m := lastToolMessage(t, k.messages(t, sid)); !strings.Contains(m.Text, "action=accept content=null") {
			t.Fatalf("tool result %+v", m)
		}
	})
	t.Run("multi round-trip over stdio", func(t *testing.T) {
		// The go-sdk test server asks through InputRequests in its result
		// (protocol 2026-07-28): the SDK fulfils them within the call.
		st := k.createMCP(t, stdioServer(t, "st"))
		k.waitStatus(t, st.ID, "READY")
		q := askTool(t, k, w, sid, "mcp__st__ask")
		if len(q.Elicitation.Fields) != 1 || !strings.Contains(q.Question, "value alone") {
			t.Fatalf("one-field question %+v %q", q.Elicitation, q.Question)
		}
		k.mustDo(t, answerMutation, map[string]any{"s": sid, "r": q.RequestID, "a": " Ada "}, nil)
		w.turnEnd()
		if m := lastToolMessage(t, k.messages(t, sid)); m.IsError || !strings.Contains(m.Text, "action=accept name=Ada") {
			t.Fatalf("tool result %+v", m)
		}
	})
	t.Run("model question cannot be declined", func(t *testing.T) {
		k.fake.Enqueue(callStream("c_q", "question", `{"question":"Which colour?"}`), openaitest_TextStream("ok"))
		k.send(t, sid, "ask me")
		var q core.QuestionPayload
		if err := w.next(core.EventQuestionRequested).Decode(&q); err != nil {
			t.Fatal(err)
		}
		k.mustFail(t, "BAD_INPUT", answerMutation, map[string]any{"s": sid, "r": q.RequestID, "a": "", "x": "DECLINE"})
		k.mustDo(t, answerMutation, map[string]any{"s": sid, "r": q.RequestID, "a": "blue"}, nil)
		w.turnEnd()
	})
}

// A server's question nobody answers is declined after the elicitation
// timeout; the call's own timeout (1 s here) is paused meanwhile.
func TestMCPElicitationTimeout(t *testing.T) {
	t.Parallel()
	k := newMCPKernelWith(t, func(c *mcphost.Config) { c.ElicitationTimeout = 1500 * time.Millisecond })
	srv := k.createMCP(t, map[string]any{"name": "el", "transport": "HTTP", "url": elicitServer(t), "timeoutSeconds": 1})
	k.waitStatus(t, srv.ID, "READY")
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	q := askTool(t, k, w, sid, "mcp__el__profile")
	var a core.QuestionPayload
	if err := w.next(core.EventQuestionAnswered).Decode(&a); err != nil || a.Action != "decline" || !a.Cancelled || a.RequestID != q.RequestID {
		t.Fatalf("timed out %+v %v", a, err)
	}
	w.turnEnd()
	if m := lastToolMessage(t, k.messages(t, sid)); m.IsError || !strings.Contains(m.Text, "action=decline") {
		t.Fatalf("tool result %+v", m)
	}
	k.mustFail(t, "CONFLICT", answerMutation, map[string]any{"s": sid, "r": q.RequestID, "a": `{"name":"late"}`})
}

// The npm reference server's trigger-elicitation-request tool, answered,
// declined and left to time out.
func TestMCPEverythingElicitation(t *testing.T) {
	t.Parallel()
	node, entry := everythingServer(t)
	k := newMCPKernelWith(t, func(c *mcphost.Config) { c.ElicitationTimeout = 3 * time.Second })
	srv := k.createMCP(t, map[string]any{"name": "everything", "transport": "STDIO", "command": node, "args": []string{entry, "stdio"}})
	k.waitStatus(t, srv.ID, "READY")
	if ok, _ := k.mcpServer(t, srv.ID).tool("trigger-elicitation-request"); !ok {
		t.Fatal("server-everything did not offer trigger-elicitation-request: the elicitation capability was not sent")
	}
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	const tool = "mcp__everything__trigger-elicitation-request"

	q := askTool(t, k, w, sid, tool)
	if len(q.Elicitation.Fields) < 10 || !strings.Contains(q.Question, "- name (string, required): String") {
		t.Fatalf("fields %+v", q.Elicitation.Fields)
	}
	k.mustFail(t, "BAD_INPUT", answerMutation, map[string]any{"s": sid, "r": q.RequestID, "a": `{"integer":500}`})
	k.mustDo(t, answerMutation, map[string]any{"s": sid, "r": q.RequestID, "a": `{"name":"Ada Lovelace","integer":7,"untitledSingleSelectEnum":"Joey"}`}, nil)
	w.turnEnd()
	if m := lastToolMessage(t, k.messages(t, sid)); m.IsError || !strings.Contains(m.Text, "- Name: Ada Lovelace") || !strings.Contains(m.Text, "- Favorite Integer: 7") {
		t.Fatalf("accepted: %+v", m)
	}

	q = askTool(t, k, w, sid, tool)
	k.mustDo(t, answerMutation, map[string]any{"s": sid, "r": q.RequestID, "a": "", "x": "DECLINE"}, nil)
	w.turnEnd()
	if m := lastToolMessage(t, k.messages(t, sid)); !strings.Contains(m.Text, "User declined") {
		t.Fatalf("declined: %+v", m)
	}

	askTool(t, k, w, sid, tool) // nobody answers
	w.turnEnd()
	if m := lastToolMessage(t, k.messages(t, sid)); !strings.Contains(m.Text, "User declined") {
		t.Fatalf("timed out: %+v", m)
	}
}

// everythingServer returns node and the entry of the npm reference server,
// skipping without Node.js (outside CI).
func everythingServer(t *testing.T) (node, entry string) {
	t.Helper()
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
	entry = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		if err := npmCI(dir, npm, entry); err != nil {
			if ci {
				t.Fatalf("npm ci in %s: %v", dir, err)
			}
			t.Skipf("npm ci in %s failed (registry unreachable?): %v", dir, err)
		}
	}
	return node, entry
}
