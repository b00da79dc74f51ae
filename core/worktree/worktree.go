// Package worktree gives sessions a git worktree of their own
// (docs/worktrees.md): a session created or branched with one works in
// <project>/.foya/worktrees/<session id> on its own branch, and deleting
// it removes the worktree. Git itself runs behind core.GitWorktrees.
package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/session"
)

// Config wires the worktree service.
type Config struct {
	Sessions *session.Service
	// Git runs git; nil: sessions cannot have worktrees (UNAVAILABLE).
	Git core.GitWorktrees
	// Blobs holds the bytes of recorded file changes, which a branch's
	// worktree is brought to the branch point with.
	Blobs  core.BlobStore
	Logger *slog.Logger
}

// Service creates, inspects and removes session worktrees.
type Service struct {
	svc   *session.Service
	git   core.GitWorktrees
	blobs core.BlobStore
	log   *slog.Logger
}

// New builds the worktree service.
func New(cfg Config) (*Service, error) {
	if cfg.Sessions == nil {
		return nil, errors.New("worktree service: sessions are required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Service{svc: cfg.Sessions, git: cfg.Git, blobs: cfg.Blobs, log: log}, nil
}

// CreateSession creates a session in a new worktree of its project's git
// repository; the worktree is removed again when the session cannot be
// created.
func (w *Service) CreateSession(ctx context.Context, in core.CreateSessionInput, wt core.WorktreeInput) (core.Session, error) {
	if in.ProjectID == "" {
		return core.Session{}, core.Errorf(core.CodeBadInput, "worktree needs a project: give projectId, a project whose directory is a git repository")
	}
	p, err := w.repo(ctx, in.ProjectID)
	if err != nil {
		return core.Session{}, err
	}
	in.ID = core.NewID("ses")
	made, err := w.git.Add(ctx, p.Path, in.ID, wt)
	if err != nil {
		return core.Session{}, err
	}
	in.Worktree = &made
	s, err := w.svc.CreateSession(ctx, in)
	if err != nil {
		w.undo(ctx, p.Path, made)
		return core.Session{}, err
	}
	w.log.Info("session worktree created", "session_id", s.ID, "path", made.Path, "branch", made.Branch, "base_ref", made.BaseRef)
	return s, nil
}

// ForkSession branches a session (session.Service.ForkSession). The branch
// gets a worktree of its own when wt is given or when the source works in
// one: a new branch from wt.BaseRef, else from the source worktree's branch,
// else from HEAD; then every file the source's tools changed up to afterSeq
// is set to its content at that point (deleted ones removed), from the
// recorded file changes. Without either it works where the source's project
// does.
func (w *Service) ForkSession(ctx context.Context, sourceID string, afterSeq int64, wt *core.WorktreeInput) (core.Session, error) {
	src, err := w.svc.Session(ctx, sourceID)
	if err != nil {
		return core.Session{}, err
	}
	if wt == nil && src.Worktree == nil {
		return w.svc.ForkSession(ctx, sourceID, afterSeq, session.ForkOptions{})
	}
	in := core.WorktreeInput{}
	if wt != nil {
		in = *wt
	}
	if src.ProjectID == "" {
		return core.Session{}, core.Errorf(core.CodeBadInput, "worktree: session %s has no project, so its branch cannot have a git worktree", sourceID)
	}
	msgs, err := w.svc.Store().Messages(ctx, sourceID, false)
	if err != nil {
		return core.Session{}, err
	}
	if err := session.ValidForkBoundary(msgs, afterSeq); err != nil {
		return core.Session{}, err
	}
	p, err := w.repo(ctx, src.ProjectID)
	if err != nil {
		return core.Session{}, err
	}
	if in.BaseRef == "" && src.Worktree != nil {
		in.BaseRef = src.Worktree.Branch
	}
	id := core.NewID("ses")
	made, err := w.git.Add(ctx, p.Path, id, in)
	if err != nil {
		return core.Session{}, err
	}
	if err := w.applyFileState(ctx, made.Path, msgs, afterSeq); err != nil {
		w.undo(ctx, p.Path, made)
		return core.Session{}, err
	}
	s, err := w.svc.ForkSession(ctx, sourceID, afterSeq, session.ForkOptions{ID: id, Worktree: &made})
	if err != nil {
		w.undo(ctx, p.Path, made)
		return core.Session{}, err
	}
	w.log.Info("branch worktree created", "session_id", s.ID, "source", sourceID, "path", made.Path, "branch", made.Branch, "base_ref", made.BaseRef)
	return s, nil
}

// applyFileState writes, under dir, each file the active tool messages up
// to afterSeq changed, as its last change there left it.
func (w *Service) applyFileState(ctx context.Context, dir string, msgs []core.Message, afterSeq int64) error {
	last := map[string]core.FileChange{}
	var order []string
	for _, m := range msgs {
		if m.Seq > afterSeq {
			break
		}
		for _, fc := range m.FileChanges {
			if _, seen := last[fc.Path]; !seen {
				order = append(order, fc.Path)
			}
			last[fc.Path] = fc
		}
	}
	if len(order) == 0 {
		return nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("worktree: open %s: %w", dir, err)
	}
	defer root.Close()
	for _, p := range order {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := w.applyFile(root, last[p]); err != nil {
			return fmt.Errorf("worktree: bring %s to the branch point: %w", p, err)
		}
	}
	return nil
}

// applyFile sets one file to the after side of fc.
func (w *Service) applyFile(root *os.Root, fc core.FileChange) error {
	name := path.Clean(fc.Path)
	if fc.AfterHash == "" {
		if err := root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if fc.BytesMissing || w.blobs == nil {
		w.log.Warn("branch worktree: a file's bytes were not kept; it keeps the base's content", "path", fc.Path)
		return nil
	}
	data, err := w.blobs.Read(fc.AfterHash)
	if err != nil {
		return err
	}
	if dir := path.Dir(name); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return root.WriteFile(name, data, 0o644)
}

// repo is the project, once git worktrees are available.
func (w *Service) repo(ctx context.Context, projectID string) (core.Project, error) {
	if w.git == nil {
		return core.Project{}, core.Errorf(core.CodeUnavailable, "this kernel cannot make git worktrees")
	}
	return w.svc.Project(ctx, projectID)
}

// undo removes a worktree made for a session that was not created.
func (w *Service) undo(ctx context.Context, repo string, wt core.Worktree) {
	if err := w.git.Remove(context.WithoutCancel(ctx), repo, wt, core.WorktreeRemoval{Force: true, DeleteBranch: true}); err != nil {
		w.log.Error("remove the worktree of a session that was not created", "path", wt.Path, "err", err)
	}
}

// Dirty reports whether a session's worktree has uncommitted changes or
// untracked files; nil when git cannot tell (e.g. the directory is gone).
func (w *Service) Dirty(ctx context.Context, wt core.Worktree) *bool {
	if w.git == nil {
		return nil
	}
	d, err := w.git.Dirty(ctx, wt)
	if err != nil {
		w.log.Warn("worktree status", "path", wt.Path, "err", err)
		return nil
	}
	return &d
}

// DeleteSession deletes a session with del (the engine's DeleteSession)
// and then removes its own worktree (not a sub-agent's inherited one) and,
// with how.DeleteBranch, its branch. A worktree with uncommitted changes or
// untracked files needs how.Force: without it nothing is deleted
// (BAD_INPUT).
func (w *Service) DeleteSession(ctx context.Context, id string, how core.WorktreeRemoval, del func(context.Context, string) error) error {
	s, err := w.svc.Session(ctx, id)
	if err != nil {
		return err
	}
	wt := s.Worktree
	if wt == nil || wt.Inherited {
		return del(ctx, id) // deleteBranch and force concern own worktrees only
	}
	p, err := w.repo(ctx, s.ProjectID)
	if err != nil {
		return err
	}
	if !how.Force {
		dirty, err := w.git.Dirty(ctx, *wt)
		switch {
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("delete session %s: %w", id, err)
		case dirty:
			return core.Errorf(core.CodeBadInput, "the worktree %s of session %s has uncommitted changes or untracked files; commit them, or delete with force: true to discard them", wt.Path, id)
		}
	}
	if err := del(ctx, id); err != nil {
		return err
	}
	if err := w.git.Remove(context.WithoutCancel(ctx), p.Path, *wt, how); err != nil {
		return fmt.Errorf("session %s deleted, but its worktree was not removed: %w", id, err)
	}
	w.log.Info("session worktree removed", "session_id", id, "path", wt.Path, "branch_deleted", how.DeleteBranch)
	return nil
}
