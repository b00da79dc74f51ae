package session

import (
	"context"
	"errors"
	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/pubsub"
)

// defaultMaxCatchUp is how many persisted events a lagging live subscriber
// may re-read from the store in one go before it is told to resubscribe.
const defaultMaxCatchUp = 10000

// replayPage is the page size of replays from the store.
const replayPage = 500

// Subscribe streams a session's events: first every persisted event with
// seq > *afterSeq (when afterSeq is given), then live events, with no gap
// and no duplicate. Live-only events have seq 0. A subscriber that reads
// slower than deltas come gets consecutive deltas of the same kind merged
// (the concatenated text is identical; persisted events are never merged);
// one that falls behind further loses deltas but never a persisted event:
// those are re-read from the store; one that falls more than
// Config.MaxCatchUp events behind receives resync_required with the
// last seq delivered and the stream ends. The channel closes when ctx ends
// or the session is deleted.
func (s *Service) Subscribe(ctx context.Context, sessionID string, afterSeq *int64) (<-chan core.Event, error) {
	return SubscribeAs(ctx, s, sessionID, afterSeq, func(ev core.Event) core.Event { return ev })
}

// SubscribeAs is Subscribe with every event converted by conv on the
// stream's own goroutine, for an edge that wants another element type
// without one more goroutine hand-off per event.
func SubscribeAs[T any](ctx context.Context, s *Service, sessionID string, afterSeq *int64, conv func(core.Event) T) (<-chan T, error) {
	if afterSeq != nil && *afterSeq < 0 {
		return nil, core.Errorf(core.CodeBadInput, "afterSeq must be 0 or more")
	}
	sub := s.broker.SubscribeSession(sessionID)
	if _, err := s.store.Session(ctx, sessionID); err != nil {
		sub.Close()
		return nil, err
	}
	var last int64
	if afterSeq != nil {
		last = *afterSeq
	} else {
		head, err := s.store.HeadSeq(ctx, sessionID)
		if err != nil {
			sub.Close()
			return nil, err
		}
		last = head
	}
	// out is unbuffered: while the reader is busy, events wait in the
	// subscription's queue, where deltas coalesce.
	st := &stream[T]{svc: s, sub: sub, id: sessionID, last: last, out: make(chan T), conv: conv}
	go st.run(ctx, afterSeq != nil)
	return st.out, nil
}

type stream[T any] struct {
	svc  *Service
	sub  *pubsub.Subscription
	id   string
	last int64
	out  chan T
	conv func(core.Event) T
}

func (st *stream[T]) send(ctx context.Context, ev core.Event) bool {
	select {
	case st.out <- st.conv(ev):
		return true
	case <-ctx.Done():
		return false
	}
}

// catchUp delivers persisted events after st.last from the store, up to
// upTo (0: up to the head). limit bounds how many (0: no bound). It
// reports whether the stream goes on.
func (st *stream[T]) catchUp(ctx context.Context, upTo int64, limit int) bool {
	n := 0
	for {
		evs, err := st.svc.store.Events(ctx, st.id, st.last, replayPage)
		if err != nil {
			if ctx.Err() == nil {
				st.svc.log.Error("replay session events", "session_id", st.id, "after_seq", st.last, "err", err)
			}
			return false
		}
		if len(evs) == 0 {
			return true
		}
		for _, ev := range evs {
			if upTo > 0 && ev.Seq > upTo {
				return true
			}
			if limit > 0 && n >= limit {
				st.resync(ctx)
				return false
			}
			if !st.send(ctx, ev) {
				return false
			}
			st.last = ev.Seq
			n++
		}
	}
}

func (st *stream[T]) resync(ctx context.Context) {
	if ev, err := core.NewEvent(st.id, core.EventResyncRequired, core.ResyncPayload{LastSeq: st.last}); err == nil {
		st.send(ctx, ev)
	}
}

// deleted reports whether the session is gone, and tells the subscriber.
func (st *stream[T]) deleted(ctx context.Context) bool {
	_, err := st.svc.store.Session(ctx, st.id)
	if !errors.Is(err, core.ErrNotFound) {
		return false
	}
	if ev, err := core.NewEvent(st.id, core.EventSessionDeleted, struct{}{}); err == nil {
		st.send(ctx, ev)
	}
	return true
}

// deliver sends one live event; it reports whether the stream goes on.
func (st *stream[T]) deliver(ctx context.Context, ev core.Event) bool {
	switch {
	case ev.Type == core.EventSessionDeleted:
		st.send(ctx, ev)
		return false
	case ev.Seq == 0:
		return st.send(ctx, ev)
	case ev.Seq <= st.last:
		return true // already delivered by the replay
	}
	if ev.Seq > st.last+1 && !st.catchUp(ctx, ev.Seq-1, st.svc.maxCatchUp) {
		return false
	}
	if !st.send(ctx, ev) {
		return false
	}
	st.last = ev.Seq
	return true
}

// staleBefore is the index in batch of the last persisted event the stream
// already delivered from the store (its replay or a catch-up read it before
// the live queue was served), or 0. The live-only events queued before it
// (deltas of a message, say) were published before that event was
// persisted: what they carry is in it, and delivered after it they would
// arrive out of order, so they are dropped.
func (st *stream[T]) staleBefore(batch []core.Event) int {
	for i := len(batch) - 1; i >= 0; i-- {
		if seq := batch[i].Seq; seq > 0 && seq <= st.last {
			return i
		}
	}
	return 0
}

func (st *stream[T]) run(ctx context.Context, replay bool) {
	defer close(st.out)
	defer st.sub.Close()
	if replay && !st.catchUp(ctx, 0, 0) {
		return
	}
	var batch []core.Event
	for {
		select {
		case <-ctx.Done():
			return
		case <-st.sub.Ready:
		}
		var lagged bool
		batch, lagged = st.sub.Take(batch[:0])
		stale := st.staleBefore(batch)
		for i := range batch {
			if i < stale && batch[i].Seq == 0 && batch[i].Type != core.EventSessionDeleted {
				batch[i] = core.Event{} // live news of what a delivered persisted event holds
				continue
			}
			if !st.deliver(ctx, batch[i]) {
				return
			}
			batch[i] = core.Event{}
		}
		if lagged && (st.deleted(ctx) || !st.catchUp(ctx, 0, st.svc.maxCatchUp)) {
			return
		}
	}
}
