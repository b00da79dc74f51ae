package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkLongRun is a kernel that runs all day: each op is the life of
// one session, as a client lives it, against the real `foya serve` and its
// openai plugin: create the session, subscribe to it over
// graphql-transport-ws, three turns of a 50-chunk reply, unsubscribe,
// delete it. After a warm-up of 20 sessions and again after b.N more,
// each time once the kernel has gone idle (7 s), it reads, through serve
// --pprof, the kernel's Go heap in use after a
// collection and its goroutines, and the kernel's and plugins' memory
// from /proc; it reports what each grew by per 1,000 sessions. A kernel
// that keeps nothing of a deleted session grows by nothing but its
// caches; a leak shows as a figure that grows with -benchtime.
//
//	go test -run '^$' -bench LongRun -benchtime 1000x ./test/e2e
//
// With -kernel-heapprofile path, the kernel's heap profiles of both
// moments are written to path.before and path.after.
func BenchmarkLongRun(b *testing.B) {
	const warmup, turns = 20, 3
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	prov := newBenchProvider(b, 50, 0, false)
	k, addr := startBenchKernelPprof(b, true)
	conn := ""
	life := func(b *testing.B) {
		var sid string
		if conn == "" {
			sid = k.chatSession(b, prov.baseURL())
			conn = "made"
		} else {
			sid = k.chatSession2(b)
		}
		// A life takes milliseconds: one that takes a minute is stuck.
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		// From seq 0: the history (session_created) and then live events,
		// so the first turn's events are the subscription's whether or
		// not the kernel has taken the subscribe message by the time
		// sendMessage commits (live only, they were lost 2 lives in 6,000).
		sub, err := dialSub(ctx, k.addr, longRunSubscription, map[string]any{"s": sid})
		if err != nil {
			b.Fatal(err)
		}
		for turn := range turns {
			if _, err := viaKernel(ctx, k, b, sid, sub, ""); err != nil {
				dump := filepath.Join(b.TempDir(), "kernel-goroutines.txt")
				if err := fetchProfile(addr, "goroutine?debug=2", dump); err != nil {
					b.Logf("kernel goroutines: %v", err)
				} else if raw, err := os.ReadFile(dump); err == nil {
					b.Logf("kernel goroutines:\n%s", raw)
				}
				b.Fatalf("session %s, turn %d: %v; its events: %+v", sid, turn+1, err, k.eventLog(b, sid))
			}
		}
		sub.close()
		k.deleteSession(b, sid)
	}
	for range warmup {
		life(b)
	}
	// -kernel-heapprofile: the heap profiles of both moments, for
	// go tool pprof -base <path>.before <path>.after
	heapProfile := func(suffix string) {
		if *kernelHeapProfile == "" {
			return
		}
		if err := fetchProfile(addr, "heap?gc=1", *kernelHeapProfile+suffix); err != nil {
			b.Fatalf("kernel heap profile: %v", err)
		}
	}
	// Both readings are of the kernel gone idle: 7 s after its last turn
	// (it hands memory back after 5 s, engine.DefaultIdleAfter).
	time.Sleep(7 * time.Second)
	before := readKernelState(b, addr, k)
	heapProfile(".before")
	b.ResetTimer()
	for range b.N {
		life(b)
	}
	b.StopTimer()
	busy := readKernelState(b, addr, k)
	time.Sleep(7 * time.Second)
	after := readKernelState(b, addr, k)
	heapProfile(".after")
	// Once its plugins are stopped for idleness (benchPluginIdleStop after
	// their last call), the kernel also drops its mappings of the code it
	// ran (memtrim.TrimAll): what a kernel idle for long holds.
	stopCtx, stopCancel := context.WithTimeout(ctx, 30*time.Second)
	waitPluginsStopped(stopCtx, b, k) // and a second for the trim that runs as the last one stops
	stopCancel()
	stopped := processMem(k.cmd.Process.Pid)
	per := func(v int64) float64 { return float64(v) * 1000 / float64(b.N) }
	b.ReportMetric(per(after.heap-before.heap)/(1<<10), "heap-KB/1k-sessions")
	b.ReportMetric(per(after.goroutines-before.goroutines), "goroutines/1k-sessions")
	b.ReportMetric(per(after.mem.pss-before.mem.pss)/(1<<20), "pss-MB/1k-sessions")
	b.ReportMetric(per(after.mem.rss-before.mem.rss)/(1<<20), "rss-MB/1k-sessions")
	b.ReportMetric(per(after.goMapped-before.goMapped)/(1<<10), "go-sys-KB/1k-sessions")
	b.ReportMetric(per(after.mem.anon-before.mem.anon)/(1<<10), "kernel-anon-KB/1k-sessions")
	b.ReportMetric(float64(busy.mem.anon)/(1<<20), "busy-kernel-anon-MB")
	b.ReportMetric(float64(after.mem.anon)/(1<<20), "kernel-anon-MB")
	b.ReportMetric(float64(after.heap)/(1<<20), "heap-MB")
	b.ReportMetric(float64(after.mem.pss)/(1<<20), "pss-MB")
	b.ReportMetric(float64(stopped.pss)/(1<<20), "stopped-pss-MB")
	b.Logf("after %d sessions: heap in use %.2f → %.2f MB, the Go runtime's share of the system's memory %.2f → %.2f MB, the kernel's anonymous memory %.2f → %.2f MB, goroutines %d → %d, PSS %.1f → %.1f MB, RSS %.1f → %.1f MB;%s; the plugins stopped: PSS %.1f MB, RSS %.1f MB;%s",
		b.N, float64(before.heap)/(1<<20), float64(after.heap)/(1<<20), float64(before.goMapped)/(1<<20), float64(after.goMapped)/(1<<20),
		float64(before.mem.anon)/(1<<20), float64(after.mem.anon)/(1<<20), before.goroutines, after.goroutines,
		float64(before.mem.pss)/(1<<20), float64(after.mem.pss)/(1<<20), float64(before.mem.rss)/(1<<20), float64(after.mem.rss)/(1<<20), after.mem.detail,
		float64(stopped.pss)/(1<<20), float64(stopped.rss)/(1<<20), stopped.detail)
}

