package graph_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/internal/testenv"
)

// With the npm reference server (server-everything) over stdio: a message
// "/mcp__everything__args-prompt Paris state=Texas" is expanded by the
// server's prompt before it reaches the model, and the stored message
// shows the expansion; a resource attached with resources: [{serverId,
// uri}] reaches the model's request with its MIME type; a missing
// required argument is BAD_INPUT and sends nothing.
func TestMCPPromptExpansionAndResources(t *testing.T) {
	t.Parallel()
	if testing.Short() && !testenv.CI() {
		t.Skip("-short: skipping the npm MCP server check")
	}
	node, err := execLookPath("node")
	if err != nil {
		testenv.Optional(t, "node is not installed: skipping the server-everything prompt check")
	}
	dir, _ := filepath.Abs(filepath.Join("..", "test", "mcp-everything"))
	entry := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		testenv.Optional(t, "test/mcp-everything/node_modules is missing (npm ci there, as .ci/run does)")
	}
	k := newMCPKernel(t)
	created := k.createMCP(t, map[string]any{"name": "everything", "transport": "STDIO", "command": node, "args": []string{entry, "stdio"}})
	k.waitStatus(t, created.ID, "READY")
	var srv struct {
		McpServers []struct {
			ID        string
			Prompts   []struct{ Name string }
			Resources []struct {
				URI      string `json:"uri"`
				MimeType string `json:"mimeType"`
			}
		}
	}
	k.mustDo(t, `{ mcpServers { id prompts { name } resources { uri mimeType } } }`, nil, &srv)
	uri := ""
	for _, r := range srv.McpServers[0].Resources {
		if strings.HasSuffix(r.URI, "features.md") {
			uri = r.URI
		}
	}
	if uri == "" {
		t.Fatalf("no features.md resource: %+v", srv.McpServers[0].Resources)
	}

	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest_TextStream("Sunny."))
	k.send(t, sid, "/mcp__everything__args-prompt Paris state=Texas")
	w.turnEnd()
	msgs := k.messages(t, sid)
	if msgs[0].Text != "What's weather in Paris, Texas?" {
		t.Fatalf("stored message %q", msgs[0].Text)
	}
	if body := string(k.fake.Requests()[0].Body); !strings.Contains(body, "What's weather in Paris, Texas?") || strings.Contains(body, "/mcp__everything") {
		t.Fatalf("the model got %.300s", body)
	}

	// A required argument missing: BAD_INPUT, nothing sent.
	errs := k.do(t, `mutation($s: ID!) { sendMessage(sessionId: $s, input: {text: "/mcp__everything__args-prompt"}) { turnStarted } }`, map[string]any{"s": sid}).Errors
	if len(errs) == 0 || !strings.Contains(errs[0].Message, "needs city") || errs[0].Extensions.Code != "BAD_INPUT" {
		t.Fatalf("missing argument: %+v", errs)
	}

	k.fake.Enqueue(openaitest_TextStream("Read it."))
	k.mustDo(t, `mutation($s: ID!, $r: [McpResourceRefInput!]) { sendMessage(sessionId: $s, input: {text: "summarize", resources: $r}) { turnStarted } }`,
		map[string]any{"s": sid, "r": []map[string]any{{"serverId": created.ID, "uri": uri}}}, nil)
	w.turnEnd()
	reqs := k.fake.Requests()
	body := string(reqs[len(reqs)-1].Body)
	for _, want := range []string{`mimeType=\"text/markdown\"`, "Everything Server - Features", "summarize"} {
		if !strings.Contains(body, want) {
			t.Fatalf("the model's request lacks %s: %.600s", want, body)
		}
	}
}
