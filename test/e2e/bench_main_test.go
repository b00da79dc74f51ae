package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	kernelCPUProfile  = flag.String("kernel-cpuprofile", "", "BenchmarkDeltaPath and BenchmarkDeltaPathHundred: write a 10 s CPU profile of the kernel process (taken through serve --pprof while replies stream) to this file; a name ending in .trace gets a 3 s execution trace instead (go tool trace), one ending in .allocs what the kernel allocated in 10 s (two allocation profiles, for pprof -base)")
	coldBinary        = flag.Bool("cold-binary", false, "benchmarks of the foya binary: drop the freshly built binary from the page cache before starting the kernel, so that it is read from disk like an installed binary after a reboot (the linker's writes leave it cached in large folios, which every process maps whole)")
	benchTelemetry    = flag.String("telemetry", "", "the delta-path benchmarks: the kernel's telemetry: off (--no-metrics: nothing installed), otlp (spans and metrics exported over OTLP/HTTP to a local receiver, docs/telemetry.md), or empty (the default: metrics on /metrics, no export)")
	kernelHeapProfile = flag.String("kernel-heapprofile", "", "BenchmarkDeltaPathHundred: write a heap profile of the kernel process (through serve --pprof), taken while 100 sessions stream, to this file")
	pluginProfile     = flag.String("plugin-profile", "", "BenchmarkDeltaPathHundred: write profiles of the provider plugin process (through FOYA_PLUGIN_PPROF), taken while 100 sessions stream, to files with this prefix: .heap, .goroutines.txt, .metrics.txt, .smaps.txt")
)

// The delta-path benchmarks run the real `foya serve` binary with its
// out-of-process plugins against a fake OpenAI-compatible server, with real
// clients (graphql-transport-ws, SSE, `foya exec`). See docs/performance.md.
//
//	go test -run '^$' -bench DeltaPath -benchtime 5x ./test/e2e

// benchChunks is the length of the streamed reply, in chunks.
const benchChunks = 2000

// benchProvider is an OpenAI-compatible Chat Completions endpoint that
// streams a fixed number of content chunks as fast as it can (one write and
// flush per chunk, like a real server), and answers non-streamed requests
// (titles) with a short completion. With stamp set, each chunk's text is
// "<unix nanos> " of the moment it was written, so a subscriber can measure
// the delay from chunk to screen.
type benchProvider struct {
	*httptest.Server
	chunks   int
	interval time.Duration
	stamp    bool
	// firstAtOnce: the interval passes between chunks only, not before
	// the first (a model that streams at its own pace once it started).
	firstAtOnce bool
	requests    atomic.Int64
}

func newBenchProvider(tb testing.TB, chunks int, interval time.Duration, stamp bool) *benchProvider {
	p := &benchProvider{chunks: chunks, interval: interval, stamp: stamp}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	tb.Cleanup(p.Close)
	return p
}

func (p *benchProvider) baseURL() string { return p.URL + "/v1" }

const benchChunkHead = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench","choices":[{"index":0,"delta":{"content":`

