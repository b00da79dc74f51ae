package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/internal/httpwire"
)

// The request body of POST /v1/messages. Content blocks are json.RawMessage
// so that thinking blocks from the native state go back byte for byte.
type messagesRequest struct {
	Model     string          `json:"model"`
	MaxTokens int64           `json:"max_tokens"`
	System    []textBlock     `json:"system,omitempty"`
	Messages  []wireMessage   `json:"messages"`
	Tools     []wireTool      `json:"tools,omitempty"`
	Thinking  *thinkingConfig `json:"thinking,omitempty"`
	Stream    bool            `json:"stream,omitempty"`
	// OutputConfig carries the effort of adaptive thinking.
	OutputConfig *outputConfig `json:"output_config,omitempty"`
	// ContextManagement asks for a server-side compaction (CompactContext).
	ContextManagement *contextManagement `json:"context_management,omitempty"`

	// compaction: a compaction block goes back in this request, which then
	// needs the compaction beta header.
	compaction bool
}

type cacheControl struct {
	Type string `json:"type"`
}

var ephemeral = &cacheControl{Type: "ephemeral"}

type textBlock struct {
	Type         string        `json:"type"`
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type imageBlock struct {
	Type   string `json:"type"`
	Source struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type toolUseBlock struct {
	Type         string          `json:"type"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

type toolResultBlock struct {
	Type         string        `json:"type"`
	ToolUseID    string        `json:"tool_use_id"`
	Content      []any         `json:"content,omitempty"`
	IsError      bool          `json:"is_error,omitempty"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type wireMessage struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type wireTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

// thinkingConfig is extended thinking: "enabled" with budget_tokens (the
// models before Claude 4.6), "adaptive" with display (4.6 and later, whose
// depth the effort of output_config sets), or "disabled".
type thinkingConfig struct {
	Type         string `json:"type"`
	BudgetTokens int64  `json:"budget_tokens,omitempty"`
	Display      string `json:"display,omitempty"`
}

type outputConfig struct {
	Effort string `json:"effort,omitempty"`
}

// nativeState is the provider-native state of one assistant reply: its
// compaction, thinking and redacted_thinking blocks, exactly as streamed
// (signature included), in order. Anthropic requires them back unchanged
// before the reply's text and tool_use blocks while a tool round
// continues. A native checkpoint (CompactContext) is a nativeState of one
// compaction block.
type nativeState struct {
	Blocks []json.RawMessage `json:"blocks"`
}

func decodeState(b []byte) []json.RawMessage {
	return httpwire.DecodeState[nativeState](b).Blocks
}

// ReasoningEfforts are the efforts this provider understands, mapped onto
// extended-thinking budgets.
var ReasoningEfforts = []string{"low", "medium", "high", "max"}

// thinkingBudget maps a reasoning effort to budget_tokens; 0 means thinking
// off.
func thinkingBudget(effort string) int64 {
	switch strings.ToLower(effort) {
	case "minimal":
		return 1024
	case "low":
		return 4096
	case "medium":
		return 10000
	case "high":
		return 24000
	case "max", "xhigh":
		return 48000
	}
	return 0
}

// buildRequest turns a kernel request into a Messages request.
//
// Prompt caching: unless the connection option prompt_cache=off, three
// cache_control breakpoints mark the stable prefix: the last tool, the last
// system block and the last block of the newest message (the latest
// history boundary). Every request thus writes the whole prefix to the
// cache and the next one of the session reads it, so a long session pays
// for its history once.
func buildRequest(ep sdk.Endpoint, req sdk.Request, stream bool) (*messagesRequest, error) {
	out := &messagesRequest{Model: req.Model, MaxTokens: req.MaxOutputTokens, Stream: stream}
	if out.MaxTokens <= 0 {
		out.MaxTokens = DefaultMaxTokens
	}
	if cp := decodeState(req.State); len(cp) > 0 {
		// A native checkpoint of this route: its compaction block stands
		// for the history before it, which the API drops.
		blocks := make([]any, len(cp))
		for i, b := range cp {
			blocks[i] = b
		}
		out.appendBlocks("assistant", blocks...)
	}
	cache := !strings.EqualFold(strings.TrimSpace(ep.Options[OptionCache]), "off")
	leading := true
	var lastAssistantHasThinking, lastAssistantHasCalls bool
	for _, m := range req.Messages {
		if m.Role == sdk.RoleSystem && leading {
			if t := m.Text(); strings.TrimSpace(t) != "" {
				out.System = append(out.System, textBlock{Type: "text", Text: t})
			}
			continue
		}
		leading = false
		switch m.Role {
		case sdk.RoleSystem:
			// Kernel context recorded mid-history travels as user text.
			out.appendBlocks("user", textBlock{Type: "text", Text: "<kernel-context>\n" + m.Text() + "\n</kernel-context>"})
		case sdk.RoleUser:
			out.appendBlocks("user", userBlocks(m)...)
		case sdk.RoleAssistant:
			blocks, hasThinking := assistantBlocks(m)
			if len(blocks) == 0 {
				continue
			}
			lastAssistantHasThinking, lastAssistantHasCalls = hasThinking, len(m.ToolCalls) > 0
			out.appendBlocks("assistant", blocks...)
		case sdk.RoleTool:
			content := userBlocks(m) // text and images
			if len(content) == 0 {
				content = []any{textBlock{Type: "text", Text: httpwire.NonEmpty(m.Text())}}
			}
			out.appendBlocks("user", toolResultBlock{Type: "tool_result", ToolUseID: toolID(m.ToolCallID), Content: content})
		}
	}
	if len(out.Messages) == 0 {
		return nil, &sdk.Error{Category: sdk.CategoryBadRequest, Message: "the request has no user or assistant message"}
	}
	if out.Messages[0].Role != "user" {
		// A checkpoint inside a long turn leaves history starting with the
		// model's tool round; the API wants a user turn first.
		out.Messages = append([]wireMessage{{Role: "user", Content: []any{textBlock{Type: "text", Text: "[continuing from the context checkpoint above]"}}}}, out.Messages...)
	}
	for _, t := range req.Tools {
		schema := t.Parameters
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out.Tools = append(out.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if budget := thinkingBudget(req.ReasoningEffort); budget > 0 {
		// A tool round started without thinking cannot continue with it:
		// the API wants the pending assistant turn to open with a thinking
		// block. Thinking resumes at the next user turn.
		pending := lastAssistantHasCalls && out.Messages[len(out.Messages)-1].Role == "user" && !lastAssistantHasThinking
		if gen := generationOf(req.Model); gen.adaptive {
			// Claude 4.6 and later: the model decides how much to think,
			// at the session's effort, and may skip a step, so a pending
			// round without a thinking block continues with it; its
			// thinking is shown summarized (Opus 4.7 and later omit it
			// unless asked).
			if req.MaxOutputTokens <= 0 {
				out.MaxTokens = budget + DefaultMaxTokens
			}
			out.Thinking = &thinkingConfig{Type: "adaptive", Display: "summarized"}
			out.OutputConfig = &outputConfig{Effort: gen.effort(req.ReasoningEffort)}
		} else if !pending {
			if req.MaxOutputTokens <= 0 && out.MaxTokens <= budget {
				out.MaxTokens = budget + DefaultMaxTokens
			}
			budget = min(budget, out.MaxTokens-1024)
			if budget >= 1024 {
				out.Thinking = &thinkingConfig{Type: "enabled", BudgetTokens: budget}
			}
		}
	}
	if cache {
		out.markCache()
	}
	return out, nil
}

// assistantBlocks is an assistant message as content blocks: its thinking
// (from native state), its text and its tool calls.
func assistantBlocks(m sdk.Message) (blocks []any, hasThinking bool) {
	state := decodeState(m.State)
	thinking := false
	for _, b := range state {
		blocks = append(blocks, b)
		thinking = thinking || !isCompaction(b)
	}
	// An interrupted reply's thinking, unsigned, cannot go back as a
	// thinking block: it travels as text.
	t := httpwire.AssistantText(m)
	if strings.TrimSpace(t) != "" {
		blocks = append(blocks, textBlock{Type: "text", Text: t})
	}
	for _, tc := range m.ToolCalls {
		input := tc.Input
		if len(input) == 0 || !isObject(input) {
			input = json.RawMessage(`{}`)
		}
		blocks = append(blocks, toolUseBlock{Type: "tool_use", ID: toolID(tc.ID), Name: tc.Name, Input: input})
	}
	return blocks, thinking
}

// isCompaction reports whether a block of native state is a compaction
// block. State blocks are this provider's own encoding, type first
// (compactionBlock; thinking and redacted_thinking from sendState), so the
// prefix tells, without decoding a block on every request.
func isCompaction(raw json.RawMessage) bool {
	return bytes.HasPrefix(raw, []byte(`{"type":"compaction"`))
}

// appendBlocks adds blocks to the last message when it has the same role
// (the API wants strict alternation: tool results and a following user
// text share one user message), else starts a new one.
func (r *messagesRequest) appendBlocks(role string, blocks ...any) {
	if len(blocks) == 0 {
		return
	}
	for _, b := range blocks {
		if raw, ok := b.(json.RawMessage); ok && isCompaction(raw) {
			r.compaction = true
		}
	}
	if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == role {
		r.Messages[n-1].Content = append(r.Messages[n-1].Content, blocks...)
		return
	}
	r.Messages = append(r.Messages, wireMessage{Role: role, Content: blocks})
}

// markCache sets the cache breakpoints (at most 4 are allowed; 3 are used).
func (r *messagesRequest) markCache() {
	if n := len(r.Tools); n > 0 {
		r.Tools[n-1].CacheControl = ephemeral
	}
	if n := len(r.System); n > 0 {
		r.System[n-1].CacheControl = ephemeral
	}
	last := &r.Messages[len(r.Messages)-1]
	for i := len(last.Content) - 1; i >= 0; i-- {
		switch b := last.Content[i].(type) {
		case textBlock:
			b.CacheControl = ephemeral
			last.Content[i] = b
			return
		case imageBlock:
			b.CacheControl = ephemeral
			last.Content[i] = b
			return
		case toolResultBlock:
			b.CacheControl = ephemeral
			last.Content[i] = b
			return
		case toolUseBlock:
			b.CacheControl = ephemeral
			last.Content[i] = b
			return
		}
		// thinking blocks cannot carry cache_control: look further back
	}
}

func userBlocks(m sdk.Message) []any {
	var out []any
	for _, p := range m.Content {
		switch p.Type {
		case "text":
			if strings.TrimSpace(p.Text) != "" {
				out = append(out, textBlock{Type: "text", Text: p.Text})
			}
		case "image":
			var b imageBlock
			b.Type = "image"
			b.Source.Type = "base64"
			b.Source.MediaType = p.MediaType
			b.Source.Data = base64.StdEncoding.EncodeToString(p.Data)
			out = append(out, b)
		}
	}
	return out
}

func isObject(raw json.RawMessage) bool {
	var v map[string]json.RawMessage
	return json.Unmarshal(raw, &v) == nil && v != nil
}

// maxToolID bounds the tool ids sent (Anthropic's own are about 30 bytes).
const maxToolID = 128

// toolID is a tool call's id as the API takes it back: [A-Za-z0-9_-]
// only. Ids another provider made (Kimi's "functions.read:0", after a
// fallback or a route change) are mapped, the same way for the call and
// its result.
func toolID(id string) string { return httpwire.ToolCallID(id, maxToolID, httpwire.IDRune) }
