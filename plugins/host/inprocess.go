package host

import (
	"context"
	"testing"

	"github.com/foya-dev/foya/core"
	foyav1 "github.com/foya-dev/foya/plugins/proto/foya/v1"
	"github.com/foya-dev/foya/plugins/sdk"
)

// fixedSource is a clientSource over one connection that is never restarted.
type fixedSource struct{ c *clients }

func (s fixedSource) clients(context.Context) (*clients, error) { return s.c, nil }
func (fixedSource) broken(*clients, error)                      {}

// NewInProcess serves cfg in-process over a real gRPC connection and returns
// the core adapters the Manager would hand out (nil for a kind cfg does not
// serve). Tests in other packages use it to drive a plugin without a process.
func NewInProcess(t testing.TB, cfg sdk.ServeConfig) (core.Provider, core.ToolRunner) {
	t.Helper()
	conn := sdk.TestConn(t, cfg)
	src := fixedSource{c: &clients{}}
	var p core.Provider
	var r core.ToolRunner
	if cfg.Provider != nil {
		raw, err := conn.Dispense(sdk.ProviderPluginName)
		if err != nil {
			t.Fatalf("dispense provider: %v", err)
		}
		src.c.provider = raw.(foyav1.ProviderClient)
		info, err := src.c.provider.Describe(context.Background(), &foyav1.DescribeRequest{})
		if err != nil {
			t.Fatalf("describe provider: %v", err)
		}
		p = newProviderAdapter(info.GetKind(), src, info)
	}
	if cfg.Tools != nil {
		raw, err := conn.Dispense(sdk.ToolsPluginName)
		if err != nil {
			t.Fatalf("dispense tools: %v", err)
		}
		src.c.tools = raw.(foyav1.ToolsClient)
		r = &toolRunner{plugin: "in-process", src: src}
	}
	return p, r
}
