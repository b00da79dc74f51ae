package gitworktree

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
)

func testRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gitT(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "add", ".")
	gitT(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "a")
	return dir
}

func badInput(t *testing.T, err error, want string) {
	t.Helper()
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != core.CodeBadInput || !strings.Contains(ce.Message, want) {
		t.Fatalf("error %v, want BAD_INPUT containing %q", err, want)
	}
}

// Add makes the worktree and its branch and writes the exclude line once;
// Dirty follows git status; Remove keeps or deletes the branch.
func TestAddDirtyRemove(t *testing.T) {
	repo := testRepo(t)
	g := &Git{}
	ctx := context.Background()
	wt, err := g.Add(ctx, repo, "ses_1", core.WorktreeInput{})
	if err != nil {
		t.Fatal(err)
	}
	if wt.Path != filepath.Join(repo, ".foya", "worktrees", "ses_1") || wt.Branch != "foya/ses_1" || wt.BaseRef != "HEAD" {
		t.Fatalf("worktree %+v", wt)
	}
	wt2, err := g.Add(ctx, repo, "ses_2", core.WorktreeInput{Branch: "b2", BaseRef: "main"})
	if err != nil {
		t.Fatal(err)
	}
	ex, _ := os.ReadFile(filepath.Join(repo, ".git", "info", "exclude"))
	if strings.Count(string(ex), "/.foya/worktrees/") != 1 {
		t.Fatalf("exclude: %q", ex)
	}
	out, _ := exec.Command("git", "-C", repo, "status", "--porcelain").CombinedOutput()
	if len(out) != 0 {
		t.Fatalf("main checkout status: %q", out)
	}
	if d, err := g.Dirty(ctx, wt); err != nil || d {
		t.Fatalf("new worktree dirty %v %v", d, err)
	}
	if err := os.WriteFile(filepath.Join(wt.Path, "new.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := g.Dirty(ctx, wt); err != nil || !d {
		t.Fatalf("worktree with an untracked file: dirty %v %v", d, err)
	}
	if err := g.Remove(ctx, repo, wt, core.WorktreeRemoval{}); err == nil {
		t.Fatal("a dirty worktree was removed without force")
	}
	if err := g.Remove(ctx, repo, wt, core.WorktreeRemoval{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt.Path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("worktree still there: %v", err)
	}
	gitT(t, repo, "rev-parse", "--verify", "refs/heads/foya/ses_1") // kept
	// A directory removed by hand is pruned; deleteBranch deletes the branch.
	if err := os.RemoveAll(wt2.Path); err != nil {
		t.Fatal(err)
	}
	if err := g.Remove(ctx, repo, wt2, core.WorktreeRemoval{DeleteBranch: true}); err != nil {
		t.Fatal(err)
	}
	if exec.Command("git", "-C", repo, "rev-parse", "--verify", "--quiet", "refs/heads/b2").Run() == nil {
		t.Fatal("branch b2 still exists")
	}
	if _, err := g.Dirty(ctx, wt2); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Dirty of a removed worktree: %v", err)
	}
}

// Not a repository, a subdirectory, git missing, no commit, bad refs and
// names are BAD_INPUT saying which.
func TestAddRefusals(t *testing.T) {
	ctx := context.Background()
	g := &Git{}
	_, err := g.Add(ctx, t.TempDir(), "ses_1", core.WorktreeInput{})
	badInput(t, err, "is not a git repository")
	_, err = (&Git{Binary: "/nonexistent/git"}).Add(ctx, t.TempDir(), "ses_1", core.WorktreeInput{})
	badInput(t, err, "git is not installed")
	empty := t.TempDir()
	gitT(t, empty, "init", "-q")
	_, err = g.Add(ctx, empty, "ses_1", core.WorktreeInput{})
	badInput(t, err, "has no commit yet")
	repo := testRepo(t)
	sub := filepath.Join(repo, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = g.Add(ctx, sub, "ses_1", core.WorktreeInput{})
	badInput(t, err, "not its top level")
	_, err = g.Add(ctx, repo, "ses_1", core.WorktreeInput{BaseRef: "nope"})
	badInput(t, err, `baseRef "nope" is not a commit`)
	_, err = g.Add(ctx, repo, "ses_1", core.WorktreeInput{Branch: "bad..name"})
	badInput(t, err, "not a valid git branch name")
	_, err = g.Add(ctx, repo, "ses_1", core.WorktreeInput{Branch: "main"})
	badInput(t, err, "already exists")
	_, err = g.Add(ctx, repo, "ses_1", core.WorktreeInput{BaseRef: "--help"})
	badInput(t, err, "must not start with '-'")
	if entries, _ := os.ReadDir(filepath.Join(repo, ".foya", "worktrees")); len(entries) != 0 {
		t.Fatalf("refused adds left %v", entries)
	}
}

// git runs with PATH, HOME and the locale, never the kernel's secrets.
func TestGitEnvCarriesNoSecret(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	t.Setenv("FOYA_TOKEN", "tok-secret")
	for _, kv := range gitEnv() {
		if strings.Contains(kv, "secret") {
			t.Fatalf("git env has %q", kv)
		}
	}
}

// A repository the model's commands wrote (.git included) configures
// commands git would run: a post-checkout hook, an fsmonitor command, a
// smudge and a clean filter on every file. Making, reading and removing a
// worktree, which the kernel does outside the sandbox, runs none of them.
func TestRepositoryCommandsDoNotRun(t *testing.T) {
	repo := testRepo(t)
	marks := t.TempDir()
	mark := func(name string) string { return "touch " + filepath.Join(marks, name) }
	if err := os.WriteFile(filepath.Join(repo, ".gitattributes"), []byte("* filter=evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, repo, "add", ".gitattributes")
	gitT(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "attrs")
	hook := filepath.Join(repo, ".git", "hooks", "post-checkout")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\n"+mark("hook")+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitT(t, repo, "config", "core.fsmonitor", mark("fsmonitor")+"; false")
	gitT(t, repo, "config", "filter.evil.smudge", mark("smudge")+"; cat")
	gitT(t, repo, "config", "filter.evil.clean", mark("clean")+"; cat")
	gitT(t, repo, "config", "filter.evil.required", "true")
	g := &Git{}
	ctx := context.Background()
	wt, err := g.Add(ctx, repo, "ses_x", core.WorktreeInput{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt.Path, "a.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := g.Dirty(ctx, wt); err != nil || !d {
		t.Fatalf("dirty %v %v", d, err)
	}
	if err := g.Remove(ctx, repo, wt, core.WorktreeRemoval{Force: true, DeleteBranch: true}); err != nil {
		t.Fatal(err)
	}
	if ran, _ := os.ReadDir(marks); len(ran) != 0 {
		names := []string{}
		for _, e := range ran {
			names = append(names, e.Name())
		}
		t.Fatalf("the repository's commands ran: %v", names)
	}
}
