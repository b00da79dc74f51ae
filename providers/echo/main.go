// Command echo is an example third-party provider plugin written only
// against plugins/sdk: it streams back the text of the last user message.
// Build it into a plugin directory: go build -o <data-dir>/plugins/echo ./providers/echo
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/foya-dev/foya/plugins/sdk"
)

type echo struct{}

func (echo) Describe() sdk.ProviderInfo { return sdk.ProviderInfo{Kind: "echo", Version: "0.1.0"} }

func (echo) Stream(_ context.Context, _ sdk.Endpoint, req sdk.Request, out sdk.StreamSender) (string, error) {
	var last string
	for _, m := range req.Messages {
		if m.Role == sdk.RoleUser {
			last = m.Text()
		}
	}
	for _, word := range strings.SplitAfter(last, " ") {
		if err := out.Text(word); err != nil {
			return "", err
		}
	}
	n := int64(len(strings.Fields(last)))
	return "stop", out.Usage(sdk.Usage{InputTokens: n, OutputTokens: n, TotalTokens: 2 * n, Model: req.Model})
}

func main() {
	if err := sdk.ServeProvider(echo{}); err != nil {
		fmt.Fprintln(os.Stderr, "echo:", err)
		os.Exit(1)
	}
}
