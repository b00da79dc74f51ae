package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// TestACPServerQuestions answers an MCP server's questions (elicitation,
// the test binary's stdio server, tool "ask") through foya acp: the
// question reaches the client as a message saying how to answer or refuse;
// "/decline" declines the first, a plain value accepts the second, and the
// model reads both of the server's answers in one turn.
func TestACPServerQuestions(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	o.addTestMCPServer(t, k)
	fake.Enqueue(toolCallResponse("call_a", "mcp__files__ask", `{}`), toolCallResponse("call_b", "mcp__files__ask", `{}`),
		openaitest.TextStream("gpt-t", "Thanks, Ada."))
	proj := filepath.Join(t.TempDir(), "proj")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	p := startACP(t, "--addr", k.addr)
	p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil)
	var ns struct{ SessionID string }
	p.call("session/new", map[string]any{"cwd": proj, "mcpServers": []any{}}, &ns)
	sid := ns.SessionID
	p.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": "bypass"}, nil)
	prompt := func(text string) <-chan acpMsg {
		return p.start("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}})
	}
	asked := func(mark int) {
		p.waitFor(mark, "a server question", func(u map[string]any) bool {
			c, _ := u["content"].(map[string]any)
			text, _ := c["text"].(string)
			return strings.Contains(text, "Your name?") && strings.Contains(text, "/decline")
		})
	}
	mark := p.mark()
	first := prompt("ask me twice")
	asked(mark)
	mark = p.mark()
	declined := prompt("/decline")
	asked(mark)
	accepted := prompt("Ada")
	for _, ch := range []<-chan acpMsg{first, declined, accepted} {
		if m := p.await(ch, "prompt"); m.Error != nil {
			t.Fatalf("session/prompt: %+v\n%s", m.Error, p.stderrText())
		}
	}
	var sawDecline, sawAccept bool
	for _, req := range fake.Requests() {
		sawDecline = sawDecline || bytes.Contains(req.Body, []byte("action=decline"))
		sawAccept = sawAccept || bytes.Contains(req.Body, []byte("action=accept name=Ada"))
	}
	if !sawDecline || !sawAccept {
		t.Fatalf("the model read decline %v, accept %v", sawDecline, sawAccept)
	}
}
