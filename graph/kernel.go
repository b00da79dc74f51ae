package graph

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/session"
)

// The resolvers of the kernel itself: its plugins, its nodes and its
// event stream.

// plugins serves Query.plugins (empty without a plugin registry). Plugins
// start at their first call: a query that asks what only a running plugin
// knows (a tool plugin's sandbox) starts those not described yet.
func plugins(ctx context.Context, reg core.PluginRegistry) []core.PluginInfo {
	if reg == nil {
		return []core.PluginInfo{}
	}
	if d, ok := reg.(core.PluginDescriber); ok && asksRunningPlugin(ctx) {
		return d.DescribePlugins(ctx)
	}
	return reg.Plugins()
}

// asksRunningPlugin reports whether the selection of the plugins field
// asks for a field only a running plugin fills.
func asksRunningPlugin(ctx context.Context) bool {
	if graphql.GetFieldContext(ctx) == nil {
		return false
	}
	for _, f := range graphql.CollectFieldsCtx(ctx, []string{"PluginInfo"}) {
		if f.Name == "sandbox" || f.Name == "sandboxDetail" {
			return true
		}
	}
	return false
}

// nodes serves Query.nodes (empty without a node list).
func nodes(ctx context.Context, nl core.NodeLister) ([]core.NodeInfo, error) {
	if nl == nil {
		return []core.NodeInfo{}, nil
	}
	return nl.Nodes(ctx)
}

// subscribeKernelEvents runs kernelEvents until ctx ends; with ready, its
// first event is subscribed, queued once the subscription is in the broker
// (every change published after it reaches this subscriber).
func subscribeKernelEvents(ctx context.Context, svc *session.Service, ready bool) <-chan *core.KernelEvent {
	sub := svc.Broker().SubscribeKernel()
	go func() {
		<-ctx.Done()
		sub.Close()
	}()
	if ready {
		return forward(ctx, sub.C, core.KernelEvent{Type: core.KernelSubscribed, At: time.Now().UTC()})
	}
	return forward(ctx, sub.C)
}
