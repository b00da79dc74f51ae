package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// The API key configured in these tests; no command may ever print it.
const cliTestKey = "sk-cli-secret-7f3a9c"

// cliResult is one finished foya command.
type cliResult struct {
	stdout, stderr string
	code           int
}

// outputs collects every command's output, to check that the key never leaks.
// outputs collects what CLI commands printed; env is added to each
// command's environment (a test that runs beside others does not change
// the process's own).
type outputs struct {
	all []string
	env []string
}

func (o *outputs) checkNoKey(t *testing.T) {
	t.Helper()
	for _, s := range o.all {
		if strings.Contains(s, cliTestKey) {
			t.Fatalf("API key printed by a command:\n%s", s)
		}
	}
}

func foyaCmd(t *testing.T, stdin string, args ...string) *exec.Cmd {
	cmd := exec.Command(foyaBin, args...)
	cmd.Env = append(append(os.Environ(), "XDG_DATA_HOME="+t.TempDir()), tokenEnv(args, nil)...)
	// exec binds the current directory as the project: a fresh one per command.
	cmd.Dir = t.TempDir()
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	} else {
		cmd.Stdin = bytes.NewReader(nil) // a pipe, not a terminal
	}
	return cmd
}

func (o *outputs) run(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	cmd := foyaCmd(t, stdin, args...)
	cmd.Env = append(cmd.Env, o.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("foya %v did not finish in 60s\nstdout: %s\nstderr: %s", args, stdout.String(), stderr.String())
	}
	r := cliResult{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
	o.all = append(o.all, r.stdout, r.stderr)
	return r
}

func (o *outputs) mustRun(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	r := o.run(t, stdin, args...)
	if r.code != 0 {
		t.Fatalf("foya %v: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	}
	return r
}

// addFakeConnection configures a connection named "fake" to the openaitest
// server through the CLI (key on stdin) and returns its id.
func (o *outputs) addFakeConnection(t *testing.T, addr, baseURL string) string {
	t.Helper()
	r := o.mustRun(t, cliTestKey+"\n", "connections", "add", "--addr", addr, "--name", "fake", "--base-url", baseURL,
		"--api-key-stdin", "--model", "gpt-t", "--json")
	var c cliConnection
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil || c.ID == "" || !c.APIKeyConfigured {
		t.Fatalf("connections add: %q %v", r.stdout, err)
	}
	return c.ID
}

// waitTitles waits until the fake has received n title requests: the kernel
// names an untitled session after each completed turn, and such a request
// must not take a response queued for the next test step.
func waitTitles(t *testing.T, fake *openaitest.Server, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := 0
		for _, r := range fake.Requests() {
			if bytes.Contains(r.Body, []byte("Write a title")) {
				got++
			}
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d title requests, want %d", got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freeAddr is a loopback address where nothing listens.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestExecAgainstRunningKernel(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())

	fake.Enqueue(openaitest.TextStream("gpt-t", "Hello ", "from ", "the fake"))
	r := o.run(t, "", "exec", "--addr", k.addr, "--model", "fake/gpt-t", "--approval-mode", "bypass", "say hello")
	if r.code != 0 || r.stdout != "Hello from the fake\n" {
		t.Fatalf("exec: exit %d stdout %q stderr %s", r.code, r.stdout, r.stderr)
	}
	if !regexp.MustCompile(`(?m)^model fake/gpt-t · project /\S+ · session ses_\S+$`).MatchString(r.stderr) || !strings.Contains(r.stderr, "tokens: 10 in") {
		t.Fatalf("exec stderr: %s", r.stderr)
	}
	if got := fake.LastRequest().Header.Get("Authorization"); got != "Bearer "+cliTestKey {
		t.Fatalf("provider saw Authorization %q", got)
	}
	waitTitles(t, fake, 1)
	sid := regexp.MustCompile(`session (ses_\S+)`).FindStringSubmatch(r.stderr)
	if sid == nil {
		t.Fatalf("no session id on stderr: %s", r.stderr)
	}

	// Continue the session; the flags go after the prompt here.
	fake.Enqueue(openaitest.TextStream("gpt-t", "Again."))
	r = o.mustRun(t, "", "exec", "second", "--addr", k.addr, "--session", sid[1])
	if r.stdout != "Again.\n" {
		t.Fatalf("second exec stdout %q", r.stdout)
	}
	turnReq := fake.Requests()[len(fake.Requests())-1]
	for _, rq := range fake.Requests() {
		if bytes.Contains(rq.Body, []byte(`"second"`)) {
			turnReq = rq
		}
	}
	if msgs := turnReq.JSON()["messages"].([]any); len(msgs) < 3 {
		t.Fatalf("continued session sent %d messages: %s", len(msgs), turnReq.Body)
	}
	// The first title request failed (nothing was scripted for it): it is
	// not asked again after this turn.

	// A prompt on stdin, with a project.
	proj := t.TempDir()
	fake.Enqueue(openaitest.TextStream("gpt-t", "From stdin."))
	r = o.mustRun(t, "piped prompt\n", "exec", "--addr", k.addr, "--project", proj)
	if r.stdout != "From stdin.\n" {
		t.Fatalf("stdin exec stdout %q", r.stdout)
	}
	waitTitles(t, fake, 2)
	projects := k.listProjects(t)
	found := false
	for _, p := range projects {
		found = found || p.Path == proj
	}
	if !found {
		t.Fatalf("projects %+v", projects)
	}

	// Failed turn: exit 1 with the reason (a quota error is never retried).
	fake.Enqueue(openaitest.Error(429, "insufficient_quota", "insufficient_quota", "slow down please"))
	r = o.run(t, "", "exec", "--addr", k.addr, "hi")
	if r.code != 1 || !strings.Contains(r.stderr, "turn failed") || !strings.Contains(r.stderr, "slow down") {
		t.Fatalf("failed exec: exit %d stderr %s", r.code, r.stderr)
	}

	// Bad usage: exit 2; GraphQL errors: "foya: <message> (<code>)".
	if r = o.run(t, "", "exec", "--addr", k.addr, "--approval-mode", "yolo", "hi"); r.code != 2 {
		t.Fatalf("bad flag: exit %d %s", r.code, r.stderr)
	}
	r = o.run(t, "", "exec", "--addr", k.addr, "--session", "ses_missing", "hi")
	if r.code != 1 || !regexp.MustCompile(`foya: .+ \(NOT_FOUND\)`).MatchString(r.stderr) {
		t.Fatalf("missing session: exit %d %s", r.code, r.stderr)
	}
	o.checkNoKey(t)
}

func TestExecJSON(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	fake.Enqueue(openaitest.TextStream("gpt-t", "One ", "two."))
	r := o.mustRun(t, "", "exec", "--json", "--addr", k.addr, "count")
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev struct {
			Type    string
			Seq     *int
			Message *struct{ Role, Text string }
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		seen[ev.Type] = true
		if ev.Type == "message_end" && ev.Message.Role == "ASSISTANT" && ev.Message.Text != "One two." {
			t.Fatalf("message_end %q", ev.Message.Text)
		}
	}
	for _, typ := range []string{"turn_started", "message_end", "turn_finished"} {
		if !seen[typ] {
			t.Fatalf("no %s in --json output:\n%s", typ, r.stdout)
		}
	}
	o.checkNoKey(t)
}

// Ctrl-C stops the turn, keeps the partial output and exits 130.
func TestExecInterrupt(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	fake.Enqueue(openaitest.Response{Hang: true, Events: []string{
		openaitest.Chunk("gpt-t", map[string]any{"role": "assistant", "content": "partial answer"}, ""),
	}})
	cmd := foyaCmd(t, "", "exec", "--addr", k.addr, "go on")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first := make(chan string, 1)
	rest := make(chan string, 1)
	go func() {
		br := bufio.NewReader(stdout)
		buf := make([]byte, 64)
		n, _ := br.Read(buf)
		first <- string(buf[:n])
		all := new(bytes.Buffer)
		all.ReadFrom(br)
		rest <- all.String()
	}()
	var out string
	select {
	case out = <-first:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("no delta; stderr: %s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	out += <-rest
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	select {
	case <-waitErr:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("exec did not exit after SIGINT; stderr: %s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d, want 130; stderr: %s", code, stderr.String())
	}
	if out != "partial answer\n" {
		t.Fatalf("stdout %q", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fake.WaitCancelled(ctx); err != nil {
		t.Fatal(err)
	}
	s := k.listSessions(t, false)
	if len(s.Sessions) != 1 || s.Sessions[0].Phase != "IDLE" {
		t.Fatalf("sessions after interrupt %+v", s)
	}
}

// With no kernel at --addr, exec starts one on --data-dir and stops it.
func TestExecSpawnsKernel(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	data := t.TempDir()
	k := startKernel(t, data)
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	k.stop(t)

	fake.Enqueue(openaitest.TextStream("gpt-t", "Spawned."))
	r := o.run(t, "", "exec", "--addr", freeAddr(t), "--data-dir", data, "hi")
	if r.code != 0 || r.stdout != "Spawned.\n" {
		t.Fatalf("exec: exit %d stdout %q stderr %s", r.code, r.stdout, r.stderr)
	}
	m := regexp.MustCompile(`started a kernel for this command \(data dir (.+)\) at (\S+)`).FindStringSubmatch(r.stderr)
	if m == nil || m[1] != data {
		t.Fatalf("stderr does not say a kernel was started on %s:\n%s", data, r.stderr)
	}
	// The spawned kernel is gone: nothing listens and no process uses the data dir.
	if c, err := net.DialTimeout("tcp", m[2], time.Second); err == nil {
		c.Close()
		t.Fatalf("spawned kernel still listens on %s", m[2])
	}
	if pids := processesWith(data); len(pids) > 0 {
		t.Fatalf("processes still use %s: %v", data, pids)
	}
	// Management commands spawn too.
	r = o.mustRun(t, "", "sessions", "list", "--addr", freeAddr(t), "--data-dir", data, "--json")
	var sessions []cliSession
	if err := json.Unmarshal([]byte(r.stdout), &sessions); err != nil || len(sessions) != 1 {
		t.Fatalf("sessions list: %q %v", r.stdout, err)
	}
	o.checkNoKey(t)
}

// processesWith lists pids whose command line mentions s.
func processesWith(s string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(s)) && e.Name() != "self" {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestManagementCommands(t *testing.T) {
	fake := openaitest.New(t)
	t.Setenv("FOYA_CLI_TEST_API_KEY", cliTestKey)
	k := startKernel(t, t.TempDir()) // inherits FOYA_CLI_TEST_API_KEY
	var o outputs

	// connections add with the key in the kernel's environment.
	r := o.mustRun(t, "", "connections", "add", "--addr", k.addr, "--name", "envkey", "--base-url", fake.BaseURL(),
		"--api-key-env", "FOYA_CLI_TEST_API_KEY", "--model", "gpt-t,gpt-u")
	if !strings.Contains(r.stdout, "envkey") || !strings.Contains(r.stdout, "set") || !strings.Contains(r.stdout, "gpt-t,gpt-u") {
		t.Fatalf("add output:\n%s", r.stdout)
	}
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	// The key is refused on the command line, without being echoed.
	r = o.run(t, "", "connections", "add", "--addr", k.addr, "--name", "x", "--base-url", fake.BaseURL(), "--api-key="+cliTestKey)
	if r.code != 2 || !strings.Contains(r.stderr, "never accepted on the command line") {
		t.Fatalf("--api-key: exit %d %s", r.code, r.stderr)
	}
	o.all = o.all[:len(o.all)-2] // its args contained the key by design; its output is checked here:
	if strings.Contains(r.stdout+r.stderr, cliTestKey) {
		t.Fatal("--api-key error echoed the key")
	}

	r = o.mustRun(t, "", "connections", "list", "--addr", k.addr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME ") || !strings.Contains(r.stdout, "envkey") || !strings.Contains(r.stdout, "fake") {
		t.Fatalf("connections list:\n%s", r.stdout)
	}
	var conns []cliConnection
	r = o.mustRun(t, "", "connections", "list", "--addr", k.addr, "--json")
	if err := json.Unmarshal([]byte(r.stdout), &conns); err != nil || len(conns) != 2 {
		t.Fatalf("connections list --json: %q %v", r.stdout, err)
	}

	// models: refreshModels through the provider, using the env key.
	fake.Enqueue(openaitest.Response{Body: `{"object":"list","data":[{"id":"gpt-t","object":"model"},{"id":"gpt-new","object":"model"}]}`})
	r = o.mustRun(t, "", "connections", "models", "envkey", "--addr", k.addr)
	if !strings.Contains(r.stdout, "gpt-new") || !strings.HasPrefix(r.stdout, "MODEL") {
		t.Fatalf("connections models:\n%s", r.stdout)
	}
	if got := fake.LastRequest().Header.Get("Authorization"); got != "Bearer "+cliTestKey {
		t.Fatalf("the kernel did not read the key from its environment: %q", got)
	}

	// An exec through the env-key connection, then sessions list/show/rm.
	fake.Enqueue(openaitest.TextStream("gpt-t", "Listed."))
	o.mustRun(t, "", "exec", "--addr", k.addr, "--model", "envkey/gpt-new", "remember me")
	r = o.mustRun(t, "", "sessions", "list", "--addr", k.addr, "--json")
	var sessions []cliSession
	if err := json.Unmarshal([]byte(r.stdout), &sessions); err != nil || len(sessions) != 1 || sessions[0].Model == nil || *sessions[0].Model != "gpt-new" {
		t.Fatalf("sessions list --json: %q %v", r.stdout, err)
	}
	sid := sessions[0].ID
	r = o.mustRun(t, "", "sessions", "list", "--addr", k.addr)
	if !strings.Contains(r.stdout, sid) || !strings.HasPrefix(r.stdout, "ID") {
		t.Fatalf("sessions list:\n%s", r.stdout)
	}
	r = o.mustRun(t, "", "sessions", "show", sid, "--addr", k.addr)
	if !strings.Contains(r.stdout, "remember me") || !strings.Contains(r.stdout, "Listed.") {
		t.Fatalf("sessions show:\n%s", r.stdout)
	}
	r = o.mustRun(t, "", "sessions", "rm", sid, "--addr", k.addr)
	if !strings.Contains(r.stdout, "deleted session "+sid) {
		t.Fatalf("sessions rm: %s", r.stdout)
	}
	r = o.run(t, "", "sessions", "show", sid, "--addr", k.addr)
	if r.code != 1 || !strings.Contains(r.stderr, "(NOT_FOUND)") {
		t.Fatalf("show after rm: exit %d %s", r.code, r.stderr)
	}

	r = o.mustRun(t, "", "connections", "remove", "fake", "--addr", k.addr)
	if !strings.Contains(r.stdout, "removed connection") {
		t.Fatalf("remove: %s", r.stdout)
	}
	r = o.mustRun(t, "", "connections", "list", "--addr", k.addr, "--json")
	if err := json.Unmarshal([]byte(r.stdout), &conns); err != nil || len(conns) != 1 || conns[0].Name != "envkey" {
		t.Fatalf("after remove: %q", r.stdout)
	}

	r = o.mustRun(t, "", "schema")
	if !strings.Contains(r.stdout, "type Query {") || !strings.Contains(r.stdout, "sessionEvents(") {
		t.Fatalf("schema output: %.200s", r.stdout)
	}
	if r = o.run(t, "", "connections", "frob"); r.code != 2 {
		t.Fatalf("unknown subcommand: exit %d", r.code)
	}
	o.checkNoKey(t)
	if strings.Contains(k.Logs(), cliTestKey) {
		t.Fatal("the kernel logged the key")
	}
}

// What the tests read of the CLI's --json output.
type cliConnection struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	APIKeyConfigured bool   `json:"apiKeyConfigured"`
	Models           []struct {
		ID string `json:"id"`
	} `json:"models"`
}

type cliSession struct {
	ID      string  `json:"id"`
	Title   string  `json:"title"`
	Model   *string `json:"model"`
	Project *struct {
		ID   string `json:"id"`
		Path string `json:"path"`
	} `json:"project"`
}
