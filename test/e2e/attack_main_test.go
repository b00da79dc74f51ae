package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/edge/access"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// The attack of issue 28: a model (BYPASS, network on) makes bash POST
// createMcpServer to the kernel's own loopback API. The kernel requires its
// token on loopback too, and bash has no way to it: the token is not in the
// tool's environment (even when the kernel's environment holds it as
// FOYA_TOKEN) and the data directory, which holds the token file, is masked.
// Every attempt gets 401 and no MCP server is created.
func TestBashCannotDriveTheKernelAPI(t *testing.T) {
	base := outsideTmp(t)
	data := filepath.Join(base, "data")
	proj := filepath.Join(base, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	// The kernel's own token, also in its environment.
	tok, _, err := access.LoadOrCreateToken(filepath.Join(data, access.TokenFileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FOYA_TOKEN", tok)
	fake := openaitest.New(t)
	k := startKernel(t, data)
	if k.token != tok {
		t.Fatal("the kernel did not keep the token file it found")
	}
	namespaces := k.requireLandlock(t)
	sid := k.session(t, fake.BaseURL(), proj, "BYPASS")

	// Raw: the body the model's bash call sends to the kernel with curl.
	body := `{"query":"mutation { createMcpServer(input: {name: \"evil\", transport: STDIO, command: \"sh\", args: [\"-c\", \"id\"]}) { id } }"}`
	post := func(label, auth string) string {
		return fmt.Sprintf(`echo %s=$(curl -s -o /dev/null -w '%%{http_code}' -H 'Content-Type: application/json' %s --data '%s' http://%s/graphql)`,
			label, auth, body, k.addr)
	}
	script := strings.Join([]string{
		post("none", ""),
		post("env", `-H "Authorization: Bearer ${FOYA_TOKEN:-none}"`),
		post("file", fmt.Sprintf(`-H "Authorization: Bearer $(cat %s/auth-token 2>/dev/null || echo none)"`, data)),
		post("guess", `-H "Authorization: Bearer AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"`),
		`echo envtokens=$(env | grep -c -i token)`,
		fmt.Sprintf(`echo data=$(ls -A %s 2>&1 | tr '\n' ' ')`, data),
		fmt.Sprintf(`cat %s/auth-token 2>&1 | head -c 300`, data),
	}, "\n")
	msgs := k.runTools(t, fake, sid, toolCall("c1", "bash", map[string]any{"command": script}))
	out := msgs[0].Text
	t.Logf("bash output:\n%s", out)
	if strings.Contains(out, tok) {
		t.Fatalf("bash saw the kernel's token:\n%s", out)
	}
	for _, label := range []string{"none", "env", "file", "guess"} {
		if !strings.Contains(out, label+"=401") {
			t.Errorf("the %s attempt did not get 401:\n%s", label, out)
		}
	}
	if !strings.Contains(out, "envtokens=0") {
		t.Errorf("a variable named *token* is in the tool's environment:\n%s", out)
	}
	if namespaces && strings.Contains(out, "foya.db") {
		t.Errorf("bash listed the data directory:\n%s", out)
	}
	servers, err := client.McpServers(context.Background(), k.client())
	if err != nil {
		t.Fatalf("mcpServers: %v", err)
	}
	if len(servers.McpServers) != 0 {
		t.Fatalf("an MCP server was created: %+v", servers.McpServers)
	}
	if strings.Count(k.Logs(), "authentication failed") < 4 {
		t.Errorf("the kernel did not log the refused attempts:\n%s", k.Logs())
	}
}
