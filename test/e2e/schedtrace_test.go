package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The scheduler trace of the delta path (FOYA_BENCH_SCHED_TRACE=N runs N
// more turns of BenchmarkDeltaPath with Linux's ftrace recording every
// context switch and wake-up, docs/performance.md "Where the first delta's
// time goes"). The client, the fake provider and the kernel run on the
// same two CPUs; the trace shows, between the moment the client sends
// sendMessage and the moment it reads the first delta, what ran on each CPU
// (the kernel, its plugin, the test process with the client and the
// provider, anything else), how long each CPU idled, and how long each
// thread a wake-up made runnable waited before it ran.

const tracefs = "/sys/kernel/tracing"

// benchMarker is the ftrace marker file while a trace records: the
// client and the fake provider write their moments into the trace.
var benchMarker atomic.Pointer[os.File]

// traceMark writes msg into the trace being recorded, if any.
func traceMark(msg string) {
	if f := benchMarker.Load(); f != nil {
		f.WriteString("foya-bench: " + msg)
	}
}

// schedTrace is one ftrace recording of sched_switch and sched_wakeup.
type schedTrace struct{ marker *os.File }

func tracefsWrite(name, value string) error {
	return os.WriteFile(filepath.Join(tracefs, name), []byte(value), 0)
}

// startSchedTrace clears the trace buffer and starts recording; it needs
// root and tracefs mounted (mount -t tracefs nodev /sys/kernel/tracing).
func startSchedTrace() (*schedTrace, error) {
	for _, s := range [][2]string{
		{"tracing_on", "0"}, {"trace", ""}, {"options/record-tgid", "1"}, {"trace_clock", "mono"},
		{"buffer_size_kb", "16384"}, {"set_event", "sched:sched_switch sched:sched_wakeup" + os.Getenv("FOYA_BENCH_SCHED_TRACE_EVENTS")},
	} {
		if err := tracefsWrite(s[0], s[1]); err != nil {
			return nil, fmt.Errorf("ftrace %s: %w", s[0], err)
		}
	}
	f, err := os.OpenFile(filepath.Join(tracefs, "trace_marker"), os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("ftrace marker: %w", err)
	}
	if err := tracefsWrite("tracing_on", "1"); err != nil {
		f.Close()
		return nil, err
	}
	benchMarker.Store(f)
	return &schedTrace{marker: f}, nil
}

// stop ends the recording and parses it.
func (s *schedTrace) stop() ([]traceEvent, error) {
	benchMarker.Store(nil)
	s.marker.Close()
	if err := tracefsWrite("tracing_on", "0"); err != nil {
		return nil, err
	}
	defer tracefsWrite("set_event", "")
	f, err := os.Open(filepath.Join(tracefs, "trace"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if raw := os.Getenv("FOYA_BENCH_SCHED_TRACE_RAW"); raw != "" {
		// The last turn's whole trace, as ftrace wrote it.
		b, err := io.ReadAll(f)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(raw, b, 0o644); err != nil {
			return nil, err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
	}
	var evs []traceEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if ev, ok := parseTraceLine(sc.Text()); ok {
			evs = append(evs, ev)
		}
	}
	return evs, sc.Err()
}

// traceEvent is one line of the trace.
type traceEvent struct {
	at        time.Duration // trace clock (CLOCK_MONOTONIC)
	cpu       int
	pid, tgid int // of the thread that wrote the line
	kind      string
	// sched_switch
	prevPid  int
	nextPid  int
	nextComm string
	// sched_wakeup
	wokePid   int
	wokeComm  string
	targetCPU int
	// marker
	text string
}

// parseTraceLine reads a line of the text trace with record-tgid:
//
//	comm-pid (tgid) [cpu] flags secs.micros: event: fields
func parseTraceLine(line string) (traceEvent, bool) {
	var ev traceEvent
	open := strings.Index(line, "(")
	cls := strings.Index(line, ")")
	lb := strings.Index(line, "[")
	if open < 0 || cls < open || lb < cls || strings.HasPrefix(strings.TrimSpace(line), "#") {
		return ev, false
	}
	head := strings.TrimSpace(line[:open])
	if i := strings.LastIndex(head, "-"); i >= 0 {
		ev.pid, _ = strconv.Atoi(head[i+1:])
	}
	ev.tgid, _ = strconv.Atoi(strings.TrimSpace(line[open+1 : cls]))
	rb := strings.Index(line[lb:], "]")
	if rb < 0 {
		return ev, false
	}
	ev.cpu, _ = strconv.Atoi(line[lb+1 : lb+rb])
	rest := strings.Fields(line[lb+rb+1:])
	if len(rest) < 3 {
		return ev, false
	}
	secs := strings.TrimSuffix(rest[1], ":")
	dot := strings.Index(secs, ".")
	if dot < 0 {
		return ev, false
	}
	s, err1 := strconv.ParseInt(secs[:dot], 10, 64)
	frac := (secs[dot+1:] + "000000000")[:9]
	ns, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil {
		return ev, false
	}
	ev.at = time.Duration(s)*time.Second + time.Duration(ns)
	ev.kind = strings.TrimSuffix(rest[2], ":")
	fields := map[string]string{}
	for _, f := range rest[3:] {
		if k, v, ok := strings.Cut(f, "="); ok {
			fields[k] = v
		}
	}
	switch ev.kind {
	case "sched_switch":
		ev.prevPid, _ = strconv.Atoi(fields["prev_pid"])
		ev.nextPid, _ = strconv.Atoi(fields["next_pid"])
		ev.nextComm = fields["next_comm"]
	case "sched_wakeup":
		ev.wokePid, _ = strconv.Atoi(fields["pid"])
		ev.wokeComm = fields["comm"]
		ev.targetCPU, _ = strconv.Atoi(fields["target_cpu"])
	default:
		_, ev.text, _ = strings.Cut(line, ev.kind+": ")
	}
	return ev, true
}

// procClass names the process a thread belongs to.
type procClass func(pid int) string

// classify maps thread ids to "kernel", "plugin" (the kernel's children),
// "test" (this process: the client and the fake provider), "idle" and
// "other", from the trace and /proc.
func classify(evs []traceEvent, kernelPid int) procClass {
	tgid := map[int]int{}
	for _, ev := range evs {
		if ev.pid > 0 && ev.tgid > 0 {
			tgid[ev.pid] = ev.tgid
		}
	}
	parent := func(pid int) int {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0
		}
		s := string(b)
		i := strings.LastIndex(s, ")")
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			return 0
		}
		p, _ := strconv.Atoi(f[1])
		return p
	}
	self := os.Getpid()
	cache := map[int]string{}
	return func(pid int) string {
		if pid == 0 {
			return "idle"
		}
		if c, ok := cache[pid]; ok {
			return c
		}
		g := tgid[pid]
		if g == 0 {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
				for _, l := range strings.Split(string(b), "\n") {
					if v, ok := strings.CutPrefix(l, "Tgid:"); ok {
						g, _ = strconv.Atoi(strings.TrimSpace(v))
					}
				}
			}
		}
		c := "other"
		switch {
		case g == self:
			c = "test"
		case g == kernelPid:
			c = "kernel"
		case g != 0 && parent(g) == kernelPid:
			c = "plugin"
		}
		cache[pid] = c
		return c
	}
}

