package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/foya-dev/foya/core"
)

// validateInput checks input for a session before anything is created
// (MSG-2, MSG-4, PRV-4): the session must have a usable model.
func (e *Engine) validateInput(ctx context.Context, s core.Session, in core.UserInput) ([]core.Attachment, error) {
	b, err := e.models.resolve(ctx, s)
	if err != nil {
		return nil, err
	}
	lookup := func(id string) (core.Attachment, error) {
		if e.cfg.Attachments == nil {
			return core.Attachment{}, core.Errorf(core.CodeNotFound, "attachment %s not found", id)
		}
		return e.cfg.Attachments.Attachment(ctx, id)
	}
	return ValidateUserInput(in, lookup, b.model.Capabilities)
}

// SendMessage starts a turn with in when the session is idle, else queues it
// (SES-6). A held queue (after stopTurn with keepQueue) resumes: its first
// item runs and in is queued behind the others.
func (e *Engine) SendMessage(ctx context.Context, sessionID string, in core.UserInput) (core.SendResult, error) {
	s, err := e.svc.Session(ctx, sessionID)
	if err != nil {
		return core.SendResult{}, err
	}
	atts, err := e.validateInput(ctx, s, in)
	if err != nil {
		return core.SendResult{}, err
	}
	item := &core.QueueItem{ID: core.NewID("q"), Input: in, Attachments: atts, CreatedAt: time.Now().UTC()}
	rt := e.runtimes.get(sessionID)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if e.isClosed() {
		return core.SendResult{}, core.Errorf(core.CodeUnavailable, "the kernel is shutting down")
	}
	if rt.turn == nil && rt.busy == "" && len(rt.queue) == 0 {
		if err := e.startLocked(ctx, sessionID, rt, item, &s); err != nil {
			return core.SendResult{}, err
		}
		return core.SendResult{TurnStarted: true}, nil
	}
	if err := checkQueueRoom(sessionID, rt.queue, inputBytes(in), nil); err != nil {
		return core.SendResult{}, err
	}
	rt.queue = append(rt.queue, item)
	rt.rev++
	if rt.turn == nil && rt.busy == "" {
		rt.held = false
		e.dispatchLocked(ctx, sessionID, rt)
	}
	publishQueue(e.svc, sessionID, rt)
	cp := *item
	return core.SendResult{QueueItem: &cp}, nil
}

func (e *Engine) isClosed() bool { return e.closed.Load() }

// dispatchLocked starts the first queued item, if any; rt.mu is held.
func (e *Engine) dispatchLocked(ctx context.Context, sessionID string, rt *sessionRuntime) bool {
	for len(rt.queue) > 0 {
		item := rt.queue[0]
		rt.queue = rt.queue[1:]
		rt.rev++
		if err := e.startLocked(context.WithoutCancel(ctx), sessionID, rt, item, nil); err != nil {
			e.log.Error("start queued turn", "session_id", sessionID, "queue_item", item.ID, "err", err)
			if errors.Is(err, core.ErrNotFound) {
				rt.queue = nil
				return false
			}
			continue
		}
		return true
	}
	return false
}

func copyQueue(q []*core.QueueItem) []core.QueueItem {
	out := make([]core.QueueItem, len(q))
	for i, it := range q {
		out[i] = *it
	}
	return out
}

func findItem(q []*core.QueueItem, id string) int {
	return slices.IndexFunc(q, func(it *core.QueueItem) bool { return it.ID == id })
}

func queuedNotFound(id string) error {
	return core.Errorf(core.CodeNotFound, "queued message %s not found: it has started already or was deleted", id)
}

// StopTurn stops the running turn, keeping what the model already produced
// (MSG-9). keepQueue leaves the queue waiting until the next sendMessage or
// an explicit dispatch; otherwise the queue is cleared. dispatchItemID
// interrupts and runs that queued item next. It waits (bounded) for the turn
// to wind down and returns the session.
func (e *Engine) StopTurn(ctx context.Context, sessionID string, keepQueue bool, dispatchItemID string) (core.Session, error) {
	if _, err := e.svc.Session(ctx, sessionID); err != nil {
		return core.Session{}, err
	}
	rt := e.runtimes.get(sessionID)
	rt.mu.Lock()
	if dispatchItemID != "" {
		i := findItem(rt.queue, dispatchItemID)
		if i < 0 {
			rt.mu.Unlock()
			return core.Session{}, queuedNotFound(dispatchItemID)
		}
		it := rt.queue[i]
		rt.queue = slices.Insert(slices.Delete(rt.queue, i, i+1), 0, it)
	}
	if !keepQueue {
		if dispatchItemID != "" {
			rt.queue = rt.queue[:1]
		} else {
			rt.queue = nil
		}
	}
	rt.rev++
	run := rt.turn
	rt.held = run != nil && dispatchItemID == "" && len(rt.queue) > 0
	if run == nil && dispatchItemID != "" && rt.busy == "" {
		e.dispatchLocked(ctx, sessionID, rt)
	}
	publishQueue(e.svc, sessionID, rt)
	rt.mu.Unlock()

	e.requests.cancelSession(sessionID)
	if run != nil {
		run.cancel(ErrTurnStopped)
		if err := e.waitTurn(ctx, run); err != nil {
			return core.Session{}, err
		}
	}
	return e.svc.Session(ctx, sessionID)
}

