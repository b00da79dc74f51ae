package engine

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
	"github.com/foya-dev/foya/core/session"
)

// MaxSamplingTokens bounds the answer of one sampling request, whatever
// the server asks (never above the model's own output limit either).
const MaxSamplingTokens = 8192

// sessionSampler answers the sampling requests (sampling/createMessage)
// an MCP server makes during a tool call of a session: with the session's
// own model, after the person allowed it (unless the session runs without
// approvals), its tokens counted in the session's usage.
type sessionSampler struct {
	svc    *session.Service
	models *models
	rec    usageRecorder
	log    *slog.Logger
	asker  sessionAsker
}

// Sample asks the person (the question names the server and shows what it
// sends), then completes with the session's model.
func (s sessionSampler) Sample(ctx context.Context, req core.Sampling) (core.SamplingResult, error) {
	sess, err := s.svc.Session(ctx, s.asker.sessionID)
	if err != nil {
		return core.SamplingResult{}, err
	}
	if sess.ApprovalMode != core.ApprovalBypass {
		res, err := s.asker.Elicit(ctx, core.Elicitation{Server: req.Server, Mode: core.ElicitForm, Message: samplingQuestion(req)})
		if err != nil {
			return core.SamplingResult{}, err
		}
		if res.Action != core.ElicitAccept {
			return core.SamplingResult{}, core.Errorf(core.CodeConflict, "the user did not allow the sampling request (%s)", res.Action)
		}
	}
	b, err := s.models.resolve(ctx, sess)
	if err != nil {
		return core.SamplingResult{}, err
	}
	limit := int64(MaxSamplingTokens)
	if req.MaxTokens > 0 {
		limit = min(req.MaxTokens, limit)
	}
	if c := b.model.Capabilities.MaxOutputTokens; c != nil && *c > 0 {
		limit = min(limit, *c)
	}
	msgs := make([]core.ProviderMessage, 0, len(req.Messages)+1)
	if strings.TrimSpace(req.SystemPrompt) != "" {
		msgs = append(msgs, core.ProviderMessage{Role: core.RoleSystem, Content: []core.ContentPart{{Type: "text", Text: req.SystemPrompt}}})
	}
	msgs = append(msgs, req.Messages...)
	preq := core.ProviderRequest{Model: b.model.ID, MaxOutputTokens: limit, Messages: msgs}
	c, can, err := b.completeDetailed(ctx, preq)
	if !can {
		return core.SamplingResult{}, core.Errorf(core.CodeUnavailable, "provider %s cannot complete, so MCP server %q cannot sample with this session's model", b.conn.ProviderKind, req.Server)
	}
	if err != nil {
		return core.SamplingResult{}, catalog.ProviderFailure("sample for MCP server "+req.Server, err, b.endpoint.APIKey)
	}
	s.rec.recordUsage(ctx, s.asker.sessionID, b, preq, streamResult{text: c.Text, usage: c.Usage}, "sampling")
	s.log.Info("mcp sampling answered", "session_id", s.asker.sessionID, "server", req.Server, "model", b.model.ID)
	return core.SamplingResult{Text: c.Text, Model: b.model.ID, FinishReason: c.FinishReason}, nil
}

// samplingQuestion is what the person is asked: the server, what it sends
// (the system prompt and the last message, clipped) and the size.
func samplingQuestion(req core.Sampling) string {
	var b strings.Builder
	fmt.Fprintf(&b, "allow it to use this session's model (%d message(s), at most %d tokens back)?", len(req.Messages), req.MaxTokens)
	if p := strings.TrimSpace(req.SystemPrompt); p != "" {
		fmt.Fprintf(&b, "\nSystem prompt: %s", core.Clip(p, 500))
	}
	if n := len(req.Messages); n > 0 {
		last := req.Messages[n-1]
		var text strings.Builder
		for _, p := range last.Content {
			if p.Type == "text" {
				text.WriteString(p.Text)
			} else {
				fmt.Fprintf(&text, "[%s]", p.Type)
			}
		}
		fmt.Fprintf(&b, "\nLast message (%s): %s", last.Role, core.Clip(text.String(), 1000))
	}
	return "The MCP server asks to sample: " + b.String()
}
