package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/internal/testenv"
)

// npmCheck installs the locked npm packages of test/<dir> when they are
// missing and returns node and the directory; without Node.js and npm the
// check is skipped (it fails under CI=true).
func npmCheck(t *testing.T, dir, what, marker string) (node, abs string) {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		testenv.Optional(t, "npm is not installed: skipping the %s check (install Node.js and npm to run it)", what)
	}
	node, err = exec.LookPath("node")
	if err != nil {
		testenv.Optional(t, "node is not installed: skipping the %s check", what)
	}
	abs = repoPath("test", dir)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := testenv.NPMInstall(ctx, npm, abs, marker); err != nil {
		t.Fatalf("npm ci in test/%s: %v\n%s", dir, err, out)
	}
	return node, abs
}

func runNode(t *testing.T, k *kernelProc, node, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FOYA_TOKEN="+k.token) // the scripts send it as a Bearer token
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// The npm graphql-http audit suite (GraphQL over HTTP, the spec's current
// draft) against a real kernel: no error and no warning. The suite sends
// its 61 requests at once (auditServer's Promise.all): on a loaded machine
// more than the default 16 per peer were in flight and the kernel refused
// the rest with RATE_LIMITED, as it should; the audit is of the protocol,
// so its kernel lets one peer have 128.
func TestGraphQLHTTPAudit(t *testing.T) {
	t.Parallel()
	node, dir := npmCheck(t, "graphql-http", "graphql-http audit", "graphql-http")
	k := startKernel(t, t.TempDir(), "--max-in-flight-per-peer", "128")
	out := runNode(t, k, node, dir, "audit.mjs", k.url()+"/graphql")
	if !strings.Contains(out, "0 warnings, 0 errors") {
		t.Fatalf("audit: %s", out)
	}
	t.Log(strings.TrimSpace(out))
}

// The npm graphql-ws client: server pings answered, `error` for a refused
// operation, next + complete for a query, @defer not offered.
func TestGraphQLWSClientProtocol(t *testing.T) {
	t.Parallel()
	node, dir := npmCheck(t, "node", "graphql-ws protocol", "graphql-ws")
	k := startKernel(t, t.TempDir(), "--ws-ping-interval", "1s")
	out := runNode(t, k, node, dir, "protocol.mjs", k.url())
	if !strings.Contains(out, "ok:") {
		t.Fatalf("node client: %s", out)
	}
	t.Log(strings.TrimSpace(out))
}

// A server that answers JSON but is not Foya (an Ollama or LM Studio port,
// the model server): every client command says so, with the address, and
// fails instead of printing an empty table.
func TestCLIRefusesAServerThatIsNotFoya(t *testing.T) {
	t.Parallel()
	for name, h := range map[string]http.HandlerFunc{
		"JSON 200 to anything": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"models":[],"object":"list","data":[]}`)
		},
		"JSON 404": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":"not found"}`)
		},
		"another GraphQL server": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"data":{"__typename":"Query","foya":null}}`)
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			addr := strings.TrimPrefix(srv.URL, "http://")
			var o outputs
			for _, args := range [][]string{
				{"connections", "list"},
				{"connections", "add", "--name", "x", "--base-url", "http://127.0.0.1:1/v1"},
				{"sessions", "list", "--json"},
			} {
				r := o.run(t, "", append(args, "--addr", addr)...)
				if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, addr) ||
					!(strings.Contains(r.stderr, "not a Foya kernel") || strings.Contains(r.stderr, "no Foya kernel answers")) {
					t.Fatalf("foya %v against %s: exit %d\nstdout: %q\nstderr: %q", args, name, r.code, r.stdout, r.stderr)
				}
			}
		})
	}
}

var tmpDefault = regexp.MustCompile(`\(default "[^"]*/foya"\)`)

