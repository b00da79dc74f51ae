package e2e

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// `foya exec` without a terminal declines an MCP server's question
// (elicitation) instead of failing, and the server hears "decline".
func TestExecDeclinesServerQuestion(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	o.addTestMCPServer(t, k)
	fake.Enqueue(toolCallResponse("call_ask", "mcp__files__ask", `{}`), openaitest.TextStream("gpt-t", "Fine."))
	r := o.mustRun(t, "", "exec", "--addr", k.addr, "--no-project", "--approval-mode", "bypass", "ask me")
	if !strings.Contains(r.stderr+r.stdout, `MCP server "files" asks: Your name?`) || !strings.Contains(r.stderr+r.stdout, "declined") {
		t.Fatalf("exec output:\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
	var seen bool
	for _, req := range fake.Requests() {
		seen = seen || bytes.Contains(req.Body, []byte("action=decline"))
	}
	if !seen {
		t.Fatal("the model never saw the declined result")
	}
}

// addTestMCPServer adds the test binary as the kernel-wide STDIO MCP server
// "files" (plugins/mcphost/mcptest: echo, ask — which elicits "Your
// name?" —, slow, crash, …).
func (o *outputs) addTestMCPServer(t *testing.T, k *kernelProc) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o.mustRun(t, "", "mcp", "add", "files", "--addr", k.addr, "--env", "FOYA_MCPTEST_STDIO=1", "--", exe, "-test.run=^$")
}
