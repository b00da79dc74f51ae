package sandbox

import (
	"os"
	"path/filepath"
)

// WorktreeGitDir is the repository's .git directory of a session worktree
// (docs/worktrees.md), when scope is one: <repo>/.foya/worktrees/<name>
// with <repo>/.git a directory; else "". git commands run in a worktree
// read and write there (objects, refs, the worktree's own index under
// .git/worktrees/<name>), so a command confined to scope gets it as a
// writable root too: what a session working in <repo> itself may touch.
// Only the path decides, never the worktree's .git file (which the
// command may rewrite), so nothing else can be named this way.
func WorktreeGitDir(scope string) string {
	scope = filepath.Clean(scope)
	parent := filepath.Dir(scope)
	if filepath.Base(parent) != "worktrees" || filepath.Base(filepath.Dir(parent)) != ".foya" {
		return ""
	}
	git := filepath.Join(filepath.Dir(filepath.Dir(parent)), ".git")
	if fi, err := os.Lstat(git); err != nil || !fi.IsDir() {
		return ""
	}
	return git
}
