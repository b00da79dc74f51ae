// Command foya-plugin-openai is the built-in `openai` provider plugin in an
// executable of its own: the kernel (`foya serve`) starts it instead of
// re-executing itself as `foya plugin openai` when it lies beside foya and
// comes from the same build. It maps only the provider's code, not the
// kernel's (docs/performance.md).
package main

import (
	"github.com/foya-dev/foya/plugins/builtin/serve"
	"github.com/foya-dev/foya/providers/openai"
)

func main() { serve.Main("openai", openai.ServePlugin) }
