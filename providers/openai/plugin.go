package openai

import "github.com/foya-dev/foya/plugins/sdk"

// ServePlugin serves this provider as a plugin process until the kernel
// goes away (`foya plugin NAME` or the plugin's own executable), onIdle
// handing an idle process's memory back.
func ServePlugin(onIdle func()) error {
	log := sdk.NewLogger() // before Serve, which redirects os.Stderr
	return sdk.Serve(sdk.ServeConfig{Provider: New(Config{Logger: log}), Logger: log, OnIdle: onIdle})
}

// Info is what the provider serves, asked in process (the kernel registers
// its built-in plugin with it without starting the plugin).
func Info() sdk.ProviderInfo { return New(Config{}).Describe() }
