// Package hosttest drives a plugin in-process through the host's real
// adapters, for tests in other packages.
package hosttest

import (
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/plugins/host"
	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/plugins/sdk/sdktest"
)

// NewInProcess serves cfg in-process over a real gRPC connection and returns
// the core adapters the Manager would hand out (nil for a kind cfg does not
// serve).
func NewInProcess(t testing.TB, cfg sdk.ServeConfig) (core.Provider, core.ToolRunner) {
	t.Helper()
	p, r, err := host.Adapt(sdktest.Conn(t, cfg), cfg.Provider != nil, cfg.Tools != nil)
	if err != nil {
		t.Fatal(err)
	}
	return p, r
}
