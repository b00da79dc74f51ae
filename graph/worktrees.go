package graph

import (
	"context"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/graph/model"
)

// The resolvers of session worktrees (docs/worktrees.md): createSession
// and forkSession with a worktree, Session.worktree.dirty, deleteSession
// removing it.

// errNoWorktrees answers a worktree request on a kernel built without them.
func errNoWorktrees() error {
	return core.Errorf(core.CodeUnavailable, "this kernel cannot make git worktrees")
}

func worktreeInput(in *model.WorktreeInput) *core.WorktreeInput {
	if in == nil {
		return nil
	}
	return &core.WorktreeInput{Branch: deref(in.Branch), BaseRef: deref(in.BaseRef)}
}

// newSession creates the session of createSession, in a worktree when
// asked.
func (r *Resolver) newSession(ctx context.Context, in core.CreateSessionInput, wt *model.WorktreeInput) (core.Session, error) {
	if wt == nil {
		return r.Service.CreateSession(ctx, in)
	}
	if r.Worktrees == nil {
		return core.Session{}, errNoWorktrees()
	}
	return r.Worktrees.CreateSession(ctx, in, *worktreeInput(wt))
}

// forkSession serves forkSession.
func (r *Resolver) forkSession(ctx context.Context, sessionID string, afterSeq int64, wt *model.WorktreeInput) (*core.Session, error) {
	if r.Worktrees == nil {
		if wt != nil {
			return nil, errNoWorktrees()
		}
		return ptr(r.Service.ForkSession(ctx, sessionID, afterSeq, session.ForkOptions{}))
	}
	return ptr(r.Worktrees.ForkSession(ctx, sessionID, afterSeq, worktreeInput(wt)))
}

// deleteSession serves deleteSession.
func (r *Resolver) deleteSession(ctx context.Context, id string, deleteBranch, force *bool) (bool, error) {
	if r.Worktrees == nil {
		return done(r.Engine.DeleteSession(ctx, id))
	}
	how := core.WorktreeRemoval{DeleteBranch: deref(deleteBranch), Force: deref(force)}
	return done(r.Worktrees.DeleteSession(ctx, id, how, r.Engine.DeleteSession))
}

// worktreeDirty is SessionWorktree.dirty.
func (r *Resolver) worktreeDirty(ctx context.Context, wt *core.Worktree) *bool {
	if r.Worktrees == nil {
		return nil
	}
	return r.Worktrees.Dirty(ctx, *wt)
}