func (p *benchProvider) serve(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	var req struct {
		Stream bool `json:"stream"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c","object":"chat.completion","created":1700000000,"model":"bench","choices":[{"index":0,"message":{"role":"assistant","content":"Bench"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	io.WriteString(w, `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`+"\n\n")
	fl.Flush()
	var buf []byte
	for i := 0; i < p.chunks; i++ {
		if p.interval > 0 && (i > 0 || !p.firstAtOnce) {
			time.Sleep(p.interval)
		}
		buf = append(buf[:0], benchChunkHead...)
		if p.stamp {
			buf = strconv.AppendQuote(buf, strconv.FormatInt(time.Now().UnixNano(), 10)+" ")
		} else {
			buf = append(buf, `"tok "`...)
		}
		buf = append(buf, "},\"finish_reason\":null}]}\n\n"...)
		if _, err := w.Write(buf); err != nil {
			return
		}
		fl.Flush()
		if i == 0 {
			traceMark("chunk")
		}
	}
	io.WriteString(w, `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
	io.WriteString(w, `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":`+strconv.Itoa(p.chunks)+`,"total_tokens":`+strconv.Itoa(p.chunks+10)+`}}`+"\n\n")
	io.WriteString(w, "data: [DONE]\n\n")
}

// BenchmarkDeltaPath measures targets 1 and 2 of the delta path in one run:
// a 2,000-chunk reply read from the provider directly (the floor), through
// `foya serve` to a graphql-transport-ws subscriber, and to an SSE
// subscriber. It reports medians of the whole reply and the first token,
// and the ratios to the floor.
func BenchmarkDeltaPath(b *testing.B) {
	benchDeltaPath(b, newBenchProvider(b, benchChunks, 0, false))
}

// BenchmarkDeltaPathPaced is BenchmarkDeltaPath with a provider that
// streams at a model's pace: the first token at once, then 20 more, one
// every 5 ms (200 tokens/s). The first delta is then measured without the
// 2,000-chunk burst that follows it competing for the two CPUs (the
// provider writing it, the plugin decoding it), which is how hosted models
// stream; the whole-reply figures mean little here (100 ms of pauses).
func BenchmarkDeltaPathPaced(b *testing.B) {
	prov := newBenchProvider(b, 21, 5*time.Millisecond, false)
	prov.firstAtOnce = true
	benchDeltaPath(b, prov)
}

// benchDeltaPath runs BenchmarkDeltaPath's measurement against prov.
func benchDeltaPath(b *testing.B, prov *benchProvider) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	want := strings.Repeat("tok ", prov.chunks)
	k, pprofAddr := startBenchKernel(b)
	k.chatSession(b, prov.baseURL()) // the connection; its session is not used
	// Every measured reply is the first turn of a new session, so each
	// request to the provider is the same (system prompt, tool schemas,
	// one message) whatever -benchtime is. Sessions and subscriptions are
	// made before the clock starts.
	type pair struct {
		ws, sse string
		wsSub   *wsSub
		sseSub  *sseSub
	}
	fresh := func() pair {
		var p pair
		var err error
		p.ws, p.sse = k.chatSession2(b), k.chatSession2(b)
		if p.wsSub, err = dialSub(ctx, k.addr, benchSubscription, map[string]any{"s": p.ws}); err != nil {
			b.Fatal(err)
		}
		if p.sseSub, err = dialSSE(ctx, k.addr, benchSubscription, map[string]any{"s": p.sse}); err != nil {
			b.Fatal(err)
		}
		return p
	}
	// settle collects the clients' garbage (2,000 decoded chunks per
	// reply) before the next measurement, so no path is measured while the
	// test process collects the one before; FOYA_BENCH_SETTLE=20ms adds an
	// idle pause too (every process starts the turn from sleep), "none"
	// skips both.
	settle := func() {
		d := os.Getenv("FOYA_BENCH_SETTLE")
		if d == "none" {
			return
		}
		runtime.GC()
		if d != "" {
			dd, _ := time.ParseDuration(d)
			time.Sleep(dd)
		}
	}
	// both runs a reply through each transport, graphql-ws first unless
	// sseFirst: the measured replies alternate the order, so that neither
	// transport always takes the first turn after a settle.
	both := func(p pair, sseFirst bool) (w, s timing) {
		defer p.wsSub.close()
		defer p.sseSub.close()
		viaWS := func() {
			settle()
			var err error
			if w, err = viaKernel(ctx, k, b, p.ws, p.wsSub, want); err != nil {
				b.Fatalf("graphql-ws: %v", err)
			}
		}
		viaSSE := func() {
			settle()
			var err error
			if s, err = viaKernel(ctx, k, b, p.sse, p.sseSub, want); err != nil {
				b.Fatalf("sse: %v", err)
			}
		}
		if sseFirst {
			viaSSE()
			viaWS()
		} else {
			viaWS()
			viaSSE()
		}
		return w, s
	}
	// Warm up every path once (plugin connections, query caches).
	if _, _, err := readDirect(ctx, prov.baseURL()); err != nil {
		b.Fatal(err)
	}
	both(fresh(), false)
	if pprofAddr != "" && *kernelCPUProfile != "" {
		// A fresh pair of sessions per reply, as measured below (both
		// closes the subscriptions it used).
		profileKernel(ctx, b, pprofAddr, *kernelCPUProfile, func() { both(fresh(), false) })
	}
	var direct, viaWS, viaSSE []timing
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		p := fresh()
		settle()
		b.StartTimer()
		d, text, err := readDirect(ctx, prov.baseURL())
		if err != nil || text != want {
			b.Fatalf("direct read: %v (%d bytes)", err, len(text))
		}
		direct = append(direct, d)
		w, s := both(p, i%2 == 1)
		viaWS = append(viaWS, w)
		viaSSE = append(viaSSE, s)
	}
	b.StopTimer()
	if n, _ := strconv.Atoi(os.Getenv("FOYA_BENCH_SCHED_TRACE")); n > 0 {
		schedTraceTurns(ctx, b, k, prov, n, func() (string, *wsSub) {
			p := fresh()
			p.sseSub.close()
			return p.ws, p.wsSub
		}, settle, want)
	}
	whole := func(ts []timing) time.Duration {
		return median(mapTimings(ts, func(t timing) time.Duration { return t.whole }))
	}
	first := func(ts []timing) time.Duration {
		return median(mapTimings(ts, func(t timing) time.Duration { return t.first }))
	}
	if os.Getenv("FOYA_TRACE") != "" {
		for _, l := range strings.Split(k.Logs(), "\n") {
			if strings.Contains(l, "TRACE") {
				fmt.Println(l)
			}
		}
	}
	b.ReportMetric(ms(whole(direct)), "direct-ms")
	b.ReportMetric(ms(whole(viaWS)), "ws-ms")
	b.ReportMetric(ms(whole(viaSSE)), "sse-ms")
	b.ReportMetric(float64(whole(viaWS))/float64(whole(direct)), "ws-ratio")
	b.ReportMetric(float64(whole(viaSSE))/float64(whole(direct)), "sse-ratio")
	b.ReportMetric(ms(first(direct)), "direct-first-ms")
	b.ReportMetric(ms(first(viaWS)), "ws-first-ms")
	b.ReportMetric(ms(first(viaSSE)), "sse-first-ms")
	b.Logf("%d-chunk reply, medians of %d: direct %.1f ms (first %.2f ms) | graphql-ws %.1f ms (first %.2f ms, %.2f× the floor) | SSE %.1f ms (first %.2f ms, %.2f× the floor)",
		prov.chunks, b.N, ms(whole(direct)), ms(first(direct)), ms(whole(viaWS)), ms(first(viaWS)), float64(whole(viaWS))/float64(whole(direct)),
		ms(whole(viaSSE)), ms(first(viaSSE)), float64(whole(viaSSE))/float64(whole(direct)))
}

