package engine

import (
	"context"
	"sync"
	"time"

	"github.com/foya-dev/foya/core"
)

// sessionRuntime is the in-memory scheduling state of one session.
type sessionRuntime struct {
	mu    sync.Mutex
	queue []*core.QueueItem
	rev   int64
	turn  *turnRun
	// held keeps the queue waiting after stopTurn(keepQueue: true) until the
	// next sendMessage or an explicit dispatch.
	held bool
	// busy is set while something other than a turn (compaction) owns the
	// session.
	busy string
}

type turnRun struct {
	id     string
	prompt string
	cancel context.CancelCauseFunc
	done   chan struct{}
	// started is the turn's start; finished is set by the loop to the end
	// time it recorded on the turn's last message (zero: none recorded).
	started, finished time.Time
	// session is the session as it stands after the turn's first events,
	// when the kernel knows it without reading it back (nil: read it).
	session *core.Session
	// code is the code of the turn's end reason (CodeOutputLimit), if any.
	code string
}

// runtimes holds the sessions' runtimes, created on first use. It has its
// own lock; a runtime's lock may be held while taking it, never the reverse.
type runtimes struct {
	mu sync.Mutex
	m  map[string]*sessionRuntime
}

func newRuntimes() *runtimes { return &runtimes{m: map[string]*sessionRuntime{}} }

// get returns the session's runtime, creating it.
func (r *runtimes) get(sessionID string) *sessionRuntime {
	r.mu.Lock()
	defer r.mu.Unlock()
	rt := r.m[sessionID]
	if rt == nil {
		rt = &sessionRuntime{}
		r.m[sessionID] = rt
	}
	return rt
}

// all returns every runtime.
func (r *runtimes) all() []*sessionRuntime {
	r.mu.Lock()
	defer r.mu.Unlock()
	rts := make([]*sessionRuntime, 0, len(r.m))
	for _, rt := range r.m {
		rts = append(rts, rt)
	}
	return rts
}

// load counts the sessions with a running turn or queued input and the
// queued inputs (the gauges of docs/telemetry.md).
func (r *runtimes) load() (active, queued int) {
	for _, rt := range r.all() {
		rt.mu.Lock()
		if rt.turn != nil || len(rt.queue) > 0 {
			active++
		}
		queued += len(rt.queue)
		rt.mu.Unlock()
	}
	return active, queued
}

// delete drops the runtimes of the given sessions.
func (r *runtimes) delete(sessionIDs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range sessionIDs {
		delete(r.m, id)
	}
}
