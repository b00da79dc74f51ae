package sdk

import (
	"encoding/json"

	foyav1 "github.com/foya-dev/foya/plugins/proto/foya/v1"
)

// Conversions between the Go-native SDK types and the wire contract. They
// stay unexported: plugin authors never see proto types.

func endpointFromProto(e *foyav1.Endpoint) Endpoint {
	return Endpoint{
		ConnectionID: e.GetConnectionId(),
		ProviderKind: e.GetProviderKind(),
		BaseURL:      e.GetBaseUrl(),
		APIKey:       e.GetApiKey(),
		Options:      e.GetOptions(),
	}
}

func requestFromProto(r *foyav1.Request) Request {
	out := Request{
		Model:           r.GetModel(),
		ReasoningEffort: r.GetReasoningEffort(),
		MaxOutputTokens: r.GetMaxOutputTokens(),
		State:           r.GetState(),
	}
	for _, m := range r.GetMessages() {
		msg := Message{Role: m.GetRole(), Reasoning: m.GetReasoning(), ToolCallID: m.GetToolCallId(), State: m.GetState()}
		for _, p := range m.GetContent() {
			msg.Content = append(msg.Content, ContentPart{Type: p.GetType(), Text: p.GetText(), MediaType: p.GetMediaType(), Data: p.GetData()})
		}
		for _, tc := range m.GetToolCalls() {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.GetId(), Name: tc.GetName(), Input: rawJSON(tc.GetInputJson())})
		}
		out.Messages = append(out.Messages, msg)
	}
	for _, t := range r.GetTools() {
		out.Tools = append(out.Tools, ToolSchema{Name: t.GetName(), Description: t.GetDescription(), Parameters: rawJSON(t.GetParametersJson())})
	}
	return out
}

func rawJSON(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func usageToProto(u *Usage) *foyav1.Usage {
	if u == nil {
		return nil
	}
	return &foyav1.Usage{
		InputTokens:      u.InputTokens,
		OutputTokens:     u.OutputTokens,
		TotalTokens:      u.TotalTokens,
		CachedTokens:     u.CachedTokens,
		Model:            u.Model,
		CacheWriteTokens: u.CacheWriteTokens,
	}
}

var categoryToProto = map[ErrorCategory]foyav1.ErrorCategory{
	CategoryContextOverflow: foyav1.ErrorCategory_ERROR_CATEGORY_CONTEXT_OVERFLOW,
	CategoryRateLimit:       foyav1.ErrorCategory_ERROR_CATEGORY_RATE_LIMIT,
	CategoryQuota:           foyav1.ErrorCategory_ERROR_CATEGORY_QUOTA,
	CategoryThrottling:      foyav1.ErrorCategory_ERROR_CATEGORY_THROTTLING,
	CategoryOutputLimit:     foyav1.ErrorCategory_ERROR_CATEGORY_OUTPUT_LIMIT,
	CategoryAuth:            foyav1.ErrorCategory_ERROR_CATEGORY_AUTH,
	CategoryNetwork:         foyav1.ErrorCategory_ERROR_CATEGORY_NETWORK,
	CategoryBadRequest:      foyav1.ErrorCategory_ERROR_CATEGORY_BAD_REQUEST,
	CategoryServer:          foyav1.ErrorCategory_ERROR_CATEGORY_SERVER,
	CategoryUnavailable:     foyav1.ErrorCategory_ERROR_CATEGORY_UNAVAILABLE,
	CategoryBadResponse:     foyav1.ErrorCategory_ERROR_CATEGORY_BAD_RESPONSE,
}

func errorToProto(e *Error) *foyav1.ProviderError {
	c, ok := categoryToProto[e.Category]
	if !ok {
		c = foyav1.ErrorCategory_ERROR_CATEGORY_SERVER
	}
	return &foyav1.ProviderError{
		Category:     c,
		Message:      e.Message,
		RetryAfterMs: e.RetryAfter.Milliseconds(),
		StatusCode:   int32(e.StatusCode),
	}
}

func completionToProto(c Completion) *foyav1.CompleteResponse {
	return &foyav1.CompleteResponse{Text: c.Text, FinishReason: c.FinishReason, Usage: usageToProto(c.Usage), State: c.State}
}

func capabilitiesToProto(c Capabilities) *foyav1.Capabilities {
	out := &foyav1.Capabilities{
		ContextWindow:    c.ContextWindow,
		MaxInputTokens:   c.MaxInputTokens,
		MaxOutputTokens:  c.MaxOutputTokens,
		ImageInput:       c.ImageInput,
		ToolCalling:      c.ToolCalling,
		ReasoningEfforts: c.ReasoningEfforts,
		WebSearch:        c.WebSearch,
	}
	if g := c.Generation; g != nil {
		out.Generation = &foyav1.Generation{Image: g.Image, Video: g.Video, Audio: g.Audio}
	}
	return out
}

func webSearchToProto(r WebSearchResult) *foyav1.WebSearchResponse {
	out := &foyav1.WebSearchResponse{Text: r.Text, Usage: usageToProto(r.Usage)}
	for _, s := range r.Sources {
		out.Sources = append(out.Sources, &foyav1.WebSource{Title: s.Title, Url: s.URL})
	}
	return out
}

func toolSetInfoToProto(info ToolSetInfo) *foyav1.ToolSetInfo {
	out := &foyav1.ToolSetInfo{Version: info.Version, Sandbox: info.Sandbox, SandboxDetail: info.SandboxDetail}
	for _, t := range info.Tools {
		out.Tools = append(out.Tools, &foyav1.Tool{Name: t.Name, Description: t.Description, SchemaJson: string(t.Schema), ReadOnly: t.ReadOnly})
	}
	return out
}

func toolResultToProto(r ToolResult) *foyav1.ToolCallResponse {
	out := &foyav1.ToolCallResponse{Text: r.Text, IsError: r.IsError, Diff: r.Diff, Note: r.Note}
	for _, c := range r.FileChanges {
		out.FileChanges = append(out.FileChanges, &foyav1.ToolFileChange{
			Path: c.Path, Action: string(c.Action), Before: c.Before, After: c.After,
			BeforeSha256: c.BeforeSHA256, AfterSha256: c.AfterSHA256, TooLarge: c.TooLarge, BeforeMode: c.BeforeMode,
		})
	}
	if a := r.Attachment; a != nil {
		out.Attachment = &foyav1.ToolAttachment{Name: a.Name, MediaType: a.MediaType, Data: a.Data}
	}
	return out
}
