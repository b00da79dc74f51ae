package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// gitRepo makes a git repository with one commit (shared.txt) in a new
// temporary directory.
func gitRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "shared.txt"), []byte("main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", ".")
	git(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "first")
	return dir
}

// varTmpRepo is gitRepo under /var/tmp, outside the /tmp that sandboxed
// processes may write, as a real checkout is (skipped without /var/tmp).
func varTmpRepo(t *testing.T) string {
	t.Helper()
	repo, err := os.MkdirTemp("/var/tmp", "foya-wt-")
	if err != nil {
		t.Skipf("no /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(repo) })
	if out, err := exec.Command("cp", "-a", gitRepo(t)+"/.", repo).CombinedOutput(); err != nil {
		t.Fatalf("copy the repository: %v %s", err, out)
	}
	return repo
}

// git runs git in dir and returns its output; a failure fails the test.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitOK reports whether git succeeds in dir.
func gitOK(dir string, args ...string) bool {
	return exec.Command("git", append([]string{"-C", dir}, args...)...).Run() == nil
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return string(b)
}

// worktreeSession creates a BYPASS session on the fake connection in a
// worktree of project and returns its id and worktree.
func (k *kernelProc) worktreeSession(t testing.TB, conn, project string, wt client.WorktreeInput) (string, client.SessionFieldsWorktreeSessionWorktree) {
	t.Helper()
	r, err := client.CreateSession(context.Background(), k.client(), client.CreateSessionInput{
		ConnectionId: ptr(conn), Title: ptr("wt"), ApprovalMode: ptr(client.ApprovalModeBypass), ProjectId: ptr(project), Worktree: &wt,
	})
	if err != nil {
		t.Fatalf("createSession with a worktree: %v", err)
	}
	if r.CreateSession.Worktree == nil {
		t.Fatalf("session %s has no worktree", r.CreateSession.Id)
	}
	return r.CreateSession.Id, *r.CreateSession.Worktree
}

// writeTurn has the model write path with content in one turn (the
// write tool), then answer "done".
func (k *kernelProc) writeTurn(t *testing.T, fake *openaitest.Server, sid, path, content string, n int) {
	t.Helper()
	fake.Enqueue(toolCallResponse("w_"+sid+path, "write", `{"path":"`+path+`","content":"`+content+`"}`), openaitest.TextStream("gpt-t", "done"))
	k.sendMessage(t, sid, "write "+path)
	k.waitEvents(t, sid, "turn_finished", n)
}

func worktreeDirty(t testing.TB, k *kernelProc, sid string) *bool {
	t.Helper()
	r, err := client.SessionWorktree(context.Background(), k.client(), sid)
	if err != nil || r.Session == nil || r.Session.Worktree == nil {
		t.Fatalf("worktree of %s: %+v %v", sid, r, err)
	}
	return r.Session.Worktree.Dirty
}

// Two sessions with worktrees on one repository write the same file name
// with different content: the main checkout and each worktree hold their
// own. Rewind restores files inside the worktree; deleting a session
// removes its worktree (the branch stays unless deleteBranch; a dirty
// worktree needs force). A project that is not a git repository is
// BAD_INPUT.
func TestWorktreeSessions(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	repo := gitRepo(t)
	proj := k.createProject(t, repo).Id
	conn := k.createConnection(t, client.ConnectionInput{Name: ptr("fake"), BaseUrl: ptr(fake.BaseURL()), ApiKey: ptr("sk-x"), Models: []client.ModelInput{{Id: "gpt-t"}}})

	s1, wt1 := k.worktreeSession(t, conn, proj, client.WorktreeInput{})
	s2, wt2 := k.worktreeSession(t, conn, proj, client.WorktreeInput{Branch: ptr("feature/two"), BaseRef: ptr("main")})
	if want := filepath.Join(repo, ".foya", "worktrees", s1); wt1.Path != want || wt1.Branch != "foya/"+s1 || wt1.BaseRef != "HEAD" {
		t.Fatalf("worktree of s1: %+v, want path %s", wt1, want)
	}
	if wt2.Branch != "feature/two" || wt2.BaseRef != "main" {
		t.Fatalf("worktree of s2: %+v", wt2)
	}
	if got := git(t, wt2.Path, "rev-parse", "--abbrev-ref", "HEAD"); got != "feature/two" {
		t.Fatalf("branch checked out in s2's worktree: %s", got)
	}
	if ex := readFile(t, filepath.Join(repo, ".git", "info", "exclude")); strings.Count(ex, "/.foya/worktrees/") != 1 {
		t.Fatalf(".git/info/exclude: %q", ex)
	}
	if st := git(t, repo, "status", "--porcelain"); st != "" {
		t.Fatalf("the main checkout is not clean: %q", st)
	}
	if d := worktreeDirty(t, k, s1); d == nil || *d {
		t.Fatalf("a new worktree's dirty: %v", d)
	}

	k.writeTurn(t, fake, s1, "shared.txt", "one", 1)
	k.writeTurn(t, fake, s2, "shared.txt", "two", 1)
	k.writeTurn(t, fake, s1, "new.txt", "only one", 2)
	if got := readFile(t, filepath.Join(repo, "shared.txt")); got != "main\n" {
		t.Fatalf("main checkout's shared.txt: %q", got)
	}
	if got := readFile(t, filepath.Join(wt1.Path, "shared.txt")); got != "one" {
		t.Fatalf("s1's shared.txt: %q", got)
	}
	if got := readFile(t, filepath.Join(wt2.Path, "shared.txt")); got != "two" {
		t.Fatalf("s2's shared.txt: %q", got)
	}
	if exists(filepath.Join(repo, "new.txt")) || exists(filepath.Join(wt2.Path, "new.txt")) || !exists(filepath.Join(wt1.Path, "new.txt")) {
		t.Fatal("new.txt is not only in s1's worktree")
	}
	if d := worktreeDirty(t, k, s2); d == nil || !*d {
		t.Fatalf("s2's worktree after a write: dirty %v", d)
	}

	// Rewind to before s1's second turn: new.txt goes, in s1's worktree only.
	msgs := k.getSession(t, s1).Session.Messages
	var second int
	for _, m := range msgs {
		if m.Role == "USER" && m.Text == "write new.txt" {
			second = int(m.Seq)
		}
	}
	k.rewindTo(t, s1, second)
	if exists(filepath.Join(wt1.Path, "new.txt")) || readFile(t, filepath.Join(wt1.Path, "shared.txt")) != "one" {
		t.Fatal("rewind did not restore s1's worktree")
	}
	// And to before its first: the worktree is clean again.
	k.rewindTo(t, s1, int(msgs[0].Seq))
	if got := readFile(t, filepath.Join(wt1.Path, "shared.txt")); got != "main\n" {
		t.Fatalf("s1's shared.txt after the second rewind: %q", got)
	}
	if d := worktreeDirty(t, k, s1); d == nil || *d {
		t.Fatalf("s1's worktree after rewinding everything: dirty %v", d)
	}

	// A dirty worktree is not removed without force, and nothing is deleted.
	ctx := context.Background()
	_, err := client.DeleteSession(ctx, k.client(), s2, nil, nil)
	if code, msg := wantError(t, err); code != "BAD_INPUT" || !strings.Contains(msg, "uncommitted changes") || !strings.Contains(msg, "force") {
		t.Fatalf("delete a dirty worktree's session: %s %s", code, msg)
	}
	if k.sessionInfo(t, s2).Session == nil || !exists(wt2.Path) {
		t.Fatal("a refused delete deleted something")
	}
	if _, err := client.DeleteSession(ctx, k.client(), s2, nil, ptr(true)); err != nil {
		t.Fatalf("delete with force: %v", err)
	}
	if exists(wt2.Path) || !gitOK(repo, "rev-parse", "--verify", "--quiet", "refs/heads/feature/two") {
		t.Fatal("after deleting s2: its worktree should be gone and its branch kept")
	}
	if strings.Contains(git(t, repo, "worktree", "list"), wt2.Path) {
		t.Fatal("git still lists s2's worktree")
	}
	// deleteBranch removes the branch too.
	if _, err := client.DeleteSession(ctx, k.client(), s1, ptr(true), nil); err != nil {
		t.Fatalf("delete with deleteBranch: %v", err)
	}
	if exists(wt1.Path) || gitOK(repo, "rev-parse", "--verify", "--quiet", "refs/heads/foya/"+s1) {
		t.Fatal("after deleting s1 with deleteBranch: its worktree and branch should be gone")
	}
	if got := readFile(t, filepath.Join(repo, "shared.txt")); got != "main\n" || git(t, repo, "status", "--porcelain") != "" {
		t.Fatalf("the main checkout changed: %q", got)
	}

	// Not a git repository; no project; a bad base; a branch that exists.
	plain := k.createProject(t, t.TempDir()).Id
	for _, c := range []struct {
		in   client.CreateSessionInput
		want string
	}{
		{client.CreateSessionInput{ProjectId: ptr(plain), Worktree: &client.WorktreeInput{}}, "is not a git repository"},
		{client.CreateSessionInput{Worktree: &client.WorktreeInput{}}, "needs a project"},
		{client.CreateSessionInput{ProjectId: ptr(proj), Worktree: &client.WorktreeInput{BaseRef: ptr("no-such-ref")}}, `baseRef "no-such-ref" is not a commit`},
		{client.CreateSessionInput{ProjectId: ptr(proj), Worktree: &client.WorktreeInput{Branch: ptr("feature/two")}}, "already exists"},
		// Refused after the worktree was made: it goes again, with its branch.
		{client.CreateSessionInput{ProjectId: ptr(proj), Title: ptr(strings.Repeat("x", 201)), Worktree: &client.WorktreeInput{Branch: ptr("undone")}}, "title"},
	} {
		_, err := client.CreateSession(ctx, k.client(), c.in)
		if code, msg := wantError(t, err); code != "BAD_INPUT" || !strings.Contains(msg, c.want) {
			t.Errorf("createSession %+v: %s %s, want BAD_INPUT %q", c.in.Worktree, code, msg, c.want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(repo, ".foya", "worktrees")); len(entries) != 0 {
		t.Fatalf("worktrees left behind: %v", entries)
	}
	if gitOK(repo, "rev-parse", "--verify", "--quiet", "refs/heads/undone") {
		t.Fatal("the branch of a session that was not created is left")
	}
}

// A branch of a worktree session gets a worktree of its own with the files
// of the branch point: the source's later writes are not there.
func TestWorktreeFork(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	repo := gitRepo(t)
	proj := k.createProject(t, repo).Id
	conn := k.createConnection(t, client.ConnectionInput{Name: ptr("fake"), BaseUrl: ptr(fake.BaseURL()), ApiKey: ptr("sk-x"), Models: []client.ModelInput{{Id: "gpt-t"}}})
	src, wt := k.worktreeSession(t, conn, proj, client.WorktreeInput{})
	k.writeTurn(t, fake, src, "a.txt", "v1", 1)
	k.writeTurn(t, fake, src, "a.txt", "v2", 2)
	k.writeTurn(t, fake, src, "b.txt", "later", 3)
	var point int
	for _, m := range k.getSession(t, src).Session.Messages {
		if m.Role == "ASSISTANT" && m.Text == "done" {
			point = int(m.Seq)
			break
		}
	}
	r, err := client.ForkSessionWorktree(context.Background(), k.client(), src, point, nil)
	if err != nil || r.ForkSession.Worktree == nil {
		t.Fatalf("forkSession: %+v %v", r, err)
	}
	fwt := r.ForkSession.Worktree
	if fwt.Path == wt.Path || fwt.BaseRef != wt.Branch || fwt.Branch != "foya/"+r.ForkSession.Id {
		t.Fatalf("the branch's worktree %+v (source's %+v)", fwt, wt)
	}
	if got := readFile(t, filepath.Join(fwt.Path, "a.txt")); got != "v1" {
		t.Fatalf("a.txt in the branch: %q, want v1", got)
	}
	if exists(filepath.Join(fwt.Path, "b.txt")) || readFile(t, filepath.Join(wt.Path, "a.txt")) != "v2" {
		t.Fatal("the branch or the source has the wrong files")
	}
	// The branch works in its own worktree.
	k.writeTurn(t, fake, r.ForkSession.Id, "a.txt", "fork", 1)
	if readFile(t, filepath.Join(fwt.Path, "a.txt")) != "fork" || readFile(t, filepath.Join(wt.Path, "a.txt")) != "v2" {
		t.Fatal("the branch's write did not stay in its worktree")
	}
}

// foya exec --worktree runs the turn in a new worktree and says where;
// foya sessions rm --force --delete-branch removes it and its branch.
func TestExecWorktree(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	repo := gitRepo(t)
	fake.Enqueue(toolCallResponse("w1", "write", `{"path":"shared.txt","content":"from exec"}`), openaitest.TextStream("gpt-t", "Written."))
	r := o.mustRun(t, "", "exec", "--addr", k.addr, "--model", "fake/gpt-t", "--approval-mode", "bypass", "--project", repo,
		"--worktree", "--worktree-branch", "cli/one", "--base-ref", "main", "write it")
	m := regexp.MustCompile(`(?m)^worktree (\S+) · branch cli/one \(from main\)$`).FindStringSubmatch(r.stderr)
	sid := regexp.MustCompile(`session (ses_\S+)`).FindStringSubmatch(r.stderr)
	if m == nil || sid == nil || m[1] != filepath.Join(repo, ".foya", "worktrees", sid[1]) {
		t.Fatalf("exec --worktree stderr: %s", r.stderr)
	}
	if readFile(t, filepath.Join(m[1], "shared.txt")) != "from exec" || readFile(t, filepath.Join(repo, "shared.txt")) != "main\n" {
		t.Fatal("the turn did not write in the worktree only")
	}
	waitTitles(t, fake, 1)
	if r := o.run(t, "", "sessions", "rm", "--addr", k.addr, sid[1]); r.code == 0 || !strings.Contains(r.stderr, "force") || !exists(m[1]) {
		t.Fatalf("sessions rm of a dirty worktree: exit %d %s", r.code, r.stderr)
	}
	o.mustRun(t, "", "sessions", "rm", "--addr", k.addr, "--force", "--delete-branch", sid[1])
	if exists(m[1]) || gitOK(repo, "rev-parse", "--verify", "--quiet", "refs/heads/cli/one") {
		t.Fatal("sessions rm --force --delete-branch left the worktree or its branch")
	}
	if r := o.run(t, "", "exec", "--addr", k.addr, "--worktree", "--no-project", "hi"); r.code != 2 || !strings.Contains(r.stderr, "--worktree") {
		t.Fatalf("exec --worktree --no-project: exit %d %s", r.code, r.stderr)
	}
	o.checkNoKey(t)
}

// Foya web's New session form creates a session in a worktree, and its
// Delete removes the worktree after asking (test/web/worktree.mjs).
func TestWebClientWorktree(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skipping the headless Chromium web client check")
	}
	webCheckSetup(t)
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	repo := gitRepo(t)
	proj := k.createProject(t, repo).Id
	k.createConnection(t, client.ConnectionInput{Name: ptr("fake"), BaseUrl: ptr(fake.BaseURL()), ApiKey: ptr("sk-x"), Models: []client.ModelInput{{Id: "gpt-t"}}})
	out := runWebScript(t, 2*time.Minute, "worktree.mjs", k, "REPO="+repo, "PROJECT="+proj)
	m := regexp.MustCompile(`(?m)^session: (ses_\S+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no session in the script's output:\n%s", out)
	}
	if exists(filepath.Join(repo, ".foya", "worktrees", m[1])) || !gitOK(repo, "rev-parse", "--verify", "--quiet", "refs/heads/web/one") {
		t.Fatal("after the web client's delete: the worktree should be gone and the branch kept")
	}
	if k.sessionInfo(t, m[1]).Session != nil {
		t.Fatal("the session was not deleted")
	}
}

// git works inside a worktree session's bash under the sandbox: the
// repository's .git directory is a writable root of the session's
// commands (with Landlock, nothing else of the repository is). The
// repository lies outside /tmp, which commands may always write.
func TestWorktreeGitInSandbox(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	repo := varTmpRepo(t)
	proj := k.createProject(t, repo).Id
	conn := k.createConnection(t, client.ConnectionInput{Name: ptr("fake"), BaseUrl: ptr(fake.BaseURL()), ApiKey: ptr("sk-x"), Models: []client.ModelInput{{Id: "gpt-t"}}})
	sid, wt := k.worktreeSession(t, conn, proj, client.WorktreeInput{})
	cmd := `echo x > y.txt && git status --short && git add y.txt && git -c user.name=a -c user.email=a@example.com commit -qm from-session && echo committed`
	fake.Enqueue(toolCallResponse("b1", "bash", `{"command":"`+cmd+`"}`), openaitest.TextStream("gpt-t", "done"))
	k.sendMessage(t, sid, "commit")
	k.waitEvents(t, sid, "turn_finished", 1)
	var out string
	for _, m := range k.getSession(t, sid).Session.Messages {
		if m.Role == "TOOL" {
			out = m.Text
		}
	}
	if !strings.Contains(out, "?? y.txt") || !strings.Contains(out, "committed") {
		t.Fatalf("git in the session's bash: %s", out)
	}
	if got := git(t, repo, "log", "-1", "--format=%s", wt.Branch); got != "from-session" {
		t.Fatalf("last commit of %s: %q", wt.Branch, got)
	}
	if got := git(t, repo, "log", "-1", "--format=%s", "main"); got != "first" {
		t.Fatalf("main moved: %q", got)
	}
}

// An MCP server attached to a worktree session is confined to the
// session's worktree, where its tools act: it runs there and writes there,
// and cannot write the main checkout (it was given the project's
// directory before).
func TestWorktreeSessionMCPServerConfined(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	k.requireLandlock(t)
	repo := varTmpRepo(t) // outside /tmp, which MCP servers may write

	proj := k.createProject(t, repo).Id
	conn := k.createConnection(t, client.ConnectionInput{Name: ptr("fake"), BaseUrl: ptr(fake.BaseURL()), ApiKey: ptr("sk-x"), Models: []client.ModelInput{{Id: "gpt-t"}}})
	sid, wt := k.worktreeSession(t, conn, proj, client.WorktreeInput{})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.ACPAttachSessionMcpServer(context.Background(), k.client(), sid, client.McpServerInput{Name: "files", Transport: client.McpTransportStdio,
		Command: ptr(exe), Args: []string{"-test.run=^$"}, Env: []client.KeyValueInput{{Key: "FOYA_MCPTEST_STDIO", Value: "1"}}}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		d := k.sessionDetail(t, sid)
		if len(d.Session.McpServers) == 1 && d.Session.McpServers[0].Status == "READY" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session's MCP server: %+v", d.Session.McpServers)
		}
	}
	escaped := filepath.Join(repo, "escaped.txt")
	msgs := k.runTools(t, fake, sid,
		toolCall("m1", "mcp__files__touch", map[string]any{"path": "inside.txt"}),
		toolCall("m2", "mcp__files__touch", map[string]any{"path": escaped}))
	if !strings.Contains(msgs[0].Text, "cwd="+wt.Path+" wrote") || readFile(t, filepath.Join(wt.Path, "inside.txt")) != "touched\n" {
		t.Fatalf("the server in the worktree: %s", msgs[0].Text)
	}
	if !strings.Contains(msgs[1].Text, "error:") || exists(escaped) {
		t.Fatalf("the server wrote the main checkout: %s", msgs[1].Text)
	}
}
