package graph

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/mcp"
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

// segments is the display order of an assistant message (MSG-11): the order
// recorded while it streamed, restricted to the tool calls the message kept.
// A message recorded without segments (or whose segments do not cover its
// text) gets the derived order: reasoning, then text, then its tool calls.
func segments(m *core.Message) []model.Segment {
	if m.Role != core.RoleAssistant {
		return []model.Segment{}
	}
	if out, ok := recordedSegments(m); ok {
		return out
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

func recordedSegments(m *core.Message) ([]model.Segment, bool) {
	if len(m.Segments) == 0 {
		return nil, false
	}
	kept := map[string]bool{}
	for _, c := range m.ToolCalls {
		kept[c.ID] = true
	}
	out := []model.Segment{}
	covered := map[string]int{}
	for _, sg := range m.Segments {
		var src string
		switch sg.Kind {
		case core.SegmentToolCall:
			if kept[sg.ToolCallID] {
				id := sg.ToolCallID
				out = append(out, model.Segment{Kind: sg.Kind, ToolCallID: &id})
				covered[sg.Kind]++
			}
			continue
		case core.SegmentText:
			src = m.Text
		case core.SegmentReasoning:
			src = m.Reasoning
		default:
			return nil, false
		}
		if sg.Start < 0 || sg.End > len(src) || sg.Start >= sg.End {
			return nil, false
		}
		text := src[sg.Start:sg.End]
		out = append(out, model.Segment{Kind: sg.Kind, Text: &text})
		covered[sg.Kind] += sg.End - sg.Start
	}
	if covered[core.SegmentText] != len(m.Text) || covered[core.SegmentReasoning] != len(m.Reasoning) || covered[core.SegmentToolCall] != len(m.ToolCalls) {
		return nil, false
	}
	return out, true
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
func (r *Resolver) mcp() (*mcp.Service, error) {
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

// nonNil turns a nil slice into an empty one for a non-null list field.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
