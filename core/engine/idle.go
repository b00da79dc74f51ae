package engine

import (
	"sync"
	"time"
)

// DefaultIdleAfter is how long no turn must have run before
// Config.OnIdle is called.
const DefaultIdleAfter = 5 * time.Second

// idleWatch calls fn once no turn has been running for after. All methods
// are no-ops on a nil *idleWatch (no OnIdle configured).
type idleWatch struct {
	mu      sync.Mutex
	active  int
	stopped bool
	timer   *time.Timer
	after   time.Duration
	fn      func()
}

func newIdleWatch(after time.Duration, fn func()) *idleWatch {
	if after <= 0 {
		after = DefaultIdleAfter
	}
	w := &idleWatch{after: after, fn: fn}
	w.timer = time.AfterFunc(after, w.fire) // idle since start-up
	return w
}

func (w *idleWatch) begin() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.active++
	w.timer.Stop()
	w.mu.Unlock()
}

func (w *idleWatch) end() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.active--
	if w.active == 0 && !w.stopped {
		w.timer.Reset(w.after)
	}
	w.mu.Unlock()
}

func (w *idleWatch) stop() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.stopped = true
	w.timer.Stop()
	w.mu.Unlock()
}

// fire runs fn unless a turn began (or the engine closed) after the timer
// expired.
func (w *idleWatch) fire() {
	w.mu.Lock()
	idle := w.active == 0 && !w.stopped
	w.mu.Unlock()
	if idle {
		w.fn()
	}
}
