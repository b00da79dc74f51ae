package e2e

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// foya connections set and foya mcp set: moving a key or secret headers to
// another origin without giving them again is refused with the kernel's
// BAD_INPUT and the flag to add, nothing changes, and the new host gets no
// request.
func TestEndpointSetCommandsKeepKeysBound(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer evil.Close()
	k := startKernel(t, t.TempDir())
	var o outputs
	o.mustRun(t, cliTestKey+"\n", "connections", "add", "--addr", k.addr, "--name", "main", "--base-url", "https://api.example.test/v1", "--api-key-stdin", "--model", "m")

	r := o.run(t, "", "connections", "set", "main", "--addr", k.addr, "--base-url", evil.URL+"/v1")
	if r.code != 1 || !strings.Contains(r.stderr, "(BAD_INPUT)") || !strings.Contains(r.stderr, "--api-key-env NAME or --api-key-stdin") {
		t.Fatalf("set --base-url without a key: exit %d\n%s", r.code, r.stderr)
	}
	o.run(t, "", "connections", "models", "main", "--addr", k.addr)
	if n := hits.Load(); n != 0 {
		t.Fatalf("the new host got %d requests", n)
	}
	r = o.mustRun(t, "", "connections", "list", "--addr", k.addr)
	if !strings.Contains(r.stdout, "https://api.example.test/v1") || strings.Contains(r.stdout, evil.URL) {
		t.Fatalf("the refused change was applied:\n%s", r.stdout)
	}
	r = o.mustRun(t, "sk-for-the-new-host\n", "connections", "set", "main", "--addr", k.addr, "--base-url", evil.URL+"/v1", "--api-key-stdin")
	if !strings.Contains(r.stdout, evil.URL) {
		t.Fatalf("set with a key:\n%s", r.stdout)
	}
	if r := o.run(t, "", "connections", "set", "main", "--addr", k.addr); r.code != 2 {
		t.Fatalf("set without changes: exit %d", r.code)
	}

	const secret = "mcp-header-secret-9d1e"
	o.mustRun(t, "", "mcp", "add", "web", "--addr", k.addr, "--url", "http://127.0.0.1:1/mcp", "--header", "Authorization=Bearer "+secret, "--disabled", "--wait", "0")
	r = o.run(t, "", "mcp", "set", "web", "--addr", k.addr, "--url", evil.URL+"/mcp")
	if r.code != 1 || !strings.Contains(r.stderr, "(BAD_INPUT)") || !strings.Contains(r.stderr, "--header K=V (or --no-headers)") {
		t.Fatalf("mcp set --url without headers: exit %d\n%s", r.code, r.stderr)
	}
	r = o.mustRun(t, "", "mcp", "list", "--addr", k.addr)
	if strings.Contains(r.stdout, evil.URL) {
		t.Fatalf("the refused change was applied:\n%s", r.stdout)
	}
	r = o.mustRun(t, "", "mcp", "set", "web", "--addr", k.addr, "--url", evil.URL+"/mcp", "--no-headers")
	if !strings.Contains(r.stdout, evil.URL) || strings.Contains(r.stdout, "header:Authorization") {
		t.Fatalf("mcp set with --no-headers:\n%s", r.stdout)
	}
	o.checkNoKey(t)
	for _, s := range append(o.all, k.Logs()) {
		if strings.Contains(s, secret) {
			t.Fatalf("a header value was printed:\n%s", s)
		}
	}
}
