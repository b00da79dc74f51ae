package host

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-plugin"

	"github.com/foya-dev/foya/core"
	foyav1 "github.com/foya-dev/foya/plugins/proto/foya/v1"
	"github.com/foya-dev/foya/plugins/sdk"
)

// fixedSource is a clientSource over one connection that is never restarted.
type fixedSource struct{ c *clients }

func (s fixedSource) acquire(context.Context) (*clients, func(), error) { return s.c, func() {}, nil }
func (fixedSource) broken(*clients, error)                              {}
func (fixedSource) stopped() bool                                       { return false }
func (fixedSource) warm()                                               {}

// Adapt wraps an already connected plugin client (e.g. from sdktest.Conn)
// into the core adapters the Manager would hand out; provider and tools say
// which services to dispense. The connection is never restarted.
func Adapt(conn plugin.ClientProtocol, provider, tools bool) (core.Provider, core.ToolRunner, error) {
	src := fixedSource{c: &clients{protocol: sdk.ProtocolVersion}} // same binary, same SDK
	var p core.Provider
	var r core.ToolRunner
	if provider {
		raw, err := conn.Dispense(sdk.ProviderPluginName)
		if err != nil {
			return nil, nil, fmt.Errorf("dispense provider: %w", err)
		}
		src.c.provider = raw.(foyav1.ProviderClient)
		info, err := src.c.provider.Describe(context.Background(), &foyav1.DescribeRequest{})
		if err != nil {
			return nil, nil, fmt.Errorf("describe provider: %w", err)
		}
		p = newProviderAdapter(info.GetKind(), src, info, src.c.protocol)
	}
	if tools {
		raw, err := conn.Dispense(sdk.ToolsPluginName)
		if err != nil {
			return nil, nil, fmt.Errorf("dispense tools: %w", err)
		}
		src.c.tools = raw.(foyav1.ToolsClient)
		r = &toolRunner{plugin: "in-process", src: src}
	}
	return p, r, nil
}