func (e *Engine) waitTurn(ctx context.Context, run *turnRun) error {
	t := time.NewTimer(e.cfg.StopWait)
	defer t.Stop()
	select {
	case <-run.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for the turn to stop: %w", ctx.Err())
	case <-t.C:
		return core.Errorf(core.CodeUnavailable, "the turn did not stop within %s; it will finish in the background", e.cfg.StopWait)
	}
}

// DeleteSession stops the session's turn and those of its descendants
// (bounded wait), clears queues, approvals and questions, then deletes the
// session and its descendants (SES-13).
func (e *Engine) DeleteSession(ctx context.Context, sessionID string) error {
	if _, err := e.svc.Session(ctx, sessionID); err != nil {
		return err
	}
	ids := []string{sessionID}
	for i := 0; i < len(ids); i++ {
		kids, err := e.svc.Sessions(ctx, core.SessionFilter{ParentID: ids[i]})
		if err != nil {
			return err
		}
		for _, k := range kids {
			ids = append(ids, k.ID)
		}
	}
	var runs []*turnRun
	for _, id := range ids {
		rt := e.runtimes.get(id)
		rt.mu.Lock()
		rt.queue, rt.held = nil, false
		rt.busy = "deleting"
		if rt.turn != nil {
			runs = append(runs, rt.turn)
			rt.turn.cancel(errSessionDeleted)
		}
		rt.mu.Unlock()
		e.requests.cancelSession(id)
	}
	for _, r := range runs {
		if err := e.waitTurn(ctx, r); err != nil {
			e.log.Warn("deleting a session whose turn is still winding down", "session_id", sessionID, "err", err)
		}
	}
	orphans, err := e.svc.DeleteSession(ctx, sessionID)
	if err != nil {
		for _, id := range ids {
			rt := e.runtimes.get(id)
			rt.mu.Lock()
			rt.busy = ""
			rt.mu.Unlock()
		}
		return err
	}
	if e.cfg.Terminals != nil {
		for _, id := range ids {
			e.cfg.Terminals.Forget(id) // their processes end with the session (SES-13)
		}
	}
	e.runtimes.delete(ids...)
	e.requests.forgetGrants(ids...)
	e.titled.delete(ids...)
	deleteBlobs(e.cfg.Blobs, e.log, orphans)
	return nil
}

// deleteBlobs removes artifact bytes nothing refers to any more; failures
// only leave garbage behind, so they are logged.
func deleteBlobs(blobs core.BlobStore, log *slog.Logger, hashes []string) {
	if blobs == nil {
		return
	}
	for _, h := range hashes {
		if err := blobs.Delete(h); err != nil && !errors.Is(err, core.ErrNotFound) {
			log.Warn("delete unreferenced artifact", "sha256", h, "err", err)
		}
	}
}

// DeleteProject deletes every session bound to the project (stopping their
// turns), then the project (SES-3). The directory is never touched.
func (e *Engine) DeleteProject(ctx context.Context, id string) error {
	if _, err := e.svc.Project(ctx, id); err != nil {
		return err
	}
	bound, err := e.svc.Sessions(ctx, core.SessionFilter{ProjectID: id, IncludeChildren: true})
	if err != nil {
		return fmt.Errorf("delete project %s: %w", id, err)
	}
	for _, sess := range bound {
		if err := e.DeleteSession(ctx, sess.ID); err != nil && !errors.Is(err, core.ErrNotFound) {
			return fmt.Errorf("delete project %s: %w", id, err)
		}
	}
	if err := e.svc.RemoveProject(ctx, id); err != nil {
		return err
	}
	e.log.Info("project deleted", "project_id", id, "sessions_deleted", len(bound))
	return nil
}
