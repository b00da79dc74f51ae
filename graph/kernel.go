package graph

import (
	"context"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/session"
)

// The resolvers of the kernel itself: its plugins, its nodes and its
// event stream.

// plugins serves Query.plugins (empty without a plugin registry).
func plugins(reg core.PluginRegistry) []core.PluginInfo {
	if reg == nil {
		return []core.PluginInfo{}
	}
	return reg.Plugins()
}

// nodes serves Query.nodes (empty without a node list).
func nodes(ctx context.Context, nl core.NodeLister) ([]core.NodeInfo, error) {
	if nl == nil {
		return []core.NodeInfo{}, nil
	}
	return nl.Nodes(ctx)
}

// subscribeKernelEvents runs kernelEvents until ctx ends.
func subscribeKernelEvents(ctx context.Context, svc *session.Service) <-chan *core.KernelEvent {
	sub := svc.Broker().SubscribeKernel()
	go func() {
		<-ctx.Done()
		sub.Close()
	}()
	return forward(ctx, sub.C)
}
