package sdk

import (
	"encoding/json"
)

// Endpoint is the connection a call is for. APIKey is secret: never log it.
type Endpoint struct {
	ConnectionID string
	ProviderKind string
	BaseURL      string
	APIKey       string
	// Options are extension settings of the connection, e.g. "web_search".
	Options map[string]string
}

// String never prints the key.
func (e Endpoint) String() string {
	return "endpoint(" + e.ConnectionID + " " + e.ProviderKind + " " + e.BaseURL + ")"
}

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// ContentPart is text ("text") or an image ("image") with its bytes.
type ContentPart struct {
	Type      string
	Text      string
	MediaType string
	Data      []byte
}

// ToolCall is a complete tool call an assistant message made.
type ToolCall struct {
	ID    string
	Name  string
	Input json.RawMessage
}

// Message is one message the model may see.
type Message struct {
	Role       string
	Content    []ContentPart
	Reasoning  string
	ToolCalls  []ToolCall
	ToolCallID string
	// State is the provider-native state this provider returned with this
	// assistant message (StreamSender.State), handed back only on the same
	// route: same connection, endpoint and model.
	State []byte
}

// Text returns the concatenated text parts of m.
func (m Message) Text() string {
	var s string
	for _, p := range m.Content {
		if p.Type == "text" {
			s += p.Text
		}
	}
	return s
}

// ToolSchema describes a tool to the model.
type ToolSchema struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Request is one model request.
type Request struct {
	Model           string
	ReasoningEffort string
	MaxOutputTokens int64
	Messages        []Message
	Tools           []ToolSchema
	// State is the state of a native checkpoint this provider made on the
	// same route (NativeCompactor); it stands for the history it covers,
	// and Messages hold only what came after it.
	State []byte
}

// ToolCallDelta is a fragment of a tool call; the host assembles fragments
// by Index. Send ID and Name with the first fragment of a call.
type ToolCallDelta struct {
	Index     int
	ID        string
	Name      string
	Arguments string
}

// Usage is token usage; CachedTokens is a subset of InputTokens. Model is
// the model that actually answered.
type Usage struct {
	InputTokens  int64
	OutputTokens int64
	TotalTokens  int64
	CachedTokens int64
	Model        string
	// CacheWriteTokens were written to the prompt cache (a subset of
	// InputTokens).
	CacheWriteTokens int64
}

// Completion is the result of a non-streaming completion.
type Completion struct {
	Text         string
	FinishReason string
	Usage        *Usage
	// State is set by NativeCompactor: opaque state standing for the
	// compacted history in later requests on the same route.
	State []byte
}

// Generation flags of a model; nil means unknown.
type Generation struct {
	Image, Video, Audio *bool
}

// Capabilities of a model; nil means unknown, never unsupported.
type Capabilities struct {
	ContextWindow    *int64
	MaxInputTokens   *int64
	MaxOutputTokens  *int64
	ImageInput       *bool
	ToolCalling      *bool
	ReasoningEfforts []string
	WebSearch        *bool
	Generation       *Generation
}

// Model is one model an endpoint offers.
type Model struct {
	ID           string
	Capabilities Capabilities
}

// WebSearchRequest asks the provider's native web search.
type WebSearchRequest struct {
	Model string
	Query string
}

// WebSource is one cited source.
type WebSource struct {
	Title string
	URL   string
}

// WebSearchResult is a native web search answer.
type WebSearchResult struct {
	Text    string
	Sources []WebSource
	Usage   *Usage
}

// ImageRequest asks for generated images.
type ImageRequest struct {
	Model  string
	Prompt string
	Size   string // e.g. "1024x1024"; empty: the service's default
	Count  int
}

// GeneratedImage is one generated image.
type GeneratedImage struct {
	MediaType     string
	Data          []byte
	RevisedPrompt string
}

// ImageResult is what an image generation returned.
type ImageResult struct {
	Images []GeneratedImage
	Usage  *Usage
}
