package host

import (
	"encoding/json"
	"time"

	"github.com/foya-dev/foya/core"
	foyav1 "github.com/foya-dev/foya/plugins/proto/foya/v1"
)

// Conversions between core types and the foya.v1 wire contract.

func endpointToProto(ep core.Endpoint) *foyav1.Endpoint {
	return &foyav1.Endpoint{
		ConnectionId: ep.ConnectionID,
		ProviderKind: ep.ProviderKind,
		BaseUrl:      ep.BaseURL,
		ApiKey:       ep.APIKey,
		Options:      ep.Options,
	}
}

func requestToProto(r core.ProviderRequest) *foyav1.Request {
	out := &foyav1.Request{
		Model:           r.Model,
		ReasoningEffort: r.ReasoningEffort,
		MaxOutputTokens: r.MaxOutputTokens,
		State:           r.State,
		Messages:        make([]*foyav1.Message, 0, len(r.Messages)),
	}
	for _, m := range r.Messages {
		pm := &foyav1.Message{Role: string(m.Role), Reasoning: m.Reasoning, ToolCallId: m.ToolCallID, State: m.State}
		for _, p := range m.Content {
			pm.Content = append(pm.Content, &foyav1.ContentPart{Type: p.Type, Text: p.Text, MediaType: p.MediaType, Data: p.Data})
		}
		for _, tc := range m.ToolCalls {
			pm.ToolCalls = append(pm.ToolCalls, &foyav1.ToolCall{Id: tc.ID, Name: tc.Name, InputJson: string(tc.Input)})
		}
		out.Messages = append(out.Messages, pm)
	}
	for _, t := range r.Tools {
		out.Tools = append(out.Tools, &foyav1.ToolSchema{Name: t.Name, Description: t.Description, ParametersJson: string(t.Parameters)})
	}
	return out
}

func usageFromProto(u *foyav1.Usage) *core.Usage {
	if u == nil {
		return nil
	}
	return &core.Usage{
		InputTokens:      u.GetInputTokens(),
		OutputTokens:     u.GetOutputTokens(),
		TotalTokens:      u.GetTotalTokens(),
		CachedTokens:     u.GetCachedTokens(),
		Model:            u.GetModel(),
		CacheWriteTokens: u.GetCacheWriteTokens(),
	}
}

var categoryFromProto = map[foyav1.ErrorCategory]core.ProviderErrorCategory{
	foyav1.ErrorCategory_ERROR_CATEGORY_CONTEXT_OVERFLOW: core.ProviderContextOverflow,
	foyav1.ErrorCategory_ERROR_CATEGORY_RATE_LIMIT:       core.ProviderRateLimit,
	foyav1.ErrorCategory_ERROR_CATEGORY_QUOTA:            core.ProviderQuota,
	foyav1.ErrorCategory_ERROR_CATEGORY_THROTTLING:       core.ProviderThrottling,
	foyav1.ErrorCategory_ERROR_CATEGORY_OUTPUT_LIMIT:     core.ProviderOutputLimit,
	foyav1.ErrorCategory_ERROR_CATEGORY_AUTH:             core.ProviderAuth,
	foyav1.ErrorCategory_ERROR_CATEGORY_NETWORK:          core.ProviderNetwork,
	foyav1.ErrorCategory_ERROR_CATEGORY_BAD_REQUEST:      core.ProviderBadRequest,
	foyav1.ErrorCategory_ERROR_CATEGORY_SERVER:           core.ProviderServer,
	foyav1.ErrorCategory_ERROR_CATEGORY_UNAVAILABLE:      core.ProviderUnavailable,
	foyav1.ErrorCategory_ERROR_CATEGORY_BAD_RESPONSE:     core.ProviderBadResponse,
}

func providerErrorFromProto(e *foyav1.ProviderError) *core.ProviderError {
	c, ok := categoryFromProto[e.GetCategory()]
	if !ok {
		c = core.ProviderServer
	}
	return &core.ProviderError{
		Category:   c,
		Message:    e.GetMessage(),
		StatusCode: int(e.GetStatusCode()),
		RetryAfter: time.Duration(e.GetRetryAfterMs()) * time.Millisecond,
	}
}

