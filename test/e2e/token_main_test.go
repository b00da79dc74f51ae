package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// A kernel on loopback requires its token by default on every transport;
// it logs one line with the web link (the token in the fragment), which
// `foya web` prints too (and gives to xdg-open with --open); client commands
// read the token from the data directory, including against a kernel they
// start themselves on a fresh data directory.
func TestServeRequiresTokenOnLoopbackByDefault(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	k := startKernel(t, data)
	if len(k.token) != 43 {
		t.Fatalf("token %q", k.token)
	}
	link := "http://" + k.addr + "/#token=" + k.token
	logs := k.Logs()
	if strings.Count(logs, k.token) != 1 || !strings.Contains(logs, `url="`+link+`"`) || !strings.Contains(logs, "token_required=true") {
		t.Fatalf("want exactly one log line with the web link %s:\n%s", link, logs)
	}
	hc := &http.Client{} // not the default client: no token added
	// Raw documents (authClient.post): the edge's answer to each token.
	none, wrong, right := authClient{k.url(), hc, ""}, authClient{k.url(), hc, strings.Repeat("x", 43)}, authClient{k.url(), hc, k.token}
	mustRefuse(t, none.post(t, `{ sessions { id } }`, false), "loopback POST without token")
	mustRefuse(t, wrong.post(t, `{ sessions { id } }`, false), "loopback POST with a wrong token")
	mustRefuse(t, none.post(t, `subscription { kernelEvents { type } }`, true), "loopback SSE without token")
	mustRefuse(t, none.post(t, `mutation { createMcpServer(input: {name: "x", transport: STDIO, command: "true"}) { id } }`, false), "loopback createMcpServer without token")
	mustData(t, right.post(t, `{ sessions { id } }`, false), "loopback POST with the token")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := none.wsInit(ctx, t, nil, map[string]any{}); err == nil {
		t.Fatal("loopback WebSocket without token acknowledged")
	} else {
		mustCloseCode(t, err, 4403, "loopback WebSocket without token")
	}
	c, err := none.wsInit(ctx, t, nil, map[string]any{"authorization": "Bearer " + k.token})
	if err != nil {
		t.Fatalf("loopback WebSocket with the token: %v", err)
	}
	c.Close(websocket.StatusNormalClosure, "")

	// foya web prints the link; --open hands it to xdg-open.
	var o outputs
	web := exec.Command(foyaBin, "web", "--addr", k.addr, "--data-dir", data)
	web.Env = append(os.Environ(), "FOYA_TOKEN=")
	if out, err := web.Output(); err != nil || strings.TrimSpace(string(out)) != link {
		t.Fatalf("foya web: %v %q, want %s", err, out, link)
	}
	bin := t.TempDir()
	opened := filepath.Join(t.TempDir(), "opened")
	// The opener gets a private file that forwards to the link, not the
	// link itself (TestWebOpenKeepsTokenOffArgv in cli checks the rest).
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte("#!/bin/sh\nprintf '%s' \"$1\" > "+opened+".arg\ncat \"$1\" > "+opened+".tmp && mv "+opened+".tmp "+opened+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := foyaCmd(t, "", "web", "--open", "--addr", "0.0.0.0:"+portOf(t, k.addr), "--data-dir", data)
	cmd.Env = append(cmd.Env, "PATH="+bin+":"+os.Getenv("PATH"))
	if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != link {
		t.Fatalf("foya web --open: %v %q", err, out)
	}
	waitFor(t, func() bool { b, _ := os.ReadFile(opened); return strings.Contains(string(b), `url=`+link+`"`) })
	if arg, _ := os.ReadFile(opened + ".arg"); strings.Contains(string(arg), "token") || !strings.HasSuffix(string(arg), ".html") {
		t.Errorf("xdg-open got %q", arg)
	}
	if r := o.run(t, "", "web", "--data-dir", t.TempDir()); r.code != 1 || !strings.Contains(r.stderr, "no token at") {
		t.Fatalf("foya web without a token file: %d %q", r.code, r.stderr)
	}

	// Client commands read the token from the data directory: against
	// this kernel, and against one they start on a fresh data directory
	// (which has no token until that kernel creates it).
	// (exec.Command, not o.run: no FOYA_TOKEN from the harness.)
	cli := exec.Command(foyaBin, "sessions", "list", "--addr", k.addr, "--data-dir", data)
	cli.Env = append(os.Environ(), "FOYA_TOKEN=")
	if out, err := cli.CombinedOutput(); err != nil {
		t.Fatalf("sessions list against a kernel with a token: %v %s", err, out)
	}
	cli = exec.Command(foyaBin, "sessions", "list", "--addr", k.addr, "--data-dir", t.TempDir())
	cli.Env = append(os.Environ(), "FOYA_TOKEN=")
	if out, err := cli.CombinedOutput(); err == nil || !strings.Contains(string(out), "UNAUTHENTICATED") {
		t.Fatalf("sessions list with another data directory (no token): %v %s", err, out)
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	if r := o.run(t, "", "sessions", "list", "--addr", freeAddr(t), "--data-dir", fresh); r.code != 0 || strings.Contains(r.stderr, "#token=") {
		t.Fatalf("sessions list with a kernel started for it: %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(fresh, "auth-token")); err != nil {
		t.Fatalf("the spawned kernel made no token: %v", err)
	}
}

// --insecure-no-token: no token on loopback, a warning at every start, the
// Host guard still on; refused beyond loopback. --require-token is accepted
// and changes nothing.
func TestServeInsecureNoToken(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir(), "--insecure-no-token")
	if !strings.Contains(k.Logs(), "--insecure-no-token: this kernel requires no token") || strings.Contains(k.Logs(), "#token=") || !strings.Contains(k.Logs(), "token_required=false") {
		t.Fatalf("no warning, or a web link, for --insecure-no-token:\n%s", k.Logs())
	}
	hc := &http.Client{}
	mustData(t, authClient{k.url(), hc, ""}.post(t, `{ sessions { id } }`, false), "POST without token on an --insecure-no-token kernel")
	// Raw: the same request with a foreign Host header.
	req, _ := http.NewRequest(http.MethodPost, k.url()+"/graphql", strings.NewReader(`{"query":"{ sessions { id } }"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Host = "evil.test"
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("Host: evil.test on an --insecure-no-token kernel: %d", resp.StatusCode)
	}

	out, err := exec.Command(foyaBin, "serve", "--addr", "0.0.0.0:0", "--data-dir", t.TempDir(), "--insecure-no-token").CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "--insecure-no-token: refused") {
		t.Fatalf("--insecure-no-token beyond loopback: exit %d, %s", code, out)
	}

	k2 := startKernel(t, t.TempDir(), "--require-token")
	mustRefuse(t, authClient{k2.url(), hc, ""}.post(t, `{ sessions { id } }`, false), "POST without token with --require-token")
	mustData(t, authClient{k2.url(), hc, k2.token}.post(t, `{ sessions { id } }`, false), "POST with the token with --require-token")
}

// Foya web, the playground and their assets carry a Content-Security-Policy
// without inline script and with frame-ancestors 'none', nosniff and
// no-referrer; the pages have no inline script.
func TestPageSecurityHeaders(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	scriptTag := regexp.MustCompile(`(?i)<script[^>]*>`)
	for _, path := range []string{"/", "/playground", "/web/app.js", "/web/session.js", "/web/app.css", "/playground/assets/playground.js",
		"/playground/assets/playground.css", "/playground/assets/graphiql.min.js", "/playground/assets/graphiql.min.css", "/nope"} {
		resp, err := http.Get(k.url() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h := resp.Header
		csp := h.Get("Content-Security-Policy")
		script := ""
		for _, d := range strings.Split(csp, ";") {
			if f := strings.Fields(d); len(f) > 0 && f[0] == "script-src" {
				script = d
			}
		}
		if script == "" || strings.Contains(script, "unsafe-inline") || strings.Contains(script, "unsafe-eval") ||
			!strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("%s: Content-Security-Policy %q", path, csp)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: headers %v", path, h)
		}
		if path == "/" || path == "/playground" {
			if resp.StatusCode != 200 {
				t.Fatalf("%s: %d", path, resp.StatusCode)
			}
			for _, tag := range scriptTag.FindAllString(string(body), -1) {
				if !strings.Contains(tag, " src=") && !strings.Contains(tag, `type="application/json"`) {
					t.Errorf("%s: inline script %s", path, tag)
				}
			}
			if strings.Contains(string(body), " style=") || strings.Contains(string(body), "<style") || strings.Contains(string(body), " on") && regexp.MustCompile(`\son[a-z]+=`).MatchString(string(body)) {
				t.Errorf("%s: inline style or event handler", path)
			}
		}
	}
}
