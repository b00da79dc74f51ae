// Command foya-plugin-tools is the built-in tool plugin (read, write,
// edit, bash, glob, grep) in an executable of its own: the kernel (`foya
// serve`) starts it instead of re-executing itself as `foya plugin tools`
// when it lies beside foya and comes from the same build. It maps only the
// tools' code, not the kernel's (docs/performance.md). It is also the
// sandbox helper of its bash calls (`foya-plugin-tools __sandbox POLICY`).
package main

import (
	"github.com/foya-dev/foya/plugins/builtin/serve"
	"github.com/foya-dev/foya/plugins/builtin/tools"
	"github.com/foya-dev/foya/plugins/sandbox"
)

func main() {
	sandbox.MaybeHelper() // the confined-command helper of bash calls
	serve.Main("tools", tools.ServePlugin)
}
