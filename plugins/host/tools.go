package host

import (
	"context"
	"slices"
	"sync"

	"github.com/foya-dev/foya/core"
	foyav1 "github.com/foya-dev/foya/plugins/proto/foya/v1"
)

// toolRunner implements core.ToolRunner over a tool plugin. Cancelling ctx
// cancels the call inside the plugin.
type toolRunner struct {
	plugin string
	src    clientSource

	// The tool list is part of the plugin's self-description, fixed for
	// the life of its process: it is asked once per process, not once per
	// model request (that call sat before every provider request). While
	// the plugin is stopped for idleness, the list of its last process
	// stands: listing tools does not start it, calling one does.
	mu       sync.Mutex
	listedBy *clients
	listed   []core.ToolInfo
	// known: listed holds a list (of a process, or of the plugin's
	// Description before it ever ran).
	known bool
	// described, when set, hears each description of a running process
	// (ondemand.go).
	described func(*foyav1.ToolSetInfo)
}

var _ core.ToolRunner = (*toolRunner)(nil)

func (r *toolRunner) call(ctx context.Context, fn func(*clients) error) error {
	return callPlugin(ctx, r.src, r.plugin, fn)
}

func (r *toolRunner) Tools(ctx context.Context) ([]core.ToolInfo, error) {
	if out, ok := r.listedWhileStopped(); ok {
		return out, nil
	}
	var out []core.ToolInfo
	err := r.call(ctx, func(c *clients) error {
		r.mu.Lock()
		if r.listedBy == c {
			out = slices.Clone(r.listed)
			r.mu.Unlock()
			return nil
		}
		r.mu.Unlock()
		info, err := c.tools.Describe(ctx, &foyav1.DescribeRequest{})
		if err != nil {
			return err
		}
		for _, t := range info.GetTools() {
			out = append(out, toolInfoFromProto(t))
		}
		r.record(c, info)
		return nil
	})
	return out, err
}

func (r *toolRunner) Call(ctx context.Context, req core.ToolCallRequest) (core.ToolResult, error) {
	var out core.ToolResult
	err := r.call(ctx, func(c *clients) error {
		res, err := c.tools.Call(ctx, &foyav1.ToolCallRequest{
			SessionId:  req.SessionID,
			WorkDir:    req.WorkDir,
			ToolCallId: req.ToolCallID,
			Name:       req.Name,
			InputJson:  string(req.Input),
			ScopeDir:   req.ScopeDir,
			TimeoutMs:  req.Timeout.Milliseconds(),
		})
		if err == nil {
			out = toolResultFromProto(res)
		}
		return err
	})
	return out, err
}
