package core

import "context"

// PluginInfo describes a loaded plugin for clients.
type PluginInfo struct {
	Name string
	// Kind is "provider", "tool" or "provider+tool".
	Kind string
	// ProviderKind is the provider kind a provider plugin serves.
	ProviderKind string
	Version      string
	Capabilities []string
	Tools        []string
	Builtin      bool
	Path         string
	PID          int
	Healthy      bool
	// Error says why the plugin could not be started or described.
	Error string
	// Sandbox is how a tool plugin confines the processes its tools start:
	// "landlock" or "none"; empty for plugins without tools.
	// SandboxDetail explains it for people.
	Sandbox       string
	SandboxDetail string
}

// PluginRegistry lists the plugins the kernel has loaded.
type PluginRegistry interface {
	Plugins() []PluginInfo
}

// PluginDescriber is a PluginRegistry whose plugins start on demand: what
// only a running plugin knows (a tool plugin's Sandbox) is empty until it
// first ran. DescribePlugins starts those not described yet, asks them,
// and lists every plugin.
type PluginDescriber interface {
	DescribePlugins(ctx context.Context) []PluginInfo
}
