package daemon

import (
	"fmt"
	"maps"
	"slices"

	"github.com/foya-dev/foya/plugins/builtin/serve"
	builtintools "github.com/foya-dev/foya/plugins/builtin/tools"
	"github.com/foya-dev/foya/plugins/host"
	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/anthropic"
	"github.com/foya-dev/foya/providers/openai"
	"github.com/foya-dev/foya/providers/responses"
)

// builtinPlugin is a plugin compiled into the kernel binary.
type builtinPlugin struct {
	// serve serves it in a plugin process (`foya plugin NAME`, or its own
	// executable cmd/foya-plugin-NAME, which calls the same function).
	serve serve.Func
	// provider is what its provider serves, asked in process (nil for the
	// tool plugin): the kernel registers it without starting it.
	provider func() sdk.ProviderInfo
}

// builtinPlugins are the plugins compiled into the kernel binary, by name.
// The plugin host runs each out of process (Config.Builtins of
// plugins/host), at its first call: its own small executable when one of
// the same build lies beside the kernel's (builtinExec), else the kernel
// binary re-executed as `foya plugin NAME`, which calls RunPlugin.
var builtinPlugins = map[string]builtinPlugin{
	"openai":           {serve: openai.ServePlugin, provider: openai.Info},
	"anthropic":        {serve: anthropic.ServePlugin, provider: anthropic.Info},
	"openai-responses": {serve: responses.ServePlugin, provider: responses.Info},
	"tools":            {serve: builtintools.ServePlugin},
}

// BuiltinPlugins names the plugins compiled into the kernel binary, sorted.
func BuiltinPlugins() []string { return slices.Sorted(maps.Keys(builtinPlugins)) }

// hostBuiltins are the built-in plugins as the plugin host runs them:
// registered from what they serve (asked in process), so none starts
// before its first call; run from their own executables beside exe when
// those are of the same build. The tool plugin gets its configuration in
// its environment and, unless it runs unconfined, starts with the data
// directory and the hidden paths masked (its scratch directory bound back).
func hostBuiltins(exe string, tools builtintools.PluginConfig) ([]host.Builtin, error) {
	var out []host.Builtin
	for _, name := range BuiltinPlugins() {
		b := host.Builtin{Name: name, Exec: builtinExec(exe, name)}
		if p := builtinPlugins[name].provider; p != nil {
			info := p()
			b.Describe = &host.Description{Provider: &info}
		}
		if name == "tools" {
			env, err := tools.Env()
			if err != nil {
				return nil, err
			}
			b.Env = []string{env}
			if !tools.NoSandbox {
				b.Mask = &host.Mask{Hidden: append([]string{tools.DataDir}, tools.Hidden...), Expose: []string{tools.ScratchDir}}
			}
			info := builtintools.Info(tools)
			b.Describe = &host.Description{Tools: &info}
		}
		out = append(out, b)
	}
	return out, nil
}

// RunPlugin is `foya plugin NAME`: the kernel binary, re-executed by the
// plugin host, serves the built-in plugin NAME until the kernel goes away.
func RunPlugin(name string) error {
	p, ok := builtinPlugins[name]
	if !ok {
		return fmt.Errorf("unknown built-in plugin %q (have %v)", name, BuiltinPlugins())
	}
	return serve.Run(p.serve)
}
