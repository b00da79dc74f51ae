package host

import (
	"fmt"
	"os"
	"runtime/debug"
	"slices"

	"github.com/foya-dev/foya/internal/memtrim"
	builtintools "github.com/foya-dev/foya/plugins/builtin/tools"
	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/anthropic"
	"github.com/foya-dev/foya/providers/openai"
	"github.com/foya-dev/foya/providers/responses"
)

// Builtins are the plugins compiled into the kernel binary. The Manager runs
// each one out of process by re-executing the kernel executable as
// `<exe> plugin <name>`, so main.go must dispatch that command to RunBuiltin:
//
//	case "plugin": // foya plugin <name>
//		if err := host.RunBuiltin(args[1]); err != nil { ... exit 1 }
var Builtins = map[string]func() error{
	"openai": func() error {
		log := sdk.NewLogger() // before Serve, which redirects os.Stderr
		return sdk.Serve(sdk.ServeConfig{Provider: openai.New(openai.Config{Logger: log}), Logger: log, OnIdle: trimIdle})
	},
	"anthropic": func() error {
		log := sdk.NewLogger()
		return sdk.Serve(sdk.ServeConfig{Provider: anthropic.New(anthropic.Config{Logger: log}), Logger: log, OnIdle: trimIdle})
	},
	"openai-responses": func() error {
		log := sdk.NewLogger()
		return sdk.Serve(sdk.ServeConfig{Provider: responses.New(responses.Config{Logger: log}), Logger: log, OnIdle: trimIdle})
	},
	"tools": func() error {
		log := sdk.NewLogger()
		cfg, err := builtintools.ConfigFromEnv(log)
		if err != nil {
			return err
		}
		return sdk.Serve(sdk.ServeConfig{Tools: builtintools.New(cfg), Logger: log, OnIdle: trimIdle})
	},
}

// RunBuiltin serves the built-in plugin name until the kernel goes away. It
// is the body of `foya plugin <name>`.
func RunBuiltin(name string) error {
	run, ok := Builtins[name]
	if !ok {
		return fmt.Errorf("unknown built-in plugin %q (have %v)", name, builtinNames())
	}
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
	return run()
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

func builtinNames() []string {
	names := make([]string, 0, len(Builtins))
	for n := range Builtins {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
