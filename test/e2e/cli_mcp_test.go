package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/foya-dev/foya/plugins/mcphost/mcptest"
)

// The test binary doubles as a stdio MCP server for the kernel under test
// (init runs before TestMain builds anything).
func init() {
	if os.Getenv("FOYA_MCPTEST_STDIO") == "1" {
		if err := mcptest.ServeStdio(); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
}

func TestMCPCommands(t *testing.T) {
	t.Parallel()
	const envSecret, headerSecret = "mcp-env-secret-81c2", "mcp-header-secret-44d0"
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	k := startKernel(t, t.TempDir())
	var o outputs
	check := func() {
		t.Helper()
		for _, s := range append(o.all, k.Logs()) {
			if strings.Contains(s, envSecret) || strings.Contains(s, headerSecret) {
				t.Fatalf("a secret value was printed:\n%s", s)
			}
		}
	}

	r := o.mustRun(t, "", "mcp", "add", "files", "--addr", k.addr, "--env", "FOYA_MCPTEST_STDIO=1", "--env", "MCPTEST_TOKEN="+envSecret,
		"--", exe, "-test.run=^$")
	if !strings.Contains(r.stdout, "files") || !strings.Contains(r.stdout, "READY") || !strings.Contains(r.stdout, "mcp__files__echo") ||
		!strings.Contains(r.stdout, "env:MCPTEST_TOKEN") {
		t.Fatalf("mcp add output:\n%s\n%s", r.stdout, r.stderr)
	}
	r = o.mustRun(t, "", "mcp", "add", "web", "--addr", k.addr, "--url", "http://127.0.0.1:1/mcp", "--header", "Authorization=Bearer "+headerSecret, "--wait", "0")
	if !strings.Contains(r.stdout, "web") || !strings.Contains(r.stdout, "header:Authorization") {
		t.Fatalf("mcp add --url output:\n%s", r.stdout)
	}
	// Malformed K=V: refused without echoing the value.
	r = o.run(t, "", "mcp", "add", "x", "--addr", k.addr, "--env", envSecret, "--", "true")
	if r.code != 2 || !strings.Contains(r.stderr, "not KEY=VALUE") {
		t.Fatalf("malformed --env: exit %d %s", r.code, r.stderr)
	}
	r = o.run(t, "", "mcp", "add", "files", "--addr", k.addr, "--", "true")
	if r.code != 1 || !strings.Contains(r.stderr, "(CONFLICT)") {
		t.Fatalf("duplicate name: exit %d %s", r.code, r.stderr)
	}

	r = o.mustRun(t, "", "mcp", "list", "--addr", k.addr, "--json")
	var servers []cliMCPServer
	if err := json.Unmarshal([]byte(r.stdout), &servers); err != nil || len(servers) != 2 {
		t.Fatalf("mcp list --json: %v\n%s", err, r.stdout)
	}
	if servers[0].Name != "files" || servers[0].Status != "READY" || len(servers[0].Tools) == 0 || servers[0].ProtocolVersion == nil {
		t.Fatalf("files server %+v", servers[0])
	}

	r = o.mustRun(t, "", "mcp", "restart", "files", "--addr", k.addr)
	if !strings.Contains(r.stdout, "READY") {
		t.Fatalf("mcp restart output:\n%s", r.stdout)
	}
	o.mustRun(t, "", "mcp", "remove", "web", "--addr", k.addr)
	r = o.mustRun(t, "", "mcp", "list", "--addr", k.addr)
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "NAME") {
		t.Fatalf("mcp list after remove:\n%s", r.stdout)
	}
	check()
}

// What the test reads of `foya mcp list --json`.
type cliMCPServer struct {
	Name            string  `json:"name"`
	Status          string  `json:"status"`
	ProtocolVersion *string `json:"protocolVersion"`
	Tools           []struct {
		Name string `json:"name"`
	} `json:"tools"`
}
