package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/internal/httpwire"
)

// Native compaction (server-side compaction, beta compact-2026-01-12): the
// kernel's checkpoint is made by the Messages API itself, and the
// compaction block it returns stands for the history in later requests on
// the same route.
const (
	// CompactBeta is the anthropic-beta value of requests that ask for a
	// compaction or carry a compaction block back.
	CompactBeta = "compact-2026-01-12"
	// CompactEdit is the context_management edit that compacts.
	CompactEdit = "compact_20260112"
	// OptionNativeCompaction: "off" always uses the kernel's portable
	// checkpoint; "on" asks every model for native compaction; unset, the
	// models the API documents it for ask (Claude Opus and Sonnet 4.6 and
	// later, Mythos, Fable).
	OptionNativeCompaction = "native_compaction"
	// CompactTriggerFloor is the smallest trigger the API accepts: a
	// history under it is never compacted natively.
	CompactTriggerFloor = 50000
	// compactMinEstimate is the estimated size (bytes/4) a history needs
	// before native compaction is asked; smaller ones get the portable
	// checkpoint rather than a request the API would answer without
	// compacting.
	compactMinEstimate = 55000
)

type contextManagement struct {
	Edits []compactEditConfig `json:"edits"`
}

type compactEditConfig struct {
	Type    string `json:"type"`
	Trigger struct {
		Type  string `json:"type"`
		Value int64  `json:"value"`
	} `json:"trigger"`
	PauseAfterCompaction bool `json:"pause_after_compaction"`
}

// compactionRequestNote ends a history whose last turn is the model's, so
// that the request ends with a user turn (newer models take no prefill);
// the compaction covers it with the rest.
const compactionRequestNote = "[context checkpoint: the conversation so far is compacted here]"

// compactionBlock is a compaction content block as it goes back.
func compactionBlock(summary string) json.RawMessage {
	return httpwire.Marshal(struct {
		Type    string `json:"type"`
		Content string `json:"content"`
	}{"compaction", summary})
}

// nativeCompaction reports whether model is one the API documents
// server-side compaction for.
func nativeCompaction(model string) bool {
	m := strings.ToLower(model)
	if strings.Contains(m, "mythos") || strings.Contains(m, "fable") {
		return true
	}
	family, v, ok := familyVersionOf(m)
	return ok && family != "haiku" && v >= 406
}

// CompactContext compacts the request's history with the API's own
// compaction: one non-streaming Messages request with the compact edit
// (trigger at the API's floor, paused after the compaction), whose
// compaction block is the checkpoint's state and its summary the
// checkpoint's text. A model without native compaction, the option
// native_compaction=off, a history estimated under the trigger floor, a
// request the API refuses (400) or an answer without a compaction block
// answer "unavailable": the kernel then makes its portable checkpoint.
func (p *Provider) CompactContext(ctx context.Context, ep sdk.Endpoint, req sdk.Request) (sdk.Completion, error) {
	switch opt := strings.ToLower(strings.TrimSpace(ep.Options[OptionNativeCompaction])); {
	case opt == "off":
		return sdk.Completion{}, sdk.Errorf(sdk.CategoryUnavailable, "native compaction is off for this connection")
	case opt != "on" && !nativeCompaction(req.Model):
		return sdk.Completion{}, sdk.Errorf(sdk.CategoryUnavailable, "model %q has no server-side compaction (set the connection option native_compaction=on to ask anyway)", req.Model)
	}
	req.ReasoningEffort = ""
	body, err := buildRequest(ep, req, false)
	if err != nil {
		return sdk.Completion{}, err
	}
	if last := body.Messages[len(body.Messages)-1]; last.Role == "assistant" {
		body.appendBlocks("user", textBlock{Type: "text", Text: compactionRequestNote})
	}
	declareUsedTools(body)
	if hasThinking(body) && generationOf(req.Model).adaptive {
		// Signed thinking in the history goes back in a request that
		// thinks, as in the turns it came from; the compaction pauses
		// before any answer, so the effort is the least.
		body.Thinking = &thinkingConfig{Type: "adaptive", Display: "summarized"}
		body.OutputConfig = &outputConfig{Effort: "low"}
	}
	msgs, _ := json.Marshal(body.Messages)
	if est := int64(len(msgs)) / 4; est < compactMinEstimate {
		return sdk.Completion{}, sdk.Errorf(sdk.CategoryUnavailable, "the history (about %d tokens) is under the API's %d-token compaction trigger", est, CompactTriggerFloor)
	}
	edit := compactEditConfig{Type: CompactEdit, PauseAfterCompaction: true}
	edit.Trigger.Type, edit.Trigger.Value = "input_tokens", CompactTriggerFloor
	body.ContextManagement = &contextManagement{Edits: []compactEditConfig{edit}}
	resp, err := p.doBeta(ctx, ep, http.MethodPost, "/v1/messages", body, CompactBeta)
	if err != nil {
		var e *sdk.Error
		if errors.As(err, &e) && e.Category == sdk.CategoryBadRequest {
			// The model, a gateway or the account does not take the
			// compaction beta: the portable checkpoint instead.
			e.Category = sdk.CategoryUnavailable
			e.Message = "the API refused native compaction: " + e.Message
		}
		return sdk.Completion{}, err
	}
	defer resp.Body.Close()
	return parseCompaction(resp.Body)
}

