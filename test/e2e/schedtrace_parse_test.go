package e2e

import (
	"strings"
	"testing"
	"time"
)

// A piece of a real trace of this machine (ftrace, record-tgid): the
// switch from the idle thread to pid 101 on CPU 1 is missing, as it often
// is here; the line pid 101 writes on CPU 1 stands for it.
const sampleTrace = `# tracer: nop
#
        e2e.test-7       (      7) [000] ...1.   100.000000: tracing_mark_write: foya-bench: send
        e2e.test-7       (      7) [000] d..3.   100.000100: sched_wakeup: comm=foya pid=101 prio=120 target_cpu=001
          <idle>-0       (-------) [001] dNh2.   100.000100: sched_wakeup: comm=foya pid=101 prio=120 target_cpu=001
            foya-101     (    100) [001] d..2.   100.000600: sched_switch: prev_comm=foya prev_pid=101 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
        e2e.test-7       (      7) [000] d..2.   100.000700: sched_switch: prev_comm=e2e.test prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=foya next_pid=102 next_prio=120
            foya-102     (    100) [000] ...1.   100.001000: tracing_mark_write: foya-bench: first
`

func TestSchedTraceWindow(t *testing.T) {
	t.Parallel()
	var evs []traceEvent
	for _, l := range strings.Split(sampleTrace, "\n") {
		if ev, ok := parseTraceLine(l); ok {
			evs = append(evs, ev)
		}
	}
	if len(evs) != 6 {
		t.Fatalf("%d events parsed, want 6", len(evs))
	}
	if ev := evs[3]; ev.kind != "sched_switch" || ev.cpu != 1 || ev.pid != 101 || ev.tgid != 100 || ev.prevPid != 101 || ev.nextPid != 0 || ev.at != 100*time.Second+600*time.Microsecond {
		t.Fatalf("switch parsed as %+v", ev)
	}
	send, first := markers(evs, "send"), markers(evs, "first")
	if len(send) != 1 || len(first) != 1 {
		t.Fatalf("markers: %v %v", send, first)
	}
	class := func(pid int) string {
		switch pid {
		case 0:
			return "idle"
		case 7:
			return "test"
		}
		return "kernel"
	}
	// CPU 0 runs the test until 0.7 ms, then the kernel. CPU 1's first
	// line is the idle thread's at 0.1 ms (what ran before is unknown); the
	// wake-up there starts pid 101, which runs until 0.6 ms; then it idles.
	w := window(evs, class, send[0], first[0], true)
	want := map[string]time.Duration{"idle": 400 * time.Microsecond, "kernel": 800 * time.Microsecond, "test": 700 * time.Microsecond}
	for c, d := range want {
		if w.cpu[c] != d {
			t.Errorf("%s: %v, want %v (all: %v)", c, w.cpu[c], d, w.cpu)
		}
	}
	if w.wakeups != 2 || w.wall != time.Millisecond {
		t.Errorf("wake-ups %d, wall %v", w.wakeups, w.wall)
	}
	if !strings.Contains(strings.Join(w.timeline, "\n"), "foya-bench: first") {
		t.Errorf("timeline without the marker:\n%s", strings.Join(w.timeline, "\n"))
	}
}