// BenchmarkDeltaPathHundred measures targets 3 and 5: resident memory of
// the kernel and its plugin processes started and idle (boot-*), idle after
// one turn (idle-*) and while 100
// sessions stream at once, each to its own graphql-ws subscriber; the delay
// from the provider writing a chunk to the subscriber reading it (p50, p99),
// and terminal events lost. Each stream is 200 chunks, one every 5 ms
// (200 tokens/s per session, 20,000 chunks/s in all).
func BenchmarkDeltaPathHundred(b *testing.B) {
	const sessions, chunks = 100, 200
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	prov := newBenchProvider(b, chunks, 5*time.Millisecond, true)
	var pluginPprof string
	if *pluginProfile != "" {
		pluginPprof = freeLoopbackAddr(b)
		b.Setenv("FOYA_PLUGIN_PPROF", pluginPprof) // the kernel passes it on to its built-in plugins
	}
	k, pprofAddr := startBenchKernel(b)
	// Started and idle: 7 s after start, no client, no connection (the
	// built-in plugins start at their first call: none runs).
	time.Sleep(7 * time.Second)
	boot := processMem(k.cmd.Process.Pid)
	b.Logf("started, idle:%s", boot.detail)
	ids := []string{k.chatSession(b, prov.baseURL())}
	for len(ids) < sessions {
		ids = append(ids, k.chatSession2(b))
	}
	subs := make([]*wsSub, sessions)
	dial := func(i int) {
		s, err := dialSub(ctx, k.addr, benchSubscription, map[string]any{"s": ids[i]})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(s.close)
		subs[i] = s
	}
	// Idle: 7 s after one turn (everything that starts lazily has started;
	// built-in plugins hand back memory after 5 s without a call, see
	// sdk.DefaultIdleAfter), with one client connected.
	dial(0)
	if _, err := viaKernel(ctx, k, b, ids[0], subs[0], ""); err != nil {
		b.Fatal(err)
	}
	time.Sleep(7 * time.Second)
	idle := processMem(k.cmd.Process.Pid)
	b.Logf("idle:%s", idle.detail)
	// Idle after the built-in plugins' idle stop (--plugin-idle-stop,
	// shortened for the benchmark): the kernel alone.
	waitPluginsStopped(ctx, b, k)
	stopped := processMem(k.cmd.Process.Pid)
	b.Logf("idle, plugins stopped:%s", stopped.detail)
	for i := 1; i < sessions; i++ {
		dial(i)
	}

	var peak, peakPSS atomic.Int64
	var pluginRSS, pluginPSS, pluginAnon atomic.Int64 // each the plugins' own peak
	var peakDetail atomic.Value
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			m := processMem(k.cmd.Process.Pid)
			if m.rss > peak.Load() {
				peak.Store(m.rss)
				peakDetail.Store(m.detail)
			}
			if m.pss > peakPSS.Load() {
				peakPSS.Store(m.pss)
			}
			for _, p := range []struct {
				v   *atomic.Int64
				now int64
			}{{&pluginRSS, m.childRSS}, {&pluginPSS, m.childPSS}, {&pluginAnon, m.childAnon}} {
				if p.now > p.v.Load() {
					p.v.Store(p.now)
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	var mu sync.Mutex
	var delays []time.Duration
	lost := 0
	round := func() {
		var wg sync.WaitGroup
		for i, sid := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				k.sendMessage(b, sid, "go")
				var mine []time.Duration
				finished := false
				for !finished {
					ev, err := subs[i].next(ctx)
					if err != nil {
						break
					}
					switch ev.Type {
					case "message_delta":
						now := time.Now()
						if ev.Delta == nil {
							continue
						}
						for _, f := range strings.Fields(*ev.Delta) {
							if n, err := strconv.ParseInt(f, 10, 64); err == nil {
								mine = append(mine, now.Sub(time.Unix(0, n)))
							}
						}
					case "turn_finished":
						finished = true
					}
				}
				mu.Lock()
				defer mu.Unlock()
				delays = append(delays, mine...)
				if !finished {
					lost++
				}
			}()
		}
		wg.Wait()
	}
	if pprofAddr != "" && *kernelCPUProfile != "" {
		profileKernel(ctx, b, pprofAddr, *kernelCPUProfile, round)
		delays, lost = nil, 0
	}
	if pprofAddr != "" && *kernelHeapProfile != "" {
		// Halfway through the streams (200 chunks, 5 ms apart).
		heapDone := make(chan struct{})
		go func() {
			defer close(heapDone)
			time.Sleep(chunks * 5 * time.Millisecond / 2)
			if err := fetchProfile(pprofAddr, "heap?debug=1", *kernelHeapProfile+".txt"); err != nil {
				b.Errorf("kernel heap profile: %v", err)
				return
			}
			if err := fetchProfile(pprofAddr, "heap", *kernelHeapProfile); err != nil {
				b.Errorf("kernel heap profile: %v", err)
				return
			}
			if err := fetchProfile(pprofAddr, "goroutine?debug=1", *kernelHeapProfile+".goroutines.txt"); err != nil {
				b.Errorf("kernel goroutine profile: %v", err)
				return
			}
			if raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", k.cmd.Process.Pid)); err == nil {
				_ = os.WriteFile(*kernelHeapProfile+".smaps", raw, 0o644)
			}
			b.Logf("kernel heap profile written to %s (runtime.MemStats in %s.txt): go tool pprof -sample_index=inuse_space -top %s", *kernelHeapProfile, *kernelHeapProfile, *kernelHeapProfile)
		}()
		round()
		<-heapDone
		delays, lost = nil, 0
	}
	if pluginPprof != "" {
		profiled := make(chan struct{})
		go func() {
			defer close(profiled)
			profilePlugin(b, k, pluginPprof, *pluginProfile, 3*sessions, chunks*5*time.Millisecond)
		}()
		round()
		<-profiled
		delays, lost = nil, 0
	}
	cpu0 := childrenCPU(k.cmd.Process.Pid)
	b.ResetTimer()
	for range b.N {
		round()
	}
	b.StopTimer()
	pluginCPU := childrenCPU(k.cmd.Process.Pid) - cpu0
	close(stop)
	<-sampled
	slices.Sort(delays)
	pct := func(p float64) time.Duration {
		if len(delays) == 0 {
			return 0
		}
		return delays[min(len(delays)-1, int(float64(len(delays))*p))]
	}
	b.ReportMetric(float64(boot.rss)/(1<<20), "boot-rss-MB")
	b.ReportMetric(float64(boot.pss)/(1<<20), "boot-pss-MB")
	b.ReportMetric(float64(idle.rss)/(1<<20), "idle-rss-MB")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-rss-MB")
	b.ReportMetric(float64(idle.pss)/(1<<20), "idle-pss-MB")
	b.ReportMetric(float64(stopped.rss)/(1<<20), "idle-stop-rss-MB")
	b.ReportMetric(float64(stopped.pss)/(1<<20), "idle-stop-pss-MB")
	b.ReportMetric(float64(peakPSS.Load())/(1<<20), "peak-pss-MB")
	// The plugin processes alone, each figure at its own peak, and the CPU
	// time they used for the measured rounds.
	b.ReportMetric(float64(pluginRSS.Load())/(1<<20), "plugin-peak-rss-MB")
	b.ReportMetric(float64(pluginPSS.Load())/(1<<20), "plugin-peak-pss-MB")
	b.ReportMetric(float64(pluginAnon.Load())/(1<<20), "plugin-peak-anon-MB")
	b.ReportMetric(float64(pluginCPU.Milliseconds())/float64(b.N), "plugin-cpu-ms/op")
	if d, ok := peakDetail.Load().(string); ok {
		b.Logf("at peak RSS:%s", d)
	}
	b.ReportMetric(ms(pct(0.50)), "p50-ms")
	b.ReportMetric(ms(pct(0.99)), "p99-ms")
	b.ReportMetric(float64(len(delays))/float64(b.N*sessions*chunks), "chunks-seen")
	b.ReportMetric(float64(lost), "terminal-lost")
	b.Logf("kernel+plugins idle RSS %.1f MB (PSS %.1f MB), after the plugins' idle stop %.1f MB (PSS %.1f MB), peak with %d streaming sessions RSS %.1f MB (PSS %.1f MB); chunk→subscriber p50 %.2f ms p99 %.2f ms over %d chunks; terminal events lost %d",
		float64(idle.rss)/(1<<20), float64(idle.pss)/(1<<20), float64(stopped.rss)/(1<<20), float64(stopped.pss)/(1<<20), sessions, float64(peak.Load())/(1<<20), float64(peakPSS.Load())/(1<<20), ms(pct(0.5)), ms(pct(0.99)), len(delays), lost)
}