// parseCompaction reads the answer of a compaction request: the last
// compaction block with a summary becomes the checkpoint.
func parseCompaction(body io.Reader) (sdk.Completion, error) {
	var r struct {
		Model      string            `json:"model"`
		StopReason string            `json:"stop_reason"`
		Content    []json.RawMessage `json:"content"`
		Usage      wireUsage         `json:"usage"`
	}
	if err := json.NewDecoder(io.LimitReader(body, 32<<20)).Decode(&r); err != nil {
		return sdk.Completion{}, &sdk.Error{Category: sdk.CategoryServer, Message: "decode compaction: " + err.Error()}
	}
	var summary *string
	for _, raw := range r.Content {
		var b struct {
			Type    string  `json:"type"`
			Content *string `json:"content"`
		}
		if json.Unmarshal(raw, &b) == nil && b.Type == "compaction" && b.Content != nil && strings.TrimSpace(*b.Content) != "" {
			summary = b.Content
		}
	}
	if summary == nil {
		return sdk.Completion{}, sdk.Errorf(sdk.CategoryUnavailable, "the API made no compaction (stop reason %q)", r.StopReason)
	}
	if len(*summary) > maxStateBytes {
		return sdk.Completion{}, sdk.Errorf(sdk.CategoryBadResponse, "the compaction summary is larger than %d bytes", maxStateBytes)
	}
	u := r.Usage.sdk(r.Model)
	return sdk.Completion{
		Text:         *summary,
		FinishReason: "stop",
		Usage:        &u,
		State:        httpwire.Marshal(nativeState{Blocks: []json.RawMessage{compactionBlock(*summary)}}),
	}, nil
}

// declareUsedTools declares, with an open schema, each tool the history
// calls that the request does not declare: the API refuses tool_use and
// tool_result blocks of undeclared tools, and the kernel's compaction
// request carries the history without the session's tool list.
func declareUsedTools(body *messagesRequest) {
	declared := map[string]bool{}
	for _, t := range body.Tools {
		declared[t.Name] = true
	}
	for _, m := range body.Messages {
		for _, b := range m.Content {
			if tu, ok := b.(toolUseBlock); ok && !declared[tu.Name] {
				declared[tu.Name] = true
				body.Tools = append(body.Tools, wireTool{Name: tu.Name, InputSchema: json.RawMessage(`{"type":"object"}`)})
			}
		}
	}
}

// hasThinking reports whether the request sends thinking blocks back
// (the native state blocks that are not compaction blocks).
func hasThinking(body *messagesRequest) bool {
	for _, m := range body.Messages {
		for _, b := range m.Content {
			if raw, ok := b.(json.RawMessage); ok && !isCompaction(raw) {
				return true
			}
		}
	}
	return false
}