// traceWindow sums what happened between two moments of the trace.
type traceWindow struct {
	wall     time.Duration
	cpu      map[string]time.Duration // by class, summed over the CPUs
	wakeups  int
	wakeIdle int           // wake-ups of a thread onto an idle CPU
	waitIdle time.Duration // their wait: wake-up to running, the CPU woken from idle
	waitBusy time.Duration // the rest: behind another thread on the CPU
	switches int
	timeline []string
}

// window analyses [from, to] of a trace whose events are in time order.
// This machine's trace misses some switches from the idle thread to the
// thread a wake-up made runnable; a line written by a thread on a CPU
// where another ran stands for that switch, at the wake-up if it targeted
// that CPU.
func window(evs []traceEvent, class procClass, from, to time.Duration, withTimeline bool) traceWindow {
	w := traceWindow{wall: to - from, cpu: map[string]time.Duration{}}
	running := map[int]int{}         // cpu -> pid
	since := map[int]time.Duration{} // cpu -> when its pid started
	woken := map[int]traceEvent{}    // pid -> its pending wake-up
	wokeOntoIdle := map[int]bool{}   // pid -> its CPU idled when it was woken
	comm := map[int]string{0: "swapper"}
	switchTo := func(cpu int, at time.Duration, prev, next int) {
		if at >= from {
			start := max(since[cpu], from)
			if _, ok := running[cpu]; ok {
				w.cpu[class(prev)] += at - start
			}
			w.switches++
			wait := ""
			if wk, ok := woken[next]; ok && wk.at >= from {
				d := at - wk.at
				if wokeOntoIdle[next] {
					w.waitIdle += d
				} else {
					w.waitBusy += d
				}
				wait = fmt.Sprintf(" (woken %.3f ms before%s)", ms(d), map[bool]string{true: " onto the idle CPU"}[wokeOntoIdle[next]])
			}
			if withTimeline {
				w.timeline = append(w.timeline, fmt.Sprintf("%8.3f cpu%d %-6s %-15s %6d after %-6s ran %.3f ms%s",
					ms(at-from), cpu, class(next), comm[next], next, class(prev), ms(at-start), wait))
			}
		}
		delete(woken, next)
		running[cpu] = next
		since[cpu] = at
	}
	for _, ev := range evs {
		if ev.at > to {
			break
		}
		in := ev.at >= from
		if cur, ok := running[ev.cpu]; !ok {
			// The first line of a CPU: whoever wrote it runs there.
			running[ev.cpu], since[ev.cpu] = ev.pid, ev.at
		} else if cur != ev.pid {
			at := ev.at
			if wk, ok := woken[ev.pid]; ok && wk.targetCPU == ev.cpu && wk.at >= since[ev.cpu] {
				at = wk.at
			}
			switchTo(ev.cpu, at, cur, ev.pid)
		}
		switch ev.kind {
		case "sched_switch":
			comm[ev.nextPid] = ev.nextComm
			switchTo(ev.cpu, ev.at, ev.prevPid, ev.nextPid)
		case "sched_wakeup":
			comm[ev.wokePid] = ev.wokeComm
			woken[ev.wokePid] = ev
			pid, ok := running[ev.targetCPU]
			wokeOntoIdle[ev.wokePid] = ok && pid == 0
			if in {
				w.wakeups++
				if wokeOntoIdle[ev.wokePid] {
					w.wakeIdle++
				}
			}
		default:
			if in && withTimeline {
				w.timeline = append(w.timeline, fmt.Sprintf("%8.3f cpu%d %-6s %s: %s", ms(ev.at-from), ev.cpu, class(ev.pid), ev.kind, strings.TrimSpace(ev.text)))
			}
		}
	}
	for cpu, pid := range running {
		start := max(since[cpu], from)
		if start < to {
			w.cpu[class(pid)] += to - start
		}
	}
	return w
}

