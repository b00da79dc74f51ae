package e2e

import (
	"testing"
	"time"
)

// TestWebClientMCPSignIn signs in to an OAuth MCP server from Foya web
// (test/web/mcp-signin.mjs) against the npm oauth2-mock-server and a go-sdk
// server that takes only its tokens: the MCP servers list shows the server
// NEEDS_AUTH with a "Sign in" link (its authUrl, opened without an opener
// handle); the new tab passes the authorization server and lands on the
// kernel's callback page; the list shows the server READY through
// kernelEvents, and the kernel agrees.
func TestWebClientMCPSignIn(t *testing.T) {
	t.Parallel()
	as := startOAuthAS(t, 60)
	srv := startProtectedMCP(t, as)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.mustRun(t, "", "mcp", "add", "docs", "--addr", k.addr, "--url", srv.url, "--wait", "0")
	waitMCPStatus(t, k, "docs", "NEEDS_AUTH")
	runWebScript(t, 2*time.Minute, "mcp-signin.mjs", k, "MCP_NAME=docs", "AS_ISSUER="+as.issuer)
	if st, _ := waitMCPStatus(t, k, "docs", "READY"); len(st.Tools) == 0 {
		t.Fatalf("signed-in server lists no tools: %+v", st)
	}
}
