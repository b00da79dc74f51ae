package serve

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/foya-dev/foya/internal/memtrim"
	"github.com/foya-dev/foya/plugins/internal/pluginenv"
)

// ProfileEnv, set to a loopback address (127.0.0.1:6061, or port 0 for any
// free port), makes a built-in plugin process serve its profiles there
// (/debug/pprof/heap, /debug/pprof/goroutine?debug=1: runtime/pprof's
// profiles by name; /debug/metrics: the figures below) and log its
// address and, every second while any goroutine beyond the idle ones runs,
// its memory figures (runtime/metrics: heap live and in use, stacks,
// goroutines) to stderr, which the kernel re-emits. For measuring a
// plugin's memory (docs/performance.md); the kernel passes it through from
// its own environment. Nothing listens without it.
const ProfileEnv = pluginenv.Profile

func startProfiling() {
	addr := os.Getenv(ProfileEnv)
	if addr == "" {
		return
	}
	// Sample every 4 KiB allocated rather than every 512 KiB: a plugin's
	// heap is a few MB, too few samples at the default rate (unless
	// GODEBUG sets memprofilerate).
	memtrim.SampleHeap(true)
	// go-plugin swaps os.Stderr while serving: keep the process's own.
	stderr := os.Stderr
	ln, err := serveProfiles(addr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", ProfileEnv, err)
		return
	}
	fmt.Fprintf(stderr, "%s: pid %d serves pprof on http://%s/debug/pprof/\n", ProfileEnv, os.Getpid(), ln.Addr())
	go logMemFigures(stderr)
}

// serveProfiles serves the profiles and figures on addr, a loopback
// address, until the process exits.
func serveProfiles(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("%s is not a loopback address", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	// runtime/pprof's profiles by name, as net/http/pprof serves them
	// (which would link html/template and more into every plugin).
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/{name}", func(w http.ResponseWriter, r *http.Request) {
		p := pprof.Lookup(r.PathValue("name"))
		if p == nil {
			http.Error(w, "no such profile", http.StatusNotFound)
			return
		}
		if r.FormValue("gc") != "" {
			runtime.GC()
		}
		debug, _ := strconv.Atoi(r.FormValue("debug"))
		if debug == 0 {
			w.Header().Set("Content-Type", "application/octet-stream")
		} else {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
		_ = p.WriteTo(w, debug)
	})
	mux.HandleFunc("/debug/metrics", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, memFigures())
	})
	go func() { _ = http.Serve(ln, mux) }()
	return ln, nil
}

// logMemFigures writes memFigures to stderr every second while the
// process has more goroutines than at rest.
func logMemFigures(stderr *os.File) {
	rest := runtime.NumGoroutine()
	for range time.Tick(time.Second) {
		if runtime.NumGoroutine() > rest+2 {
			fmt.Fprintf(stderr, "%s: %s\n", ProfileEnv, memFigures())
		}
	}
}

var figureNames = []string{
	"/gc/heap/live:bytes",
	"/gc/heap/goal:bytes",
	"/gc/stack/starting-size:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/os-stacks:bytes",
	"/memory/classes/metadata/other:bytes",
	"/memory/classes/metadata/mspan/inuse:bytes",
	"/memory/classes/metadata/mcache/inuse:bytes",
	"/memory/classes/profiling/buckets:bytes",
	"/memory/classes/other:bytes",
	"/memory/classes/total:bytes",
	"/gc/gogc:percent",
	"/gc/gomemlimit:bytes",
	"/gc/cycles/total:gc-cycles",
	"/sched/goroutines:goroutines",
}

// memFigures is one line of the runtime's memory figures.
func memFigures() string {
	s := make([]metrics.Sample, len(figureNames))
	for i, n := range figureNames {
		s[i].Name = n
	}
	metrics.Read(s)
	var b strings.Builder
	for _, m := range s {
		name := strings.TrimPrefix(strings.TrimPrefix(m.Name, "/memory/classes"), "/")
		if m.Value.Kind() != metrics.KindUint64 {
			continue
		}
		v := m.Value.Uint64()
		if strings.HasSuffix(name, ":bytes") && v < 1<<62 {
			fmt.Fprintf(&b, "%s=%.2fMB ", strings.TrimSuffix(name, ":bytes"), float64(v)/(1<<20))
		} else {
			fmt.Fprintf(&b, "%s=%d ", name, v)
		}
	}
	return strings.TrimSpace(b.String())
}
