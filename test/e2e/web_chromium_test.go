package e2e

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foya-dev/foya/providers/openai/openaitest"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/internal/testenv"
)

// TestWebClientInChromium drives Foya web (served at /) in headless Chromium
// with playwright-core (test/web, locked, installed with npm ci) against a
// real kernel and the fake OpenAI-compatible server: a new session in ASK
// mode, a streamed reply, an approved and a denied write, a failing read, a
// stopped slow turn that keeps its partial text, a second tab following live,
// and a reload without duplicates. Tool cards say running while the approval
// waits, then ok (with a duration, a coloured diff and the output), denied or
// error, live and after the reload. The last user message is edited and
// resent: the exchange it started leaves the history and the edited text gets
// its own reply. The page must make no request outside the kernel.
// Under CI=true a missing Chromium, node or npm is a failure, not a skip.
func TestWebClientInChromium(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skipping the headless Chromium web client check")
	}
	node, dir := webCheckSetup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	proj := t.TempDir()
	k.createConnection(t, client.ConnectionInput{Name: ptr("fake"), BaseUrl: ptr(fake.BaseURL()), ApiKey: ptr("sk-x"), Models: []client.ModelInput{{Id: "gpt-t"}}})
	p := k.createProject(t, proj)

	// The turns of the script, in order.
	// The reply holds after "Hello " until the page has shown it streaming
	// (web.mjs then asks RELEASE), however slowly the browser runs.
	stream := openaitest.TextStream("gpt-t", "Hello ", "from ", "the web")
	stream.Delay = 100 * time.Millisecond
	gate := make(chan struct{})
	stream.Gate, stream.GateAfter = gate, 2 // the role's chunk and "Hello "
	var release sync.Once
	releaser := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { release.Do(func() { close(gate) }) }))
	defer releaser.Close()
	fake.Enqueue(stream,
		toolCall("w1", "write", map[string]any{"path": "hello.txt", "content": "hi from the browser\n"}),
		openaitest.TextStream("gpt-t", "Wrote it."),
		toolCall("w2", "write", map[string]any{"path": "nope.txt", "content": "no\n"}),
		openaitest.TextStream("gpt-t", "OK, not written."),
		toolCall("r1", "read", map[string]any{"path": "missing.txt"}),
		openaitest.TextStream("gpt-t", "No such file."),
	)
	slow := openaitest.TextStream("gpt-t", "Once upon ", "a time")
	slow.NoDone, slow.Hang = true, true
	slow.Events = slow.Events[:len(slow.Events)-2] // keep it open: no stop or usage chunk
	fake.Enqueue(slow, openaitest.TextStream("gpt-t", "A short story."))

	cmd := exec.CommandContext(ctx, node, "web.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BASE="+k.url(), "TOKEN="+k.token, "PROJECT="+p.Name, "RELEASE="+releaser.URL)
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

// TestWebClientAsksForToken: against a kernel that requires its token, Foya
// web asks for it once, keeps it in sessionStorage only, and uses it for
// POST and for the WebSocket: a session created by another client appears in
// the sidebar through kernelEvents.
func TestWebClientAsksForToken(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skipping the headless Chromium web client check")
	}
	node, dir := webCheckSetup(t)
	tokFile := filepath.Join(t.TempDir(), "token")
	k := startKernel(t, t.TempDir(), "--require-token", "--auth-token-file", tokFile)
	raw, err := os.ReadFile(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(raw))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "token.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BASE="+k.url(), "TOKEN="+token)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var out []string
	for sc.Scan() {
		out = append(out, sc.Text())
		if sc.Text() == "ready" {
			body := `{"query":"mutation { createSession(input: {title: \"made elsewhere\"}) { id } }"}`
			req, _ := http.NewRequest("POST", k.url()+"/graphql", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
	}
	if err := cmd.Wait(); err != nil || !strings.HasPrefix(out[len(out)-1], "ok:") {
		t.Fatalf("token check: %v\n%s\n%s", err, strings.Join(out, "\n"), stderr.String())
	}
	t.Log(out[len(out)-1])
}

// webCheckSetup finds node and Chromium and installs test/web (npm ci:
// playwright-core and axe-core) when a package is missing. It
// skips without them, except under CI=true where that is a failure.
func webCheckSetup(t testing.TB) (node, dir string) {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		testenv.Optional(t, format, args...)
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		skip("%s is absent: skipping the web client check (apt-get install chromium; .ci/run does)", chromiumPath)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		skip("npm is not installed: skipping the web client check")
	}
	node, err = exec.LookPath("node")
	if err != nil {
		skip("node is not installed: skipping the web client check")
	}
	dir = repoPath("test", "web")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := testenv.NPMInstall(ctx, npm, dir, filepath.Join("playwright-core", "package.json"), filepath.Join("axe-core", "package.json")); err != nil {
		skip("npm ci in test/web: %v\n%s", err, out)
	}
	return node, dir
}

