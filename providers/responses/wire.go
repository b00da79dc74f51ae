package responses

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/internal/httpwire"
)

// responsesRequest is the body of POST /responses. Input items are `any`
// so that native state items go back byte for byte (json.RawMessage).
type responsesRequest struct {
	Model           string     `json:"model"`
	Instructions    string     `json:"instructions,omitempty"`
	Input           []any      `json:"input"`
	Tools           []wireTool `json:"tools,omitempty"`
	Reasoning       *reasoning `json:"reasoning,omitempty"`
	MaxOutputTokens int64      `json:"max_output_tokens,omitempty"`
	Store           bool       `json:"store"`
	Include         []string   `json:"include,omitempty"`
	Stream          bool       `json:"stream,omitempty"`
}

type reasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

type wireTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

type contentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
}

type messageItem struct {
	Type    string        `json:"type"`
	Role    string        `json:"role"`
	Content []contentPart `json:"content"`
}

type functionCallItem struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type functionOutputItem struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output any    `json:"output"`
}

// nativeState is the provider-native state: output items replayed verbatim
// on the same route. With a reply, the reasoning items (encrypted_content
// included, as streamed in response.output_item.done); with a native
// checkpoint, the items /responses/compact returned.
type nativeState struct {
	Items []json.RawMessage `json:"items"`
}

func decodeState(b []byte) []json.RawMessage {
	return httpwire.DecodeState[nativeState](b).Items
}

// reasoningModel guesses whether a model reasons (and so accepts the
// reasoning.encrypted_content include) from its name.
func reasoningModel(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	for _, p := range []string{"o1", "o3", "o4", "gpt-5", "codex", "gpt-oss"} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// buildRequest turns a kernel request into a stateless Responses request
// (store: false): leading system messages become instructions; the history
// becomes input items, each assistant message preceded by its reasoning
// items when the kernel handed back their state; a native checkpoint's
// items (req.State) lead the input.
func buildRequest(ep sdk.Endpoint, req sdk.Request, stream bool) (*responsesRequest, error) {
	out := &responsesRequest{Model: req.Model, Stream: stream, MaxOutputTokens: req.MaxOutputTokens}
	var instructions []string
	leading := true
	for _, it := range decodeState(req.State) {
		out.Input = append(out.Input, it)
	}
	hasReasoningState := false
	for _, m := range req.Messages {
		if m.Role == sdk.RoleSystem && leading {
			if t := m.Text(); strings.TrimSpace(t) != "" {
				instructions = append(instructions, t)
			}
			continue
		}
		leading = false
		switch m.Role {
		case sdk.RoleSystem:
			out.Input = append(out.Input, messageItem{Type: "message", Role: "developer", Content: []contentPart{{Type: "input_text", Text: m.Text()}}})
		case sdk.RoleUser:
			if parts := inputParts(m); len(parts) > 0 {
				out.Input = append(out.Input, messageItem{Type: "message", Role: "user", Content: parts})
			}
		case sdk.RoleAssistant:
			for _, it := range decodeState(m.State) {
				out.Input = append(out.Input, it)
				hasReasoningState = true
			}
			// An interrupted reply's reasoning has no encrypted item: it
			// goes back as text.
			t := httpwire.AssistantText(m)
			if strings.TrimSpace(t) != "" {
				out.Input = append(out.Input, messageItem{Type: "message", Role: "assistant", Content: []contentPart{{Type: "output_text", Text: t}}})
			}
			for _, tc := range m.ToolCalls {
				args := cmp.Or(string(tc.Input), "{}")
				out.Input = append(out.Input, functionCallItem{Type: "function_call", CallID: tc.ID, Name: tc.Name, Arguments: args})
			}
		case sdk.RoleTool:
			var output any = httpwire.NonEmpty(m.Text())
			if parts := inputParts(m); hasImage(parts) {
				output = parts
			}
			out.Input = append(out.Input, functionOutputItem{Type: "function_call_output", CallID: m.ToolCallID, Output: output})
		}
	}
	if len(out.Input) == 0 {
		return nil, &sdk.Error{Category: sdk.CategoryBadRequest, Message: "the request has no input"}
	}
	out.Instructions = strings.Join(instructions, "\n\n")
	notStrict := false
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out.Tools = append(out.Tools, wireTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: params, Strict: &notStrict})
	}
	if req.ReasoningEffort != "" && req.ReasoningEffort != "none" {
		out.Reasoning = &reasoning{Effort: req.ReasoningEffort}
	}
	summary := strings.ToLower(strings.TrimSpace(ep.Options[OptionReasoningSummary]))
	encrypted := req.ReasoningEffort != "" || reasoningModel(req.Model) || hasReasoningState
	switch strings.ToLower(ep.Options[OptionEncryptedReasoning]) {
	case "on":
		encrypted = true
	case "off":
		encrypted = false
	}
	if encrypted && req.ReasoningEffort != "none" {
		out.Include = []string{"reasoning.encrypted_content"}
		if summary != "off" {
			if out.Reasoning == nil {
				out.Reasoning = &reasoning{}
			}
			out.Reasoning.Summary = cmp.Or(summary, "auto")
		}
	}
	return out, nil
}

func inputParts(m sdk.Message) []contentPart {
	var parts []contentPart
	for _, p := range m.Content {
		switch p.Type {
		case "text":
			if strings.TrimSpace(p.Text) != "" {
				parts = append(parts, contentPart{Type: "input_text", Text: p.Text})
			}
		case "image":
			parts = append(parts, contentPart{Type: "input_image", ImageURL: "data:" + p.MediaType + ";base64," + base64.StdEncoding.EncodeToString(p.Data)})
		}
	}
	return parts
}

func hasImage(parts []contentPart) bool {
	for _, p := range parts {
		if p.Type == "input_image" {
			return true
		}
	}
	return false
}