// markers are the trace's marker events whose text starts with prefix.
func markers(evs []traceEvent, prefix string) []time.Duration {
	var out []time.Duration
	for _, ev := range evs {
		if ev.kind == "tracing_mark_write" && strings.HasPrefix(strings.TrimSpace(ev.text), "foya-bench: "+prefix) {
			out = append(out, ev.at)
		}
	}
	return out
}

// formatWindow is one row of the summary.
func formatWindow(name string, w traceWindow) string {
	classes := []string{"kernel", "plugin", "test", "other", "idle"}
	var b strings.Builder
	fmt.Fprintf(&b, "%-16s wall %6.3f ms |", name, ms(w.wall))
	for _, c := range classes {
		fmt.Fprintf(&b, " %s %6.3f", c, ms(w.cpu[c]))
	}
	fmt.Fprintf(&b, " | switches %3d, wake-ups %3d (%d onto an idle CPU: waited %.3f ms; behind another thread: %.3f ms)",
		w.switches, w.wakeups, w.wakeIdle, ms(w.waitIdle), ms(w.waitBusy))
	return b.String()
}

// medianWindow is the window whose wall time is the median.
func medianWindow(ws []traceWindow) traceWindow {
	s := slices.Clone(ws)
	slices.SortFunc(s, func(a, b traceWindow) int { return int(a.wall - b.wall) })
	return s[len(s)/2]
}

