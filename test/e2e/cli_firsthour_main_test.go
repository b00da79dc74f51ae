package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// The issue-18 path of a newcomer: exec in a project directory, --continue,
// the default model, unique names, FOYA_ADDR, --help everywhere.

var headerRe = regexp.MustCompile(`(?m)^model (\S+) · project (.+) · session (ses_\S+)$`)

// runIn runs foya in dir with extra environment variables.
func (o *outputs) runIn(t *testing.T, dir string, env []string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(foyaBin, args...)
	cmd.Env = append(append(append(os.Environ(), "XDG_DATA_HOME="+t.TempDir()), env...), tokenEnv(args, env)...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(nil)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	r := cliResult{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
	o.all = append(o.all, r.stdout, r.stderr)
	return r
}

func readCall(id, path string) openaitest.Response {
	return openaitest.Response{Events: []string{
		openaitest.Chunk("gpt-t", map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": id, "type": "function",
			"function": map[string]any{"name": "read", "arguments": `{"path":"` + path + `"}`}}}}, ""),
		openaitest.Chunk("gpt-t", map[string]any{}, "tool_calls"),
	}}
}

// exec works in the current directory: the model reads its README through
// the read tool; -c continues that project's newest session.
func TestExecProjectIsCurrentDirectoryAndContinue(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	proj := t.TempDir()
	if err := os.WriteFile(filepath.Join(proj, "README.md"), []byte("# Demo\nThe secret word is PERIWINKLE.\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	fake.Enqueue(readCall("call_1", "README.md"), openaitest.TextStream("gpt-t", "It is about PERIWINKLE."))
	r := o.runIn(t, proj, nil, "exec", "--addr", k.addr, "Summarise README.md in one line")
	if r.code != 0 || r.stdout != "It is about PERIWINKLE.\n" {
		t.Fatalf("exec: exit %d stdout %q stderr %s", r.code, r.stdout, r.stderr)
	}
	h := headerRe.FindStringSubmatch(r.stderr)
	if h == nil || h[1] != "fake/gpt-t" || h[2] != proj {
		t.Fatalf("header line missing or wrong:\n%s", r.stderr)
	}
	if n := len(headerRe.FindAllString(r.stderr, -1)); n != 1 {
		t.Fatalf("%d header lines:\n%s", n, r.stderr)
	}
	// The second model request carries the README's content as the tool result.
	sawFile := false
	for _, rq := range fake.Requests() {
		sawFile = sawFile || (bytes.Contains(rq.Body, []byte("The secret word is PERIWINKLE")) && bytes.Contains(rq.Body, []byte(`"tool"`)))
	}
	if !sawFile {
		t.Fatalf("the model never saw README.md's content; requests:\n%s", fake.LastRequest().Body)
	}
	waitTitles(t, fake, 1)
	first := h[3]

	// -c resumes it: same session, the history goes with the request.
	fake.Enqueue(openaitest.TextStream("gpt-t", "Still here."))
	r = o.runIn(t, proj, nil, "exec", "--addr", k.addr, "-c", "and again")
	if r.code != 0 || r.stdout != "Still here.\n" {
		t.Fatalf("exec -c: exit %d stdout %q stderr %s", r.code, r.stdout, r.stderr)
	}
	if h = headerRe.FindStringSubmatch(r.stderr); h == nil || h[3] != first {
		t.Fatalf("exec -c did not continue %s:\n%s", first, r.stderr)
	}
	if !bytes.Contains(fake.LastRequest().Body, []byte("Summarise README.md")) {
		t.Fatalf("continued turn lacks the history: %s", fake.LastRequest().Body)
	}
	// --continue in a directory without sessions says so and creates nothing.
	other := t.TempDir()
	r = o.runIn(t, other, nil, "exec", "--addr", k.addr, "--continue", "hi")
	if r.code != 1 || !strings.Contains(r.stderr, "no session to continue in "+other) {
		t.Fatalf("--continue elsewhere: exit %d %s", r.code, r.stderr)
	}
	// --no-project: a scratch session.
	fake.Enqueue(openaitest.TextStream("gpt-t", "Scratch."))
	r = o.runIn(t, proj, nil, "exec", "--addr", k.addr, "--no-project", "scratch please")
	if h = headerRe.FindStringSubmatch(r.stderr); r.code != 0 || h == nil || h[3] == first || !strings.HasPrefix(h[2], "none") {
		t.Fatalf("--no-project: exit %d %s", r.code, r.stderr)
	}
	ps := k.listProjects(t)
	if len(ps) != 1 || ps[0].Path != proj {
		t.Fatalf("projects %+v", ps)
	}
	o.checkNoKey(t)
}

// Without a usable connection exec names the command that fixes it and
// creates nothing.
func TestExecWithoutConnectionCreatesNothing(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	var o outputs
	r := o.runIn(t, t.TempDir(), nil, "exec", "--addr", k.addr, "hello")
	if r.code != 1 || !strings.Contains(r.stderr, "foya connections add --name") {
		t.Fatalf("exec without connection: exit %d\n%s", r.code, r.stderr)
	}
	leftBehind := func() {
		t.Helper()
		ss, ps := k.listSessions(t, false).Sessions, k.listProjects(t)
		if len(ss) != 0 || len(ps) != 0 {
			t.Fatalf("left behind: sessions %+v, projects %+v", ss, ps)
		}
	}
	leftBehind()
	// A connection without models: the hint names connections models.
	o.mustRun(t, "", "connections", "add", "--addr", k.addr, "--name", "bare", "--base-url", "http://127.0.0.1:9/v1")
	r = o.runIn(t, t.TempDir(), nil, "exec", "--addr", k.addr, "hello")
	if r.code != 1 || !strings.Contains(r.stderr, "foya connections models bare") {
		t.Fatalf("exec with a model-less connection: exit %d\n%s", r.code, r.stderr)
	}
	leftBehind()
}

// connections default sets the model new sessions get; names are unique;
// capability flags reach the catalog; FOYA_ADDR replaces --addr; sessions
// rm takes several ids and deletes none when one is unknown.
func TestConnectionsDefaultNamesAndFoyaAddr(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	env := []string{"FOYA_ADDR=" + k.addr}
	r := o.runIn(t, t.TempDir(), env, "connections", "add", "--name", "fake", "--base-url", fake.BaseURL(),
		"--model", "gpt-t,gpt-u", "--context", "128000", "--max-output", "4096", "--tools", "--images=false", "--reasoning", "low,high", "--json")
	if r.code != 0 || strings.Contains(r.stderr, "started a kernel") {
		t.Fatalf("connections add via FOYA_ADDR: exit %d %s", r.code, r.stderr)
	}
	caps := k.listConnections(t)
	c := caps[0].Models[1].Capabilities
	if c.ContextWindow == nil || *c.ContextWindow != 128000 || *c.MaxOutputTokens != 4096 || !*c.ToolCalling || *c.ImageInput || strings.Join(c.ReasoningEfforts, ",") != "low,high" {
		t.Fatalf("capabilities %+v", caps)
	}

	// A second "fake" (any case) is refused.
	r = o.runIn(t, t.TempDir(), env, "connections", "add", "--name", "FAKE", "--base-url", fake.BaseURL())
	if r.code != 1 || !strings.Contains(r.stderr, "(CONFLICT)") {
		t.Fatalf("duplicate name: exit %d %s", r.code, r.stderr)
	}

	r = o.runIn(t, t.TempDir(), env, "connections", "default", "fake/gpt-u")
	if r.code != 0 || !regexp.MustCompile(`language\s+fake/gpt-u`).MatchString(r.stdout) {
		t.Fatalf("connections default: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = o.runIn(t, t.TempDir(), env, "connections", "default", "fake/gpt-t", "--purpose", "fast")
	if r.code != 0 || !regexp.MustCompile(`fast\s+fake/gpt-t`).MatchString(r.stdout) {
		t.Fatalf("connections default --purpose fast: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	d, err := client.Connections(context.Background(), k.client())
	if err != nil {
		t.Fatalf("defaultModels: %v", err)
	}
	if d.DefaultModels.Language == nil || d.DefaultModels.Language.Model != "gpt-u" || d.DefaultModels.Fast == nil || d.DefaultModels.Fast.Model != "gpt-t" {
		t.Fatalf("defaults %+v", d)
	}
	fake.Enqueue(openaitest.TextStream("gpt-u", "Default."))
	r = o.runIn(t, t.TempDir(), env, "exec", "--title-less-flag-does-not-exist")
	if r.code != 2 || !strings.Contains(r.stderr, "--help") {
		t.Fatalf("unknown flag: exit %d %s", r.code, r.stderr)
	}
	r = o.runIn(t, t.TempDir(), env, "exec", "--no-project", "which model?")
	if h := headerRe.FindStringSubmatch(r.stderr); r.code != 0 || h == nil || h[1] != "fake/gpt-u" {
		t.Fatalf("exec with the default: exit %d %s", r.code, r.stderr)
	}
	if m, _ := fake.LastRequest().JSON()["model"].(string); m != "gpt-u" && !strings.Contains(string(fake.LastRequest().Body), "Write a title") {
		t.Fatalf("the turn used model %q", m)
	}

	// Tables show connection names, not ids.
	r = o.runIn(t, t.TempDir(), env, "sessions", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "fake/gpt-u") || strings.Contains(r.stdout, "conn_") {
		t.Fatalf("sessions list:\n%s", r.stdout)
	}

	// sessions rm ID...: an unknown id deletes nothing; then both go.
	for range 2 {
		k.createSession(t, client.CreateSessionInput{Title: ptr("x")})
	}
	ss := k.listSessions(t, false)
	if len(ss.Sessions) != 3 {
		t.Fatalf("sessions %+v", ss)
	}
	r = o.runIn(t, t.TempDir(), env, "sessions", "rm", ss.Sessions[0].Id, "ses_nope")
	if r.code != 1 || !strings.Contains(r.stderr, "nothing was deleted") {
		t.Fatalf("rm with an unknown id: exit %d %s", r.code, r.stderr)
	}
	r = o.runIn(t, t.TempDir(), env, "sessions", "rm", ss.Sessions[0].Id, ss.Sessions[1].Id, "--json")
	var del struct{ Deleted []string }
	if err := json.Unmarshal([]byte(r.stdout), &del); r.code != 0 || err != nil || len(del.Deleted) != 2 {
		t.Fatalf("rm two: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	ss = k.listSessions(t, false)
	if len(ss.Sessions) != 1 {
		t.Fatalf("after rm: %+v", ss)
	}
	o.checkNoKey(t)
}

// Every command and subcommand answers --help (and -h) on stdout with exit
// 0, in one format: "Usage: foya NAME …".
func TestEveryHelpExitsZero(t *testing.T) {
	t.Parallel()
	cmds := [][]string{
		{}, {"serve"}, {"token"}, {"rebuild-projections"}, {"exec"}, {"acp"}, {"schema"},
		{"connections"}, {"connections", "list"}, {"connections", "add"}, {"connections", "remove"},
		{"connections", "models"}, {"connections", "default"},
		{"sessions"}, {"sessions", "list"}, {"sessions", "show"}, {"sessions", "rm"}, {"sessions", "export"}, {"sessions", "import"},
		{"mcp"}, {"mcp", "list"}, {"mcp", "add"}, {"mcp", "remove"}, {"mcp", "restart"},
		{"projects"}, {"projects", "list"}, {"projects", "trust"}, {"backup"}, {"plugin"}, {"version"},
	}
	var o outputs
	for _, c := range cmds {
		for _, flag := range []string{"--help", "-h"} {
			args := append(append([]string{}, c...), flag)
			r := o.runIn(t, t.TempDir(), nil, args...)
			name := strings.Join(c, " ")
			want := "Usage: foya " + name
			if len(c) == 0 {
				want = "foya — the Foya agent kernel"
			}
			if r.code != 0 || !strings.HasPrefix(r.stdout, want) || r.stderr != "" {
				t.Errorf("foya %s: exit %d\nstdout: %.300s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
			}
		}
	}
	// "help SUB" is "SUB --help"; a group without a command is bad usage.
	if r := o.runIn(t, t.TempDir(), nil, "sessions", "help", "rm"); r.code != 0 || !strings.HasPrefix(r.stdout, "Usage: foya sessions rm ID...") {
		t.Errorf("sessions help rm: exit %d %s", r.code, r.stdout)
	}
	if r := o.runIn(t, t.TempDir(), nil, "connections"); r.code != 2 || !strings.Contains(r.stderr, "Usage: foya connections") {
		t.Errorf("connections: exit %d %s", r.code, r.stderr)
	}
}

// Prices declared with connections add price the usage exec prints.
func TestExecPrintsCost(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.mustRun(t, "", "connections", "add", "--addr", k.addr, "--name", "priced", "--base-url", fake.BaseURL(),
		"--model", "gpt-t", "--input-price", "3000", "--output-price", "6000")
	fake.Enqueue(openaitest.TextStream("gpt-t", "a", "b"))
	r := o.runIn(t, t.TempDir(), nil, "exec", "--addr", k.addr, "--no-project", "price me")
	// 10 input tokens at $3000/M and 2 output tokens at $6000/M: $0.042.
	if r.code != 0 || !strings.Contains(r.stderr, "tokens: 10 in (0 cached), 2 out, $0.04") {
		t.Fatalf("exec: exit %d\n%s", r.code, r.stderr)
	}
	// Without prices the line has no cost.
	o.mustRun(t, "", "connections", "add", "--addr", k.addr, "--name", "free", "--base-url", fake.BaseURL(), "--model", "gpt-t")
	waitTitles(t, fake, 1)
	fake.Enqueue(openaitest.TextStream("gpt-t", "c"))
	r = o.runIn(t, t.TempDir(), nil, "exec", "--addr", k.addr, "--no-project", "--model", "free/gpt-t", "no price")
	if r.code != 0 || !regexp.MustCompile(`tokens: 10 in \(0 cached\), 1 out\n`).MatchString(r.stderr) {
		t.Fatalf("exec without prices: exit %d\n%s", r.code, r.stderr)
	}
	if r := o.run(t, "", "connections", "add", "--addr", k.addr, "--name", "half", "--base-url", fake.BaseURL(), "--model", "m", "--input-price", "1"); r.code != 2 {
		t.Fatalf("--input-price alone: exit %d %s", r.code, r.stderr)
	}
}

// sessions export writes the document; sessions import makes a new session
// with the same history.
func TestSessionsExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	proj := t.TempDir()
	fake.Enqueue(openaitest.TextStream("gpt-t", "Exported ", "answer."))
	r := o.runIn(t, proj, nil, "exec", "--addr", k.addr, "export me")
	h := headerRe.FindStringSubmatch(r.stderr)
	if r.code != 0 || h == nil {
		t.Fatalf("exec: exit %d %s", r.code, r.stderr)
	}
	waitTitles(t, fake, 1)
	r = o.runIn(t, proj, nil, "sessions", "export", h[3], "--addr", k.addr)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "{") {
		t.Fatalf("export: exit %d %.200s %s", r.code, r.stdout, r.stderr)
	}
	file := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(file, []byte(r.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	r = o.runIn(t, other, nil, "sessions", "import", file, "--project", other, "--addr", k.addr, "--json")
	var imported struct {
		ID      string
		Project *struct{ Path string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &imported); r.code != 0 || err != nil || imported.ID == "" || imported.ID == h[3] {
		t.Fatalf("import: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	if imported.Project == nil || imported.Project.Path != other {
		t.Fatalf("imported project %+v", imported.Project)
	}
	messages := func(id string) string {
		s := k.getSession(t, id)
		b, _ := json.Marshal(s.Session.Messages)
		return string(b)
	}
	if a, b := messages(h[3]), messages(imported.ID); a != b || !strings.Contains(a, "Exported answer.") {
		t.Fatalf("history differs:\n%s\n%s", a, b)
	}
	// From stdin, without a project; projects list shows both directories.
	doc, _ := os.ReadFile(file)
	r = o.run(t, string(doc), "sessions", "import", "-", "--addr", k.addr)
	if r.code != 0 || !strings.Contains(r.stdout, "imported session ses_") || !strings.Contains(r.stdout, "project -") {
		t.Fatalf("import from stdin: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	r = o.run(t, "", "projects", "list", "--addr", k.addr)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "NAME") || !strings.Contains(r.stdout, proj) || !strings.Contains(r.stdout, other) {
		t.Fatalf("projects list: exit %d\n%s", r.code, r.stdout)
	}
	// A damaged document is refused and creates nothing.
	count := func() int {
		ss := k.listSessions(t, false)
		return len(ss.Sessions)
	}
	before := count()
	if err := os.WriteFile(file, []byte("{not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = o.runIn(t, other, nil, "sessions", "import", file, "--addr", k.addr)
	if r.code != 1 || !strings.Contains(r.stderr, "(BAD_INPUT)") || count() != before {
		t.Fatalf("bad document: exit %d %s", r.code, r.stderr)
	}
}