// BenchmarkDeltaPathExec measures target 4: `foya exec` as a whole process
// against a running kernel, streaming the 2,000-chunk reply to stdout: the
// time to its first byte of text and to its exit.
func BenchmarkDeltaPathExec(b *testing.B) {
	prov := newBenchProvider(b, benchChunks, 0, false)
	want := strings.Repeat("tok ", benchChunks)
	k := startKernel(b, b.TempDir(), benchTelemetryArgs(b)...)
	k.chatSession(b, prov.baseURL())
	run := func() (timing, error) {
		cmd := exec.Command(foyaBin, "exec", "--addr", k.addr, "--no-project", "--approval-mode", "bypass", "go")
		cmd.Env = append(append(os.Environ(), "XDG_DATA_HOME="+b.TempDir()), tokenEnv(cmd.Args[1:], nil)...)
		out, _ := cmd.StdoutPipe()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		if err := cmd.Start(); err != nil {
			return timing{}, err
		}
		var t timing
		var got bytes.Buffer
		buf := make([]byte, 64<<10)
		for {
			n, err := out.Read(buf)
			if n > 0 && got.Len() == 0 {
				t.first = time.Since(start)
			}
			got.Write(buf[:n])
			if err != nil {
				break
			}
		}
		if err := cmd.Wait(); err != nil {
			return t, fmt.Errorf("%v: %s", err, stderr.String())
		}
		t.whole = time.Since(start)
		if strings.TrimSpace(got.String()) != strings.TrimSpace(want) {
			return t, fmt.Errorf("stdout differs (%d bytes)", got.Len())
		}
		return t, nil
	}
	if _, err := run(); err != nil {
		b.Fatal(err)
	}
	var ts []timing
	b.ResetTimer()
	for range b.N {
		t, err := run()
		if err != nil {
			b.Fatal(err)
		}
		ts = append(ts, t)
	}
	b.StopTimer()
	w := median(mapTimings(ts, func(t timing) time.Duration { return t.whole }))
	f := median(mapTimings(ts, func(t timing) time.Duration { return t.first }))
	b.ReportMetric(ms(w), "exec-ms")
	b.ReportMetric(ms(f), "exec-first-ms")
	b.Logf("foya exec, 2,000-chunk reply, medians of %d: whole process %.1f ms, first text on stdout %.1f ms", b.N, ms(w), ms(f))
}

