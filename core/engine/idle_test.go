package engine

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestIdleWatch: OnIdle runs after start-up and after each busy period,
// never while a turn runs, and not after Close.
func TestIdleWatch(t *testing.T) {
	var fired atomic.Int32
	w := newIdleWatch(30*time.Millisecond, func() { fired.Add(1) })
	waitFor := func(n int32) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for fired.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("OnIdle ran %d times, want %d", fired.Load(), n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor(1)
	w.begin()
	w.begin()
	w.end()
	time.Sleep(100 * time.Millisecond)
	if n := fired.Load(); n != 1 {
		t.Fatalf("OnIdle ran while a turn was running (%d)", n)
	}
	w.end()
	waitFor(2)
	w.begin()
	w.stop()
	w.end()
	time.Sleep(100 * time.Millisecond)
	if n := fired.Load(); n != 2 {
		t.Fatalf("OnIdle ran after stop (%d)", n)
	}
	var nilWatch *idleWatch // no OnIdle configured
	nilWatch.begin()
	nilWatch.end()
	nilWatch.stop()
}
