package sdk

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestIdleWatch checks that OnIdle runs once the plugin has been without a
// call for the idle time — after start-up and after each burst of calls —
// and never while a call is in progress.
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
	waitFor(1) // idle after start-up

	w.begin()
	w.begin()
	time.Sleep(100 * time.Millisecond)
	w.end()
	time.Sleep(100 * time.Millisecond)
	if n := fired.Load(); n != 1 {
		t.Fatalf("OnIdle ran while a call was in progress (%d)", n)
	}
	w.end()
	waitFor(2)
	time.Sleep(100 * time.Millisecond)
	if n := fired.Load(); n != 2 {
		t.Fatalf("OnIdle ran %d times for one idle period", n)
	}
	if !counted("/foya.v1.Provider/Stream") || counted("/plugin.GRPCStdio/StreamStdio") || counted("/grpc.health.v1.Health/Check") {
		t.Fatal("counted: only foya.v1 calls count")
	}
}
