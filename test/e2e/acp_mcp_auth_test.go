package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestACPMCPSignIn signs in to an OAuth MCP server through ACP's auth
// methods: initialize lists "mcp:<id>" for the server in NEEDS_AUTH;
// authenticate with it gets the sign-in URL from the kernel, hands it to
// the browser (xdg-open, here a script that records it) and answers once
// the "browser" has come back through the kernel's callback and the server
// is READY. Any other method id is invalid params.
func TestACPMCPSignIn(t *testing.T) {
	as := startOAuthAS(t, 60)
	srv := startProtectedMCP(t, as)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.mustRun(t, "", "mcp", "add", "docs", "--addr", k.addr, "--url", srv.url, "--wait", "0")
	st, _ := waitMCPStatus(t, k, "docs", "NEEDS_AUTH")

	bin := t.TempDir()
	opened := filepath.Join(bin, "opened")
	script := "#!/bin/sh\nprintf '%s\\n' \"$1\" > " + opened + ".tmp && mv " + opened + ".tmp " + opened + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	p := startACP(t, "--addr", k.addr)

	var ini struct {
		AuthMethods []struct{ ID, Name, Description string }
	}
	p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, &ini)
	if len(ini.AuthMethods) != 1 || ini.AuthMethods[0].ID != "mcp:"+st.ID || !strings.Contains(ini.AuthMethods[0].Name, "docs") {
		t.Fatalf("authMethods: %+v", ini.AuthMethods)
	}
	if m := p.await(p.start("authenticate", map[string]any{"methodId": "agent-login"}), "authenticate unknown"); m.Error == nil || m.Error.Code != -32602 {
		t.Fatalf("authenticate with an unknown method: %+v", m)
	}

	done := p.start("authenticate", map[string]any{"methodId": "mcp:" + st.ID})
	var url []byte
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if url, _ = os.ReadFile(opened); len(url) > 0 {
			break
		}
	}
	authURL := string(bytes.TrimSpace(url))
	if !strings.HasPrefix(authURL, as.issuer+"/authorize?") {
		t.Fatalf("the browser got %q", authURL)
	}
	if code, page := followAuthURL(t, authURL); code != 200 || !strings.Contains(page, "Signed in") {
		t.Fatalf("callback page %d:\n%s", code, page)
	}
	if m := p.await(done, "authenticate"); m.Error != nil {
		t.Fatalf("authenticate: %+v\n%s", m.Error, p.stderrText())
	}
	if st, _ := waitMCPStatus(t, k, "docs", "READY"); len(st.Tools) == 0 {
		t.Fatalf("signed-in server lists no tools: %+v", st)
	}
	var again struct{ AuthMethods []any }
	p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, &again)
	if len(again.AuthMethods) != 0 {
		t.Fatalf("a signed-in server is still an auth method: %+v", again.AuthMethods)
	}
}
