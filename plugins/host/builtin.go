package host

import (
	"os"
	"runtime/debug"

	"github.com/foya-dev/foya/internal/memtrim"
)

// ServeBuiltin is the body of a built-in plugin's process: the kernel
// binary, re-executed by the Manager as `<Config.Executable> plugin <name>`
// for each name of Config.Builtins, looks name up in its registry of
// built-in plugins (package daemon) and calls ServeBuiltin with it. serve
// serves the plugin (sdk.Serve) until the kernel goes away, with onIdle as
// its sdk.ServeConfig.OnIdle: it hands an idle plugin's memory back.
func ServeBuiltin(serve func(onIdle func()) error) error {
	tuneBuiltinGC()
	if os.Getenv(restartEnv) != "" {
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

// Garbage collector settings of built-in plugin processes, unless GOGC or
// GOMEMLIMIT say otherwise. A plugin's live heap is small (request buffers
// and a few decoded chunks), so the default GOGC=100 mostly buys idle
// garbage: collect at half that growth, and harder once the heap nears
// builtinMemoryLimit (a soft limit: it is never an out-of-memory error).
const (
	builtinGCPercent   = 50
	builtinMemoryLimit = 24 << 20
)

func tuneBuiltinGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(builtinGCPercent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(builtinMemoryLimit)
	}
}

// restartEnv is set in the environment of a plugin process that replaces
// an earlier one (after an idle stop, a park or a crash).
const restartEnv = "FOYA_PLUGIN_RESTART"

// trimIdle hands an idle built-in plugin's memory back to the operating
// system: free heap pages, and its mappings of executable pages it touched
// only while starting (see internal/memtrim). Set FOYA_PLUGIN_NO_TRIM=1 to
// keep them (for measuring).
func trimIdle() {
	if os.Getenv("FOYA_PLUGIN_NO_TRIM") != "" {
		return
	}
	_, _ = memtrim.Trim()
}
