package daemon

import (
	"fmt"
	"maps"
	"slices"

	builtintools "github.com/foya-dev/foya/plugins/builtin/tools"
	"github.com/foya-dev/foya/plugins/host"
	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/anthropic"
	"github.com/foya-dev/foya/providers/openai"
	"github.com/foya-dev/foya/providers/responses"
)

// builtinPlugins are the plugins compiled into the kernel binary, by name.
// The plugin host runs each out of process (Config.Builtins of
// plugins/host) by re-executing the binary as `foya plugin NAME`, which
// calls RunPlugin. Each serves its plugin until the kernel goes away,
// onIdle handing an idle plugin's memory back.
var builtinPlugins = map[string]func(onIdle func()) error{
	"openai": func(onIdle func()) error {
		log := sdk.NewLogger() // before Serve, which redirects os.Stderr
		return sdk.Serve(sdk.ServeConfig{Provider: openai.New(openai.Config{Logger: log}), Logger: log, OnIdle: onIdle})
	},
	"anthropic": func(onIdle func()) error {
		log := sdk.NewLogger()
		return sdk.Serve(sdk.ServeConfig{Provider: anthropic.New(anthropic.Config{Logger: log}), Logger: log, OnIdle: onIdle})
	},
	"openai-responses": func(onIdle func()) error {
		log := sdk.NewLogger()
		return sdk.Serve(sdk.ServeConfig{Provider: responses.New(responses.Config{Logger: log}), Logger: log, OnIdle: onIdle})
	},
	"tools": func(onIdle func()) error {
		log := sdk.NewLogger()
		cfg, err := builtintools.ConfigFromEnv(log)
		if err != nil {
			return err
		}
		return sdk.Serve(sdk.ServeConfig{Tools: builtintools.New(cfg), Logger: log, OnIdle: onIdle})
	},
}

// BuiltinPlugins names the plugins compiled into the kernel binary, sorted.
func BuiltinPlugins() []string { return slices.Sorted(maps.Keys(builtinPlugins)) }

// hostBuiltins are the built-in plugins as the plugin host runs them: the
// tool plugin gets its configuration in its environment and, unless it runs
// unconfined, starts with the data directory and the hidden paths masked
// (its scratch directory bound back).
func hostBuiltins(tools builtintools.PluginConfig) ([]host.Builtin, error) {
	var out []host.Builtin
	for _, name := range BuiltinPlugins() {
		b := host.Builtin{Name: name}
		if name == "tools" {
			env, err := tools.Env()
			if err != nil {
				return nil, err
			}
			b.Env = []string{env}
			if !tools.NoSandbox {
				b.Mask = &host.Mask{Hidden: append([]string{tools.DataDir}, tools.Hidden...), Expose: []string{tools.ScratchDir}}
			}
		}
		out = append(out, b)
	}
	return out, nil
}

// RunPlugin is `foya plugin NAME`: the kernel binary, re-executed by the
// plugin host, serves the built-in plugin NAME until the kernel goes away.
func RunPlugin(name string) error {
	serve, ok := builtinPlugins[name]
	if !ok {
		return fmt.Errorf("unknown built-in plugin %q (have %v)", name, BuiltinPlugins())
	}
	return host.ServeBuiltin(serve)
}
