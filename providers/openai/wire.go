package openai

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/internal/httpwire"
)

// Chat Completions wire types: only the fields Foya reads or writes.

type chatRequest struct {
	Model               string         `json:"model"`
	Messages            []chatMessage  `json:"messages"`
	Tools               []chatTool     `json:"tools,omitempty"`
	Stream              bool           `json:"stream,omitempty"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
	ReasoningEffort     string         `json:"reasoning_effort,omitempty"`
	MaxTokens           int64          `json:"max_tokens,omitempty"`
	MaxCompletionTokens int64          `json:"max_completion_tokens,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is a string, an array of parts, or null (assistant with tool calls).
	Content    any            `json:"content"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type chatToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function callFunction `json:"function"`
}

type callFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// chatChunk is one streamed chunk; chatResponse is a non-streamed answer.
type chatChunk struct {
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *chatUsage    `json:"usage"`
	Error   *apiError     `json:"error"`
	// A flat error object instead of a chunk (vLLM, some proxies):
	// {"object":"error","message":"…","type":"…","code":400}.
	Object  string          `json:"object"`
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// flatError returns the error a chunk is when it is a flat error object.
func (c *chatChunk) flatError() *apiError {
	if c.Error != nil {
		return c.Error
	}
	if c.Object == "error" || (c.Message != "" && len(c.Choices) == 0 && c.Usage == nil) {
		return &apiError{Message: c.Message, Type: c.Type, Code: c.Code}
	}
	return nil
}

type chunkChoice struct {
	Index        int        `json:"index"`
	Delta        chatDelta  `json:"delta"`
	Message      *chatDelta `json:"message"`
	FinishReason *string    `json:"finish_reason"`
}

type chatDelta struct {
	Content          *string        `json:"content"`
	ReasoningContent *string        `json:"reasoning_content"`
	Reasoning        *string        `json:"reasoning"`
	Refusal          *string        `json:"refusal"`
	ToolCalls        []chatToolCall `json:"tool_calls"`
	// Parts hold content, reasoning_content or reasoning sent as an array
	// of parts (Mistral's magistral models, some compatible servers); see
	// delta.go. Content is then nil.
	Parts []contentPart `json:"-"`
}

type chatUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func (u *chatUsage) toSDK(model string) sdk.Usage {
	out := sdk.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens, Model: model}
	if u.PromptTokensDetails != nil {
		out.CachedTokens = u.PromptTokensDetails.CachedTokens
	}
	if out.TotalTokens == 0 {
		out.TotalTokens = out.InputTokens + out.OutputTokens
	}
	return out
}

// apiError is the {"error":{...}} object of an error body or stream chunk.
type apiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"` // a string on OpenAI, a number elsewhere
}

func (e *apiError) code() string {
	if e == nil || len(e.Code) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(e.Code, &s) == nil {
		return s
	}
	return strings.Trim(string(e.Code), `"`)
}

// buildChatRequest materializes req into a Chat Completions body.
func buildChatRequest(ep sdk.Endpoint, req sdk.Request, stream bool) chatRequest {
	out := chatRequest{Model: req.Model, ReasoningEffort: req.ReasoningEffort}
	if stream {
		out.Stream = true
		out.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if req.MaxOutputTokens > 0 {
		if maxTokensField(ep) == "max_completion_tokens" {
			out.MaxCompletionTokens = req.MaxOutputTokens
		} else {
			out.MaxTokens = req.MaxOutputTokens
		}
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, chatTool{Type: "function", Function: chatFunction{Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	// Chat Completions tool messages carry text only, and the tool messages
	// answering one assistant message must follow it without a break. So
	// images a tool returned wait until the run of tool messages ends, then
	// travel in one user-role message, each labelled as its tool call's
	// output.
	var pending []chatPart
	flush := func() {
		if len(pending) > 0 {
			out.Messages = append(out.Messages, chatMessage{Role: sdk.RoleUser, Content: pending})
			pending = nil
		}
	}
	for _, m := range req.Messages {
		if m.Role != sdk.RoleTool {
			flush()
		}
		out.Messages = append(out.Messages, buildMessage(m))
		if m.Role == sdk.RoleTool {
			pending = append(pending, toolImages(m)...)
		}
	}
	flush()
	return out
}

// toolImages returns the image parts of a tool message behind a label naming
// the call they belong to, or nothing.
func toolImages(m sdk.Message) []chatPart {
	var parts []chatPart
	for _, p := range m.Content {
		if p.Type == "image" {
			parts = append(parts, chatPart{Type: "image_url", ImageURL: &imageURL{URL: dataURL(p.MediaType, p.Data)}})
		}
	}
	if len(parts) == 0 {
		return nil
	}
	label := chatPart{Type: "text", Text: "[output of tool call " + toolID(m.ToolCallID) + ": the image(s) it returned follow]"}
	return append([]chatPart{label}, parts...)
}

// toolText joins the text parts of a tool message (the result, then notes
// about attachments) with blank lines.
func toolText(m sdk.Message) string {
	var texts []string
	for _, p := range m.Content {
		if p.Type == "text" && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

func buildMessage(m sdk.Message) chatMessage {
	switch m.Role {
	case sdk.RoleAssistant:
		cm := chatMessage{Role: m.Role}
		text := httpwire.AssistantText(m)
		if text != "" || len(m.ToolCalls) == 0 {
			cm.Content = text
		}
		for _, tc := range m.ToolCalls {
			args := cmp.Or(string(tc.Input), "{}")
			cm.ToolCalls = append(cm.ToolCalls, chatToolCall{ID: toolID(tc.ID), Type: "function", Function: callFunction{Name: tc.Name, Arguments: args}})
		}
		return cm
	case sdk.RoleTool:
		return chatMessage{Role: m.Role, Content: toolText(m), ToolCallID: toolID(m.ToolCallID)}
	}
	hasImage := false
	for _, p := range m.Content {
		hasImage = hasImage || p.Type == "image"
	}
	if !hasImage {
		return chatMessage{Role: m.Role, Content: m.Text()}
	}
	parts := make([]chatPart, 0, len(m.Content))
	for _, p := range m.Content {
		switch p.Type {
		case "image":
			parts = append(parts, chatPart{Type: "image_url", ImageURL: &imageURL{URL: dataURL(p.MediaType, p.Data)}})
		default:
			parts = append(parts, chatPart{Type: "text", Text: p.Text})
		}
	}
	return chatMessage{Role: m.Role, Content: parts}
}

func dataURL(mediaType string, data []byte) string {
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// maxTokensField picks the output limit field: the endpoint option
// "max_tokens_field" wins; api.openai.com gets max_completion_tokens (its
// reasoning models reject max_tokens); other compatible endpoints get the
// widely supported max_tokens.
func maxTokensField(ep sdk.Endpoint) string {
	if f := ep.Options[OptionMaxTokensField]; f != "" {
		return f
	}
	if u, err := url.Parse(baseURL(ep)); err == nil && u.Hostname() == "api.openai.com" {
		return "max_completion_tokens"
	}
	return "max_tokens"
}

// maxToolID is the longest tool call id OpenAI takes back (40 bytes; a
// longer one is refused with "string too long").
const maxToolID = 40

// toolID is a tool call's id as it goes back: ids over maxToolID bytes
// (another provider's, after a fallback or a route change) are mapped, the
// same way for the call and its result; their characters are kept (some
// servers read them, e.g. Kimi's "functions.read:0").
func toolID(id string) string { return httpwire.ToolCallID(id, maxToolID, nil) }
