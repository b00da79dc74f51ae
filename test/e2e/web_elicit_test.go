package e2e

import (
	"bytes"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// TestWebClientElicitation answers an MCP server's question (elicitation/
// create from the test binary's stdio MCP server, tool "ask") in Foya web
// (test/web/elicit.mjs): the form's required field is checked in the page,
// the typed value reaches the server, and the model reads the server's
// answer ("action=accept name=Ada").
func TestWebClientElicitation(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	o.addTestMCPServer(t, k)
	fake.Enqueue(toolCallResponse("call_ask", "mcp__files__ask", `{}`), openaitest.TextStream("gpt-t", "Nice to meet you."))
	bypass := client.ApprovalModeBypass
	sid := k.createSession(t, client.CreateSessionInput{ApprovalMode: &bypass})
	k.sendMessage(t, sid, "ask me my name")
	runWebScript(t, 2*time.Minute, "elicit.mjs", k, "SESSION="+sid)
	var seen bool
	for _, req := range fake.Requests() {
		seen = seen || bytes.Contains(req.Body, []byte("action=accept name=Ada"))
	}
	if !seen {
		t.Fatal("the model never read the server's answer to the web client's form")
	}
}