// BenchmarkDeltaPathAfterIdleStop measures what the plugins' idle stop
// costs the next turn: the time from sendMessage to the first text at a
// graphql-ws subscriber when the built-in plugins were stopped for
// idleness (the turn starts them again), against the same turn with the
// plugins running. Replies are 20 chunks.
func BenchmarkDeltaPathAfterIdleStop(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const chunks = 20
	prov := newBenchProvider(b, chunks, 0, false)
	want := strings.Repeat("tok ", chunks)
	k := startKernel(b, b.TempDir(), "--plugin-idle-stop", "1s")
	sid := k.chatSession(b, prov.baseURL())
	ws, err := dialSub(ctx, k.addr, benchSubscription, map[string]any{"s": sid})
	if err != nil {
		b.Fatal(err)
	}
	defer ws.close()
	if _, err := viaKernel(ctx, k, b, sid, ws, want); err != nil {
		b.Fatal(err)
	}
	var cold, warm []timing
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for len(childPIDs(k.cmd.Process.Pid)) > 0 {
			time.Sleep(20 * time.Millisecond)
		}
		b.StartTimer()
		c, err := viaKernel(ctx, k, b, sid, ws, want)
		if err != nil {
			b.Fatal(err)
		}
		cold = append(cold, c)
		w, err := viaKernel(ctx, k, b, sid, ws, want)
		if err != nil {
			b.Fatal(err)
		}
		warm = append(warm, w)
	}
	b.StopTimer()
	first := func(ts []timing) time.Duration {
		return median(mapTimings(ts, func(t timing) time.Duration { return t.first }))
	}
	b.ReportMetric(ms(first(cold)), "stopped-first-ms")
	b.ReportMetric(ms(first(warm)), "running-first-ms")
	b.Logf("sendMessage → first text, medians of %d: plugins stopped for idleness %.1f ms, plugins running %.1f ms", b.N, ms(first(cold)), ms(first(warm)))
}
