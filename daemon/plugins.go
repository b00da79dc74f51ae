package daemon

import "github.com/foya-dev/foya/plugins/host"

// RunPlugin is `foya plugin NAME`: the kernel binary, re-executed by the
// plugin host, serves the built-in plugin NAME until the kernel goes away.
func RunPlugin(name string) error { return host.RunBuiltin(name) }
