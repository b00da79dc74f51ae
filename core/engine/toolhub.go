package engine

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/foya-dev/foya/core"
)

// ToolHub merges the tool runners of several plugins into one. A tool name
// offered by two plugins goes to the first by plugin name; the clash is
// logged, never silently merged.
type ToolHub struct {
	log     *slog.Logger
	names   []string
	runners map[string]core.ToolRunner

	mu     sync.Mutex
	owner  map[string]core.ToolRunner
	warned map[string]bool // clashes already logged
}

// NewToolHub builds a hub over runners keyed by plugin name.
func NewToolHub(runners map[string]core.ToolRunner, log *slog.Logger) *ToolHub {
	if log == nil {
		log = slog.Default()
	}
	names := make([]string, 0, len(runners))
	for n := range runners {
		names = append(names, n)
	}
	slices.Sort(names)
	return &ToolHub{log: log, names: names, runners: runners, owner: map[string]core.ToolRunner{}, warned: map[string]bool{}}
}

// Tools lists every plugin's tools; kernel tool names are reserved.
func (h *ToolHub) Tools(ctx context.Context) ([]core.ToolInfo, error) {
	var out []core.ToolInfo
	owner := map[string]core.ToolRunner{}
	from := map[string]string{}
	for _, n := range h.names {
		infos, err := h.runners[n].Tools(ctx)
		if err != nil {
			h.log.Warn("list tools of plugin", "plugin", n, "err", err)
			continue
		}
		for _, t := range infos {
			if _, reserved := kernelToolInfo(t.Name); reserved {
				h.warnOnce(n, t.Name, "tool name reserved by the kernel; refused", "")
				continue
			}
			if prev, dup := from[t.Name]; dup {
				h.warnOnce(n, t.Name, "tool name offered by two plugins; refused", prev)
				continue
			}
			from[t.Name] = n
			owner[t.Name] = h.runners[n]
			out = append(out, t)
		}
	}
	h.mu.Lock()
	h.owner = owner
	h.mu.Unlock()
	return out, nil
}

// Call routes a call to the plugin that offers the tool.
func (h *ToolHub) Call(ctx context.Context, req core.ToolCallRequest) (core.ToolResult, error) {
	h.mu.Lock()
	r, ok := h.owner[req.Name]
	h.mu.Unlock()
	if !ok {
		if _, err := h.Tools(ctx); err != nil {
			return core.ToolResult{}, err
		}
		h.mu.Lock()
		r, ok = h.owner[req.Name]
		h.mu.Unlock()
		if !ok {
			return core.ToolResult{}, core.Errorf(core.CodeNotFound, "no plugin offers tool %q", req.Name)
		}
	}
	return r.Call(ctx, req)
}

// warnOnce logs a refused tool once per plugin and name.
func (h *ToolHub) warnOnce(plugin, tool, msg, keptFrom string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.warned[plugin+"/"+tool] {
		return
	}
	h.warned[plugin+"/"+tool] = true
	h.log.Warn(msg, "plugin", plugin, "tool", tool, "kept_from", keptFrom)
}