const longRunSubscription = `subscription($s: ID!) { sessionEvents(sessionId: $s, afterSeq: 0) { seq type delta message { role text } } }`

// kernelState is what BenchmarkLongRun reads of the kernel between its
// rounds.
type kernelState struct {
	heap       int64 // HeapInuse after a collection
	goMapped   int64 // what the Go runtime holds from the system: Sys less HeapReleased
	goroutines int64
	mem        memUse
}

// readKernelState collects the kernel's garbage and reads its heap in use
// and goroutines through serve --pprof at addr, and its and its plugins'
// memory from /proc.
func readKernelState(tb testing.TB, addr string, k *kernelProc) kernelState {
	tb.Helper()
	get := func(name string) io.ReadCloser {
		resp, err := http.Get("http://" + addr + "/debug/pprof/" + name)
		if err != nil {
			tb.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			tb.Fatalf("/debug/pprof/%s: %s", name, resp.Status)
		}
		return resp.Body
	}
	var st kernelState
	body := get("heap?gc=1&debug=1") // runtime.MemStats after a collection, at the end
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "# "), " = ")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch name {
		case "HeapInuse":
			st.heap = n
		case "Sys":
			st.goMapped += n
		case "HeapReleased":
			st.goMapped -= n
		}
	}
	body.Close()
	body = get("goroutine?debug=1")
	line, _ := bufio.NewReader(body).ReadString('\n') // goroutine profile: total N
	body.Close()
	if _, err := fmt.Sscanf(line, "goroutine profile: total %d", &st.goroutines); err != nil {
		tb.Fatalf("goroutine profile: %q: %v", line, err)
	}
	if st.heap == 0 {
		tb.Fatal("no HeapInuse in the kernel's heap profile")
	}
	st.mem = processMem(k.cmd.Process.Pid)
	return st
}
