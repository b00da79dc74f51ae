package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// Only <repo>/.foya/worktrees/<name> with a real <repo>/.git directory
// names the repository's .git.
func TestWorktreeGitDir(t *testing.T) {
	repo := t.TempDir()
	wt := filepath.Join(repo, ".foya", "worktrees", "ses_1")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := WorktreeGitDir(wt); got != "" {
		t.Fatalf("without .git: %q", got)
	}
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := WorktreeGitDir(wt); got != filepath.Join(repo, ".git") {
		t.Fatalf("worktree: %q", got)
	}
	for _, scope := range []string{repo, filepath.Join(repo, ".foya"), filepath.Join(repo, "worktrees", "x"), filepath.Join(repo, "a", "worktrees", "x")} {
		if got := WorktreeGitDir(scope); got != "" {
			t.Errorf("%s: %q", scope, got)
		}
	}
	// A symlinked .git is not followed.
	other := t.TempDir()
	link := filepath.Join(other, "r")
	if err := os.MkdirAll(filepath.Join(link, ".foya", "worktrees", "s"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(repo, ".git"), filepath.Join(link, ".git")); err != nil {
		t.Fatal(err)
	}
	if got := WorktreeGitDir(filepath.Join(link, ".foya", "worktrees", "s")); got != "" {
		t.Fatalf("symlinked .git: %q", got)
	}
}