// schedTraceTurns runs n more turns of the delta path (each a direct read
// of the provider, then a turn through the kernel to a graphql-ws
// subscriber) with the scheduler trace on, and logs what the trace shows
// for each and for the median turn.
func schedTraceTurns(ctx context.Context, b *testing.B, k *kernelProc, prov *benchProvider, n int, fresh func() (string, *wsSub), settle func(), want string) {
	var floor, toProvider, back, total []traceWindow
	var turns []traceEvents
	for i := range n {
		sid, sub := fresh()
		settle()
		tr, err := startSchedTrace()
		if err != nil {
			b.Skipf("FOYA_BENCH_SCHED_TRACE: %v (needs root and tracefs)", err)
		}
		traceMark("direct-send")
		if _, _, err := readDirect(ctx, prov.baseURL()); err != nil {
			b.Fatal(err)
		}
		traceMark("send")
		if _, err := viaKernel(ctx, k, b, sid, sub, want); err != nil {
			b.Fatal(err)
		}
		sub.close()
		evs, err := tr.stop()
		if err != nil {
			b.Fatal(err)
		}
		ds, chunks, df := markers(evs, "direct-send"), markers(evs, "chunk"), markers(evs, "direct-first")
		send, first := markers(evs, "send"), markers(evs, "first")
		if len(ds) != 1 || len(chunks) != 2 || len(df) != 1 || len(send) != 1 || len(first) != 1 {
			b.Fatalf("turn %d: the trace lost markers (%d %d %d %d %d)", i, len(ds), len(chunks), len(df), len(send), len(first))
		}
		class := classify(evs, k.cmd.Process.Pid)
		floor = append(floor, window(evs, class, ds[0], df[0], false))
		toProvider = append(toProvider, window(evs, class, send[0], chunks[1], false))
		back = append(back, window(evs, class, chunks[1], first[0], false))
		total = append(total, window(evs, class, send[0], first[0], false))
		fmt.Printf("traced turn %d:\n  %s\n  %s\n  %s\n  %s\n", i,
			formatWindow("floor", floor[i]), formatWindow("send→chunk", toProvider[i]),
			formatWindow("chunk→delta", back[i]), formatWindow("send→delta", total[i]))
		end, _ := slices.BinarySearchFunc(evs, first[0]+time.Nanosecond, func(ev traceEvent, at time.Duration) int { return int(ev.at - at) })
		turns = append(turns, traceEvents{evs: evs[:end], class: class, from: send[0], to: first[0]})
	}
	median, mid := turns[0], medianWindow(total).wall
	for i, t := range total {
		if t.wall == mid {
			median = turns[i]
		}
	}
	fmt.Printf("medians of %d traced turns:\n  %s\n  %s\n  %s\n  %s\n", n,
		formatWindow("floor", medianWindow(floor)), formatWindow("send→chunk", medianWindow(toProvider)),
		formatWindow("chunk→delta", medianWindow(back)), formatWindow("send→delta", medianWindow(total)))
	tl := window(median.evs, median.class, median.from, median.to, true)
	fmt.Printf("timeline of a median turn (ms from sendMessage; each line a thread starting to run on a CPU, after what and how long after its wake-up, or a marker):\n%s\n", strings.Join(tl.timeline, "\n"))
}

// traceEvents is one turn's trace kept for its timeline.
type traceEvents struct {
	evs      []traceEvent
	class    procClass
	from, to time.Duration
}