// The small CLI points of issue 31.
func TestCLIHelps(t *testing.T) {
	t.Parallel()
	var o outputs
	// foya help CMD [SUB] is foya CMD [SUB] --help.
	for _, cmd := range [][]string{{"exec"}, {"connections"}, {"connections", "add"}, {"serve"}, {"version"}} {
		a := o.mustRun(t, "", append([]string{"help"}, cmd...)...)
		b := o.mustRun(t, "", append(cmd, "--help")...)
		// Each command runs with its own XDG_DATA_HOME: the --data-dir default differs.
		norm := func(s string) string { return tmpDefault.ReplaceAllString(s, `(default "TMP")`) }
		if norm(a.stdout) != norm(b.stdout) || a.stdout == "" {
			t.Fatalf("foya help %v differs from foya %v --help:\n%s\n---\n%s", cmd, cmd, a.stdout, b.stdout)
		}
	}
	// version --json.
	r := o.mustRun(t, "", "version", "--json")
	var v struct{ Version string }
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.Version == "" {
		t.Fatalf("version --json: %q %v", r.stdout, err)
	}
	// token show --json.
	r = o.mustRun(t, "", "token", "show", "--json", "--data-dir", t.TempDir())
	var tok struct{ Token, File string }
	if err := json.Unmarshal([]byte(r.stdout), &tok); err != nil || len(tok.Token) < 32 || !strings.HasSuffix(tok.File, "auth-token") {
		t.Fatalf("token show --json: %q %v", r.stdout, err)
	}
	// --addr's default appears once in a command's help.
	r = o.mustRun(t, "", "sessions", "list", "--help")
	if n := strings.Count(r.stdout, "127.0.0.1:4777"); n != 1 {
		t.Fatalf("--addr default shown %d times:\n%s", n, r.stdout)
	}
	// --json on every command that prints data.
	for _, cmd := range [][]string{{"connections", "list"}, {"connections", "models", "x"}, {"connections", "default"}, {"sessions", "list"}, {"sessions", "show", "x"}, {"mcp", "list"}, {"projects", "list"}, {"exec", "x"}, {"schema"}, {"version"}, {"token", "show"}} {
		r := o.mustRun(t, "", append(cmd, "--help")...)
		if !strings.Contains(r.stdout, "-json") {
			t.Fatalf("foya %v has no --json:\n%s", cmd, r.stdout)
		}
	}
	// --addr without a port is an error, not a kernel started elsewhere.
	data := t.TempDir()
	r = o.run(t, "", "sessions", "list", "--addr", "127.0.0.1", "--data-dir", data)
	if r.code != 2 || !strings.Contains(r.stderr, `--addr "127.0.0.1": give the kernel's host:port`) || strings.Contains(r.stderr, "started a kernel") {
		t.Fatalf("--addr without port: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// A kernel whose data directory is in use says how to reach the running one;
// its log has one sandbox line; /favicon.ico is served.
func TestServeSmallPoints(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	k := startKernel(t, data)
	cmd := exec.Command(foyaBin, "serve", "--addr", "127.0.0.1:0", "--data-dir", data)
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "in use by another foya kernel") || !strings.Contains(string(out), "--addr") {
		t.Fatalf("second kernel: %s", out)
	}
	// The tool plugin starts at its first call, or when a plugins query
	// asks for its sandbox: then its sandbox is logged, once.
	sandboxLines := func() int {
		return strings.Count(k.Logs(), `msg="tool sandbox"`) + strings.Count(k.Logs(), "tool processes of this plugin are not sandboxed")
	}
	if n := sandboxLines(); n != 0 {
		t.Fatalf("%d sandbox lines in the serve log before the tool plugin ran:\n%s", n, k.Logs())
	}
	for range 2 {
		resp, err := http.Post(k.url()+"/graphql", "application/json", strings.NewReader(`{"query":"{ plugins { name sandbox } }"}`))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(raw), `"name":"tools","sandbox":"`) {
			t.Fatalf("plugins { sandbox }: %s", raw)
		}
	}
	if n := sandboxLines(); n != 1 {
		t.Fatalf("%d sandbox lines in the serve log:\n%s", n, k.Logs())
	}
	resp, err := http.Get(k.url() + "/favicon.ico")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/x-icon" || !bytes.HasPrefix(b.Bytes(), []byte{0, 0, 1, 0, 1, 0}) {
		t.Fatalf("favicon: %s %s % x", resp.Status, resp.Header.Get("Content-Type"), b.Bytes()[:min(8, b.Len())])
	}
}

// A model request whose connection is refused before any byte is sent
// records no usage, not even an estimate.
func TestRefusedConnectionRecordsNoEstimate(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir(), "--retry-max-attempts", "1")
	var o outputs
	o.addFakeConnection(t, k.addr, "http://"+freeAddr(t)+"/v1")
	r := o.run(t, "", "exec", "--addr", k.addr, "--model", "fake/gpt-t", "--approval-mode", "bypass", "say hello")
	if r.code == 0 {
		t.Fatalf("exec against a refused connection succeeded: %s", r.stdout)
	}
	got, err := client.UsageTotals(context.Background(), k.client())
	if err != nil {
		t.Fatalf("usageTotals: %v", err)
	}
	if got.UsageTotals.TotalTokens != 0 {
		t.Fatalf("usage recorded for a request never sent: %+v\nexec stderr: %s", got.UsageTotals, r.stderr)
	}
}

// The npm graphql-sse client (distinct connections mode) still works: a
// query and a sessionEvents subscription over SSE.
func TestGraphQLSSEClient(t *testing.T) {
	t.Parallel()
	node, dir := npmCheck(t, "node", "graphql-sse client", "graphql-sse")
	k := startKernel(t, t.TempDir())
	out := runNode(t, k, node, dir, "sse.mjs", k.url())
	if !strings.Contains(out, "ok:") {
		t.Fatalf("graphql-sse client: %s", out)
	}
	t.Log(strings.TrimSpace(out))
}
