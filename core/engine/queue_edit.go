package engine

import (
	"context"
	"slices"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/session"
)

// Queues edits the sessions' queues of input waiting for a turn (SES-7):
// list, edit, move and delete queued items, each under its session's
// runtime lock, publishing the queue after every change.
type Queues struct {
	svc      *session.Service
	runtimes *runtimes
	// validate checks edited input as sendMessage checks new input.
	validate func(ctx context.Context, s core.Session, in core.UserInput) ([]core.Attachment, error)
}

// publishQueue publishes the queue; rt.mu is held.
func publishQueue(svc *session.Service, sessionID string, rt *sessionRuntime) {
	items := make([]core.QueueItem, len(rt.queue))
	for i, it := range rt.queue {
		items[i] = snapshotItem(*it)
	}
	svc.Emit(sessionID, core.EventQueueSnapshot, core.QueuePayload{Revision: rt.rev, Items: items})
}

// List returns the session's queued input in order.
func (q *Queues) List(sessionID string) []core.QueueItem {
	rt := q.runtimes.get(sessionID)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return copyQueue(rt.queue)
}

// change applies fn to queued item itemID under the runtime lock, then
// publishes the queue. Dispatch takes items under the same lock, so a change
// either lands before an item starts or fails with NOT_FOUND.
func (q *Queues) change(ctx context.Context, sessionID, itemID string, fn func(rt *sessionRuntime, i int) error) ([]core.QueueItem, error) {
	if _, err := q.svc.Session(ctx, sessionID); err != nil {
		return nil, err
	}
	rt := q.runtimes.get(sessionID)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	i := findItem(rt.queue, itemID)
	if i < 0 {
		return nil, queuedNotFound(itemID)
	}
	if err := fn(rt, i); err != nil {
		return nil, err
	}
	rt.rev++
	publishQueue(q.svc, sessionID, rt)
	return copyQueue(rt.queue), nil
}

// Edit replaces the input of a queued item; an item is never
// dispatched in its old form.
func (q *Queues) Edit(ctx context.Context, sessionID, itemID string, in core.UserInput) ([]core.QueueItem, error) {
	s, err := q.svc.Session(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	atts, err := q.validate(ctx, s, in)
	if err != nil {
		return nil, err
	}
	return q.change(ctx, sessionID, itemID, func(rt *sessionRuntime, i int) error {
		if err := checkQueueRoom(sessionID, rt.queue, inputBytes(in), rt.queue[i]); err != nil {
			return err
		}
		edited := *rt.queue[i]
		edited.Input, edited.Attachments, edited.Revision = in, atts, edited.Revision+1
		rt.queue[i] = &edited
		return nil
	})
}

// Move moves a queued item to index (0 = next to run).
func (q *Queues) Move(ctx context.Context, sessionID, itemID string, index int) ([]core.QueueItem, error) {
	return q.change(ctx, sessionID, itemID, func(rt *sessionRuntime, i int) error {
		if index < 0 || index >= len(rt.queue) {
			return core.Errorf(core.CodeBadInput, "index %d: must be between 0 and %d", index, len(rt.queue)-1)
		}
		it := rt.queue[i]
		rt.queue = slices.Insert(slices.Delete(rt.queue, i, i+1), index, it)
		return nil
	})
}

// Delete removes a queued item; it will never run.
func (q *Queues) Delete(ctx context.Context, sessionID, itemID string) ([]core.QueueItem, error) {
	return q.change(ctx, sessionID, itemID, func(rt *sessionRuntime, i int) error {
		rt.queue = slices.Delete(rt.queue, i, i+1)
		return nil
	})
}
