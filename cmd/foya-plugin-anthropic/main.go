// Command foya-plugin-anthropic is the built-in `anthropic` provider plugin in an
// executable of its own: the kernel (`foya serve`) starts it instead of
// re-executing itself as `foya plugin anthropic` when it lies beside foya and
// comes from the same build. It maps only the provider's code, not the
// kernel's (docs/performance.md).
package main

import (
	"github.com/foya-dev/foya/plugins/builtin/serve"
	"github.com/foya-dev/foya/providers/anthropic"
)

func main() { serve.Main("anthropic", anthropic.ServePlugin) }
