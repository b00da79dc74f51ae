package tools

import (
	"log/slog"

	"github.com/foya-dev/foya/plugins/sdk"
)

// ServePlugin serves the built-in tools as a plugin process until the
// kernel goes away (`foya plugin tools` or foya-plugin-tools), configured
// from PluginConfigEnv; onIdle hands an idle process's memory back.
func ServePlugin(onIdle func()) error {
	log := sdk.NewLogger() // before Serve, which redirects os.Stderr
	cfg, err := ConfigFromEnv(log)
	if err != nil {
		return err
	}
	return sdk.Serve(sdk.ServeConfig{Tools: New(cfg), Logger: log, OnIdle: onIdle})
}

// Info is the tool set pc configures, without the sandbox fields (only the
// running plugin probes those): the kernel registers the plugin with it
// without starting it.
func Info(pc PluginConfig) sdk.ToolSetInfo {
	return New(pc.Config(slog.New(slog.DiscardHandler))).Listed()
}
