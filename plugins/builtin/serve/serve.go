// Package serve is the body of a built-in plugin's process, whichever
// executable runs it: the kernel binary re-executed as `foya plugin NAME`
// (daemon.RunPlugin) or the plugin's own small executable beside it
// (cmd/foya-plugin-NAME, which maps only the plugin's code).
package serve

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/foya-dev/foya/internal/memtrim"
	"github.com/foya-dev/foya/plugins/internal/pluginenv"
)

// Func serves one plugin (sdk.Serve) until the kernel goes away, with
// onIdle as its sdk.ServeConfig.OnIdle.
type Func func(onIdle func()) error

// Run serves the built-in plugin serve: it tunes the garbage collector for
// a small process and hands an idle plugin's memory back.
func Run(serve Func) error {
	tuneGC()
	startProfiling()
	if os.Getenv(pluginenv.Restart) != "" {
		// Package initialisation touched code and data all over the binary
		// that serving never runs again. A plugin started again for a call
		// (after an idle stop) may not be idle for long: drop those pages
		// now rather than at its first idle moment. The first start is
		// left alone: it is trimmed 5 s later, before any turn as a rule,
		// and trimming before serving cost its first calls a few tenths of
		// a millisecond (pages faulted back in).
		trimIdle()
	}
	return serve(trimIdle)
}

// Main is the main function of a built-in plugin's own executable: it
// serves the plugin and exits non-zero, with the error on stderr, when
// serving fails. The plugin host starts it; run by hand, it says so.
func Main(name string, serve Func) {
	if err := Run(serve); err != nil {
		fmt.Fprintf(os.Stderr, "foya-plugin-%s: %v (this executable is started by `foya serve`, not by hand)\n", name, err)
		os.Exit(1)
	}
}

// Garbage collector settings of built-in plugin processes, unless GOGC or
// GOMEMLIMIT say otherwise. A plugin's live heap is small (request buffers
// and a few decoded chunks), so the default GOGC=100 mostly buys idle
// garbage: collect at half that growth, and harder once the heap nears
// memoryLimit (a soft limit: it is never an out-of-memory error).
const (
	gcPercent   = 50
	memoryLimit = 24 << 20
)

func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(memoryLimit)
	}
}

// trimIdle hands an idle built-in plugin's memory back to the operating
// system: free heap pages, and its mappings of executable pages it touched
// only while starting (see internal/memtrim). Set FOYA_PLUGIN_NO_TRIM=1 to
// keep them (for measuring).
func trimIdle() {
	if os.Getenv(pluginenv.NoTrim) != "" {
		return
	}
	_, _ = memtrim.Trim()
}