func eventFromProto(ev *foyav1.StreamEvent) (core.StreamEvent, bool) {
	switch e := ev.GetEvent().(type) {
	case *foyav1.StreamEvent_Text:
		return core.StreamEvent{Kind: core.StreamText, Text: e.Text.GetText()}, true
	case *foyav1.StreamEvent_Reasoning:
		return core.StreamEvent{Kind: core.StreamReasoning, Text: e.Reasoning.GetText()}, true
	case *foyav1.StreamEvent_ToolCall:
		tc := e.ToolCall
		return core.StreamEvent{Kind: core.StreamToolCall, ToolCall: &core.ToolCallDelta{
			Index: int(tc.GetIndex()), ID: tc.GetId(), Name: tc.GetName(), Arguments: tc.GetArguments(),
		}}, true
	case *foyav1.StreamEvent_Usage:
		return core.StreamEvent{Kind: core.StreamUsage, Usage: usageFromProto(e.Usage)}, true
	case *foyav1.StreamEvent_Done:
		return core.StreamEvent{Kind: core.StreamDone, FinishReason: e.Done.GetFinishReason(), Refusal: e.Done.GetRefusal()}, true
	case *foyav1.StreamEvent_Error:
		return core.StreamEvent{Kind: core.StreamError, Err: providerErrorFromProto(e.Error)}, true
	case *foyav1.StreamEvent_State:
		return core.StreamEvent{Kind: core.StreamState, State: e.State.GetData()}, true
	}
	return core.StreamEvent{}, false // an event kind from a newer contract
}

func capabilitiesFromProto(c *foyav1.Capabilities) core.Capabilities {
	out := core.Capabilities{
		ContextWindow:    c.ContextWindow,
		MaxInputTokens:   c.MaxInputTokens,
		MaxOutputTokens:  c.MaxOutputTokens,
		ImageInput:       c.ImageInput,
		ToolCalling:      c.ToolCalling,
		ReasoningEfforts: c.GetReasoningEfforts(),
		WebSearch:        c.WebSearch,
	}
	if g := c.GetGeneration(); g != nil {
		out.Generation = &core.Generation{Image: g.Image, Video: g.Video, Audio: g.Audio}
	}
	return out
}

func completionFromProto(r *foyav1.CompleteResponse) core.Completion {
	return core.Completion{Text: r.GetText(), FinishReason: r.GetFinishReason(), Usage: usageFromProto(r.GetUsage()), State: r.GetState()}
}

func toolInfoFromProto(t *foyav1.Tool) core.ToolInfo {
	var schema json.RawMessage
	if s := t.GetSchemaJson(); s != "" {
		schema = json.RawMessage(s)
	}
	return core.ToolInfo{Name: t.GetName(), Description: t.GetDescription(), Schema: schema, ReadOnly: t.GetReadOnly()}
}

func toolResultFromProto(r *foyav1.ToolCallResponse) core.ToolResult {
	out := core.ToolResult{Text: r.GetText(), IsError: r.GetIsError(), Diff: r.GetDiff(), Note: r.GetNote()}
	for _, c := range r.GetFileChanges() {
		out.FileChanges = append(out.FileChanges, core.ToolFileChange{
			Path: c.GetPath(), Action: core.FileAction(c.GetAction()), Before: c.GetBefore(), After: c.GetAfter(),
			BeforeSHA256: c.GetBeforeSha256(), AfterSHA256: c.GetAfterSha256(), TooLarge: c.GetTooLarge(), BeforeMode: c.GetBeforeMode(),
		})
	}
	if a := r.GetAttachment(); a != nil {
		out.Attachment = &core.ToolAttachment{Name: a.GetName(), MediaType: a.GetMediaType(), Data: a.GetData()}
	}
	return out
}