// TestWebClientSurvivesKernelRestart: the page shows the kernel offline while
// it restarts, reconnects, and resumes the session's events after the last
// seq it showed: the reply to a message sent after the restart appears once.
func TestWebClientSurvivesKernelRestart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skipping the headless Chromium web client check")
	}
	node, dir := webCheckSetup(t)
	fake := openaitest.New(t)
	data := t.TempDir()
	k := startKernel(t, data)
	sid := k.chatSession(t, fake.BaseURL())
	fake.Enqueue(openaitest.TextStream("gpt-t", "before restart"))
	k.sendMessage(t, sid, "one")
	k.waitEvent(t, sid, "turn_finished")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "offline.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BASE="+k.url(), "TOKEN="+k.token, "SESSION="+sid)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	sc := bufio.NewScanner(stdout)
	var out []string
	for sc.Scan() {
		out = append(out, sc.Text())
		switch sc.Text() {
		case "ready":
			k.stop(t)
			io.WriteString(stdin, "stopped\n")
		case "offline":
			k = startKernel(t, data, "--addr", k.addr)
			fake.Enqueue(openaitest.TextStream("gpt-t", "after restart"))
			k.sendMessage(t, sid, "two")
			io.WriteString(stdin, "sent\n")
		}
	}
	if err := cmd.Wait(); err != nil || len(out) == 0 || !strings.HasPrefix(out[len(out)-1], "ok:") {
		t.Fatalf("restart check: %v\n%s\n%s", err, strings.Join(out, "\n"), stderr.String())
	}
	t.Log(out[len(out)-1])
}

// TestWebClientFeatures drives the rest of Foya web (test/web/features.mjs)
// against a real kernel and the fake OpenAI-compatible server: a connection
// added with the form, its models refreshed, the default and fast models set;
// a session deleted after confirmation, another renamed; an attachment
// uploaded and sent (the model request carries it); a code block
// highlighted; the context and token meters; a question answered; compact
// now; Stop that clears the queue and Stop that keeps it; queued messages
// edited, reordered and removed; a rewind whose preview lists the written
// file, which is gone afterwards; prices set when adding and editing the
// connection and the session's dollar cost; sessions grouped by project
// (collapsible); export downloaded and imported back; an image default; a
// connection renamed with its key replaced (the next request carries the new
// key) and one deleted after a dismissed then accepted confirmation.
// SCREENSHOTS=dir saves the views.
func TestWebClientFeatures(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skipping the headless Chromium web client check")
	}
	node, dir := webCheckSetup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	proj := t.TempDir()
	p := k.createProject(t, proj)

	slow := func() openaitest.Response {
		r := openaitest.TextStream("gpt-t", "Slowly ", "now")
		r.NoDone, r.Hang = true, true
		r.Events = r.Events[:len(r.Events)-2] // no stop or usage chunk: the turn runs until stopped
		return r
	}
	fake.Enqueue(
		openaitest.Response{Body: `{"object":"list","data":[{"id":"gpt-t","object":"model"},{"id":"gpt-u","object":"model"}]}`},
		openaitest.TextStream("gpt-t", "Here is Go:\n\n```go\nfunc main() string { return \"<hi>\" } // 42\n```\n"),
		toolCall("q1", "question", map[string]any{"question": "Which colour?"}),
		openaitest.TextStream("gpt-t", "You said blue."),
		toolCall("w1", "write", map[string]any{"path": "hello.txt", "content": "hi\n"}),
		openaitest.TextStream("gpt-t", "Written."),
		openaitest.Completion("gpt-t", "Summary: notes read, a question answered, hello.txt written.", "stop", 700, 60),
		slow(),
		slow(),
		openaitest.Response{Body: `{"object":"list","data":[{"id":"gpt-t","object":"model"},{"id":"gpt-u","object":"model"}]}`},
	)

	cmd := exec.CommandContext(ctx, node, "features.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BASE="+k.url(), "TOKEN="+k.token, "FAKE="+fake.BaseURL(), "PROJECT="+p.Name, "SCREENSHOTS="+os.Getenv("SCREENSHOTS"))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok:") {
		t.Fatalf("web client features: %v\n%s\nkernel log:\n%s", err, out, k.Logs())
	}
	reqs := fake.Requests()
	var sawNotes, sawAnswer, sawKey, sawReplaced bool
	for _, r := range reqs {
		b := string(r.Body)
		// The fake model declares no file input: the kernel names the file.
		sawNotes = sawNotes || strings.Contains(b, `attached file \"notes.txt\"`) && strings.Contains(b, `attached file \"pasted.txt\"`) && strings.Contains(b, `attached file \"dropped.txt\"`)
		sawAnswer = sawAnswer || strings.Contains(b, "blue")
		sawKey = sawKey || r.Header.Get("Authorization") == "Bearer sk-web-secret"
		sawReplaced = sawReplaced || r.Header.Get("Authorization") == "Bearer sk-web-replaced"
	}
	if !sawNotes || !sawAnswer || !sawKey || !sawReplaced {
		t.Errorf("model requests: attachment %v, answer %v, key from the form %v, replaced key %v", sawNotes, sawAnswer, sawKey, sawReplaced)
	}
	if _, err := os.Stat(filepath.Join(proj, "hello.txt")); !os.IsNotExist(err) {
		t.Errorf("hello.txt after the rewind: %v", err)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}
