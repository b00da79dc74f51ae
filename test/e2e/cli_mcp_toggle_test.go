package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/foya-dev/foya/client"
)

// `foya mcp disable NAME --session ID` turns a server off for one session
// (Session.disabledMcpServerIds), `foya mcp enable` on again.
func TestMCPSessionToggleCommands(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addTestMCPServer(t, k)
	sid := k.createSession(t, client.CreateSessionInput{Title: ptr("t")})
	disabled := func() []string {
		var out struct {
			Session struct{ DisabledMcpServerIds []string }
		}
		r, err := client.SessionDisabledMcpServers(context.Background(), k.client(), sid)
		if err != nil {
			t.Fatalf("disabledMcpServerIds: %v", err)
		}
		decodeAs(t, r, &out)
		return out.Session.DisabledMcpServerIds
	}
	r := o.mustRun(t, "", "mcp", "disable", "files", "--session", sid, "--addr", k.addr)
	if !strings.Contains(r.stdout, "is off for session "+sid) || len(disabled()) != 1 {
		t.Fatalf("disable: %s %v", r.stdout, disabled())
	}
	r = o.mustRun(t, "", "mcp", "enable", "files", "--session", sid, "--addr", k.addr)
	if !strings.Contains(r.stdout, "is on for session "+sid) || len(disabled()) != 0 {
		t.Fatalf("enable: %s %v", r.stdout, disabled())
	}
	if r = o.run(t, "", "mcp", "disable", "files", "--addr", k.addr); r.code != 2 || !strings.Contains(r.stderr, "--session is required") {
		t.Fatalf("without --session: exit %d %s", r.code, r.stderr)
	}
	if r = o.run(t, "", "mcp", "disable", "files", "--session", "ses_missing", "--addr", k.addr); r.code != 1 || !strings.Contains(r.stderr, "NOT_FOUND") {
		t.Fatalf("unknown session: exit %d %s", r.code, r.stderr)
	}
}
