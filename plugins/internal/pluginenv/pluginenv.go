// Package pluginenv names the environment variables the plugin host sets
// for the built-in plugin processes it starts, shared by the host
// (plugins/host) and the built-ins' entry points (plugins/builtin/serve).
package pluginenv

const (
	// Restart is set ("1") in the environment of a built-in plugin process
	// that replaces an earlier one (after an idle stop, a park or a crash).
	Restart = "FOYA_PLUGIN_RESTART"
	// NoTrim ("1") keeps an idle built-in plugin's memory mapped (for
	// measuring); the host passes it through from its own environment.
	NoTrim = "FOYA_PLUGIN_NO_TRIM"
	// Profile (a loopback address) makes a built-in plugin serve
	// net/http/pprof there and log its memory figures; the host passes it
	// through from its own environment (plugins/builtin/serve).
	Profile = "FOYA_PLUGIN_PPROF"
)
