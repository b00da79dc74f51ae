package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// TestWebClientInChromium drives Foya web (served at /) in headless Chromium
// with playwright-core (test/web, locked, installed with npm ci) against a
// real kernel and the fake OpenAI-compatible server: a new session in ASK
// mode, a streamed reply, an approved and a denied write, a stopped slow turn
// that keeps its partial text, a second tab following live, and a reload
// without duplicates. The page must make no request outside the kernel.
// Under CI=true a missing Chromium, node or npm is a failure, not a skip.
func TestWebClientInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the headless Chromium web client check")
	}
	ci := os.Getenv("CI") == "true"
	skip := func(format string, args ...any) {
		t.Helper()
		if ci {
			t.Fatalf("CI=true: "+format, args...)
		}
		t.Skipf(format, args...)
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		skip("%s is absent: skipping the web client check (apt-get install chromium; .ci/run does)", chromiumPath)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		skip("npm is not installed: skipping the web client check")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skip("node is not installed: skipping the web client check")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir, _ := filepath.Abs(filepath.Join("test", "web"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core")); err != nil {
		install := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
		install.Dir = dir
		if out, err := install.CombinedOutput(); err != nil {
			skip("npm ci in test/web: %v\n%s", err, out)
		}
	}

	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	proj := t.TempDir()
	k.gql(t, `mutation($u: String) { createConnection(input: {name: "fake", baseUrl: $u, apiKey: "sk-x", models: [{id: "gpt-t"}]}) { id } }`, map[string]any{"u": fake.BaseURL()}, nil)
	var p struct{ CreateProject struct{ Name string } }
	k.gql(t, `mutation($p: String!) { createProject(input: {path: $p}) { name } }`, map[string]any{"p": proj}, &p)

	// The turns of the script, in order.
	stream := openaitest.TextStream("gpt-t", "Hello ", "from ", "the web")
	stream.Delay = 100 * time.Millisecond
	fake.Enqueue(stream,
		toolCall("w1", "write", map[string]any{"path": "hello.txt", "content": "hi from the browser\n"}),
		openaitest.TextStream("gpt-t", "Wrote it."),
		toolCall("w2", "write", map[string]any{"path": "nope.txt", "content": "no\n"}),
		openaitest.TextStream("gpt-t", "OK, not written."),
	)
	slow := openaitest.TextStream("gpt-t", "Once upon ", "a time")
	slow.NoDone, slow.Hang = true, true
	slow.Events = slow.Events[:len(slow.Events)-2] // keep it open: no stop or usage chunk
	fake.Enqueue(slow)

	cmd := exec.CommandContext(ctx, node, "web.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BASE="+k.url(), "PROJECT="+p.CreateProject.Name)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("web client check: %v\n%s\nkernel log:\n%s", err, out, k.Logs())
	}
	if !strings.Contains(string(out), "ok:") {
		t.Fatalf("web client output: %s", out)
	}
	if b, err := os.ReadFile(filepath.Join(proj, "hello.txt")); err != nil || string(b) != "hi from the browser\n" {
		t.Errorf("approved write: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(proj, "nope.txt")); !os.IsNotExist(err) {
		t.Errorf("denied write happened: %v", err)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}
