package graph

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/graph/model"
)

func connectionInput(in model.ConnectionInput) core.ConnectionInput {
	out := core.ConnectionInput{
		Name: deref(in.Name), Type: deref(in.Type), ProviderKind: deref(in.ProviderKind),
		BaseURL: deref(in.BaseURL), AuthKind: deref(in.AuthKind), APIKey: in.APIKey,
		VideoProtocol: deref(in.VideoProtocol),
	}
	if in.Order != nil {
		o := int(*in.Order)
		out.Order = &o
	}
	if in.Options != nil {
		out.Options = make(map[string]string, len(in.Options))
		for _, o := range in.Options {
			out.Options[o.Key] = o.Value
		}
	}
	if in.Models != nil {
		out.Models = make([]core.Model, len(in.Models))
		for i, m := range in.Models {
			out.Models[i] = core.Model{ID: m.ID}
			if m.Capabilities != nil {
				out.Models[i].Capabilities = *m.Capabilities
			}
		}
	}
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// optional turns a not-found lookup into a null result.
func optional[T any](v T, err error) (*T, error) {
	if errors.Is(err, core.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// forward adapts a value channel to the pointer channel gqlgen wants; it
// closes when in closes or ctx ends.
func forward[T any](ctx context.Context, in <-chan T) <-chan *T {
	out := make(chan *T, 1)
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case v, ok := <-in:
				if !ok {
					return
				}
				select {
				case out <- &v:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}

// nonEmpty maps the zero value to null.
func nonEmpty[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

func userInput(in model.UserInput) core.UserInput {
	return core.UserInput{Text: deref(in.Text), Command: deref(in.Command), AttachmentIDs: in.AttachmentIds, BrowserElements: in.BrowserElements}
}

// segments is the display order of an assistant message (MSG-11): derived
// from the canonical fields, never stored. A model step yields reasoning,
// then text, then its tool calls.
func segments(m *core.Message) []model.Segment {
	if m.Role != core.RoleAssistant {
		return []model.Segment{}
	}
	out := []model.Segment{}
	if m.Reasoning != "" {
		out = append(out, model.Segment{Kind: "reasoning", Text: &m.Reasoning})
	}
	if m.Text != "" {
		out = append(out, model.Segment{Kind: "text", Text: &m.Text})
	}
	for i := range m.ToolCalls {
		out = append(out, model.Segment{Kind: "tool_call", ToolCallID: &m.ToolCalls[i].ID})
	}
	return out
}

func providerOptions(opts map[string]string) []model.ProviderOption {
	keys := slices.Sorted(maps.Keys(opts))
	out := make([]model.ProviderOption, len(keys))
	for i, k := range keys {
		out[i] = model.ProviderOption{Key: k, Value: opts[k]}
	}
	return out
}

func mcpServerInput(in model.McpServerInput) core.MCPServerInput {
	out := core.MCPServerInput{
		Name: in.Name, Transport: in.Transport, Command: in.Command, Args: in.Args, Env: in.Env,
		URL: in.URL, Headers: in.Headers, Enabled: in.Enabled,
	}
	if in.TimeoutSeconds != nil {
		t := int(min(max(*in.TimeoutSeconds, -1), core.MaxMCPTimeout+1))
		out.TimeoutSeconds = &t
	}
	return out
}

// mcp returns the MCP catalog, or UNAVAILABLE when the kernel runs without one.
func (r *Resolver) mcp() (*core.MCPService, error) {
	if r.MCP == nil {
		return nil, core.Errorf(core.CodeUnavailable, "this kernel has no MCP support configured")
	}
	return r.MCP, nil
}

func mcpResult(s core.MCPServer, err error) (*core.MCPServer, error) {
	if err != nil {
		return nil, err
	}
	return &s, nil
}
