//lint:file-ignore SA1019 sampling is deprecated by protocol 2026-07-28 (SEP-2577) and still served to servers of older protocol versions during the deprecation window

package mcphost

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foya-dev/foya/core"
)

// Bounds of a sampling request a server may make (samplingOf).
const (
	MaxSamplingMessages = 64
	MaxSamplingBytes    = 1 << 20 // text and images of all messages together
	// MaxSamplesPerCall bounds the sampling requests of one tool call: a
	// server that loops on the session's model is stopped there.
	MaxSamplesPerCall = 16
)

// sample handles sampling/createMessage: the session of the running call
// answers with its model, after its person allowed it (core.Sampler). A
// request nobody's call can answer is refused; so is one over the bounds.
// The call's timeout is paused meanwhile, as for a question.
func (s *server) sample(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	sreq, err := samplingOf(s.cfg.Name, req.Params)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	c, why := s.callerFor(ctx, func(c *inflight) bool { return c.sampler != nil })
	if c == nil {
		s.log.Warn("mcp sampling refused", "reason", why)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "sampling refused: " + why}
	}
	if n := c.samples.Add(1); n > MaxSamplesPerCall {
		s.log.Warn("mcp sampling refused", "reason", "too many requests in one call", "session_id", c.sessionID)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("sampling refused: at most %d sampling requests per tool call", MaxSamplesPerCall)}
	}
	sctx, done := s.waitOn(ctx, c)
	defer done()
	res, err := c.sampler.Sample(sctx, sreq)
	if err != nil {
		var ce *core.Error
		if errors.As(err, &ce) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "sampling refused: " + ce.Message}
		}
		return nil, fmt.Errorf("sample: %w", err)
	}
	stop := res.FinishReason
	switch stop {
	case "stop", "":
		stop = "endTurn"
	case "length":
		stop = "maxTokens"
	}
	return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: res.Text}, Model: res.Model, Role: "assistant", StopReason: stop}, nil
}

// samplingOf turns the request into the kernel's: user and assistant
// messages of text and images, within the bounds (at most
// MaxSamplingMessages messages, MaxSamplingBytes of text and images).
func samplingOf(server string, p *mcp.CreateMessageParams) (core.Sampling, error) {
	out := core.Sampling{Server: server, SystemPrompt: p.SystemPrompt, MaxTokens: p.MaxTokens}
	if len(p.Messages) == 0 {
		return out, errors.New("messages: none")
	}
	if len(p.Messages) > MaxSamplingMessages {
		return out, fmt.Errorf("messages: %d, over the limit of %d", len(p.Messages), MaxSamplingMessages)
	}
	size := len(p.SystemPrompt)
	for i, m := range p.Messages {
		if m == nil {
			return out, fmt.Errorf("messages[%d]: null", i)
		}
		role := core.RoleUser
		switch m.Role {
		case "user":
		case "assistant":
			role = core.RoleAssistant
		default:
			return out, fmt.Errorf("messages[%d].role: %q is neither user nor assistant", i, m.Role)
		}
		var part core.ContentPart
		switch c := m.Content.(type) {
		case *mcp.TextContent:
			part = core.ContentPart{Type: "text", Text: c.Text}
			size += len(c.Text)
		case *mcp.ImageContent:
			part = core.ContentPart{Type: "image", MediaType: c.MIMEType, Data: c.Data}
			size += len(c.Data)
		default:
			return out, fmt.Errorf("messages[%d].content: only text and images can be sampled", i)
		}
		if size > MaxSamplingBytes {
			return out, fmt.Errorf("messages: over %d bytes of text and images", MaxSamplingBytes)
		}
		out.Messages = append(out.Messages, core.ProviderMessage{Role: role, Content: []core.ContentPart{part}})
	}
	return out, nil
}
