package core

import "context"

// Worktree is the git worktree a session works in (docs/worktrees.md): its
// tools, hooks and rewind act in Path instead of the project's directory.
type Worktree struct {
	// Path is the worktree's directory, <project>/.foya/worktrees/<session id>.
	Path string `json:"path"`
	// Branch is the branch checked out there (foya/<session id> by default).
	Branch string `json:"branch"`
	// BaseRef is the commit-ish the branch started from, as asked (HEAD by
	// default).
	BaseRef string `json:"baseRef"`
	// Inherited marks a sub-agent session's copy of its parent's worktree:
	// deleting that session leaves the worktree alone.
	Inherited bool `json:"inherited,omitempty"`
}

// WorktreeInput asks for a session worktree; empty fields take the
// defaults (branch foya/<session id>, base HEAD).
type WorktreeInput struct {
	Branch  string
	BaseRef string
}

// WorktreeRemoval says what deleting a session does with its worktree.
type WorktreeRemoval struct {
	// Force removes a worktree with uncommitted changes or untracked files.
	Force bool
	// DeleteBranch deletes the worktree's branch too (git branch -D).
	DeleteBranch bool
}

// GitWorktrees is git's side of session worktrees (plugins/gitworktree runs
// the real git). Errors a client can fix (not a repository, git missing, a
// bad ref or branch name) are CodeBadInput.
type GitWorktrees interface {
	// Add creates the worktree of session sessionID in the repository whose
	// top level is repo, at repo/.foya/worktrees/<sessionID>, and keeps it
	// out of git status (.git/info/exclude).
	Add(ctx context.Context, repo, sessionID string, in WorktreeInput) (Worktree, error)
	// Dirty reports whether the worktree has uncommitted changes or
	// untracked files (git status --porcelain is not empty).
	Dirty(ctx context.Context, wt Worktree) (bool, error)
	// Remove removes the worktree (git worktree remove) and, when asked,
	// its branch.
	Remove(ctx context.Context, repo string, wt Worktree, how WorktreeRemoval) error
}
