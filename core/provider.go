package core

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// ContentPart is one part of a provider message: text or an image loaded
// from the artifact store at request time.
type ContentPart struct {
	Type      string `json:"type"` // "text" or "image"
	Text      string `json:"text,omitempty"`
	MediaType string `json:"mediaType,omitempty"`
	Data      []byte `json:"data,omitempty"`
}

// ProviderMessage is one message of the provider view (MSG-8, PRV-9): only
// what a model may see.
type ProviderMessage struct {
	Role    Role          `json:"role"`
	Content []ContentPart `json:"content,omitempty"`
	// Reasoning is set only for interrupted assistant messages (MSG-9).
	Reasoning  string     `json:"reasoning,omitempty"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	// State is the provider-native state of an assistant message, set only
	// when it was produced on the route of this request (PRV-10). Opaque to
	// the kernel.
	State []byte `json:"state,omitempty"`
}

// ToolSchema describes a tool to a model.
type ToolSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// ProviderRequest is one model request (PRV-6).
type ProviderRequest struct {
	Model           string            `json:"model"`
	ReasoningEffort string            `json:"reasoningEffort,omitempty"`
	MaxOutputTokens int64             `json:"maxOutputTokens,omitempty"`
	Messages        []ProviderMessage `json:"messages"`
	Tools           []ToolSchema      `json:"tools,omitempty"`
	// State is optional provider-native context state (opaque): the state
	// of a native compaction checkpoint made on this route, which stands for
	// the history it covers (PRV-6, PRV-7).
	State []byte `json:"state,omitempty"`
}

// Endpoint is the connection as a provider call sees it. It carries the
// resolved API key; never log it.
type Endpoint struct {
	ConnectionID string
	ProviderKind string
	BaseURL      string
	APIKey       string
	// Options are provider-specific extension settings of the connection
	// (PRV-15), e.g. "web_search": "responses" for the OpenAI provider.
	Options map[string]string
}

// String never prints the key.
func (e Endpoint) String() string {
	return fmt.Sprintf("endpoint(%s %s %s)", e.ConnectionID, e.ProviderKind, e.BaseURL)
}

// Usage is token usage (PRV-11). Cached tokens are a subset of input tokens.
type Usage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	TotalTokens  int64 `json:"totalTokens"`
	CachedTokens int64 `json:"cachedTokens"`
	// CacheWriteTokens were written to the provider's prompt cache by this
	// request (a subset of InputTokens; Anthropic bills them apart).
	CacheWriteTokens int64  `json:"cacheWriteTokens,omitempty"`
	Model            string `json:"model,omitempty"`
	Estimated        bool   `json:"estimated,omitempty"`
	// Cost is what the usage cost in US dollars, from the model's declared
	// prices when the request was made; nil when no price was known.
	Cost *float64 `json:"cost,omitempty"`
	// UnpricedTokens counts the tokens of a sum that had no price (so Cost
	// covers only the rest); it is never stored.
	UnpricedTokens int64 `json:"-"`
}

// StreamEventKind tags a StreamEvent.
type StreamEventKind string

// Stream event kinds (PRV-6).
const (
	StreamText      StreamEventKind = "text"
	StreamReasoning StreamEventKind = "reasoning"
	StreamToolCall  StreamEventKind = "tool_call"
	StreamUsage     StreamEventKind = "usage"
	StreamDone      StreamEventKind = "done"
	// StreamState carries the provider-native state of the reply (opaque,
	// persisted with the message, replayed only on the same route).
	StreamState StreamEventKind = "state"
	StreamError StreamEventKind = "error"
)

// ToolCallDelta is a fragment of a tool call; fragments are assembled by
// Index (MSG-6). ID and Name usually arrive with the first fragment.
type ToolCallDelta struct {
	Index     int    `json:"index"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
}

// StreamEvent is one event of a provider stream.
type StreamEvent struct {
	Kind         StreamEventKind
	Text         string
	ToolCall     *ToolCallDelta
	Usage        *Usage
	FinishReason string
	// Refusal is the service's explanation of a refusal (StreamDone with
	// FinishReason "refusal"), when it sent one apart from the text.
	Refusal string
	Err     *ProviderError
	State   []byte
}

// ProviderErrorCategory classifies provider failures (PRV-12). Only
// context_overflow may trigger compaction.
type ProviderErrorCategory string

// Provider error categories.
const (
	ProviderContextOverflow ProviderErrorCategory = "context_overflow"
	ProviderRateLimit       ProviderErrorCategory = "rate_limit"
	ProviderQuota           ProviderErrorCategory = "quota"
	ProviderThrottling      ProviderErrorCategory = "throttling"
	ProviderOutputLimit     ProviderErrorCategory = "output_limit"
	ProviderAuth            ProviderErrorCategory = "auth"
	ProviderNetwork         ProviderErrorCategory = "network"
	ProviderBadRequest      ProviderErrorCategory = "bad_request"
	ProviderServer          ProviderErrorCategory = "server"
	ProviderUnavailable     ProviderErrorCategory = "unavailable"
	// ProviderBadResponse: the service sent a well-formed answer the
	// provider could not understand; deterministic, so never retried.
	ProviderBadResponse ProviderErrorCategory = "bad_response"
)

// ProviderError is a classified provider failure.
type ProviderError struct {
	Category   ProviderErrorCategory
	Message    string
	StatusCode int
	RetryAfter time.Duration
}

func (e *ProviderError) Error() string {
	return fmt.Sprintf("%s: %s", e.Category, e.Message)
}

// ProviderCapability is an optional provider feature (PRV-7). The runtime
// checks for it and never assumes it.
type ProviderCapability string

// Optional provider capabilities.
const (
	CapModelLister        ProviderCapability = "model_lister"
	CapCapabilityResolver ProviderCapability = "capability_resolver"
	CapCompleter          ProviderCapability = "completer"
	CapDetailedCompleter  ProviderCapability = "detailed_completer"
	CapWebSearch          ProviderCapability = "web_search"
	CapNativeCompactor    ProviderCapability = "native_compactor"
	CapImageGenerator     ProviderCapability = "image_generator"
	CapVideoGenerator     ProviderCapability = "video_generator"
)

// ProviderStream yields stream events until Recv returns io.EOF.
type ProviderStream interface {
	Recv() (StreamEvent, error)
	Close() error
}

// Completion is the result of a non-streaming completion.
type Completion struct {
	Text         string
	FinishReason string
	Usage        *Usage
	// State is provider-native state, set by a native compactor: it stands
	// for the compacted history in later requests on the same route.
	State []byte
}

// Provider turns kernel requests into one service's protocol (PRV-6). Methods
// of optional capabilities the provider does not declare return an error
// matching ErrUnavailable.
type Provider interface {
	Kind() string
	Capabilities() []ProviderCapability
	Stream(ctx context.Context, ep Endpoint, req ProviderRequest) (ProviderStream, error)
	Complete(ctx context.Context, ep Endpoint, req ProviderRequest) (Completion, error)
	ListModels(ctx context.Context, ep Endpoint) ([]Model, error)
}

// DetailedCompleter is the detailed completer capability (PRV-7): finish
// reason and usage are always filled when the service reports them.
type DetailedCompleter interface {
	CompleteDetailed(ctx context.Context, ep Endpoint, req ProviderRequest) (Completion, error)
}

// CapabilityResolver resolves what one model can do (PRV-4, PRV-7).
type CapabilityResolver interface {
	ResolveCapabilities(ctx context.Context, ep Endpoint, model string) (Capabilities, error)
}

// WebSearchRequest asks a provider's native web search (PRV-8).
type WebSearchRequest struct {
	Model string
	Query string
}

// WebSource is one source a web search answer cites.
type WebSource struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// WebSearchResult is the answer of a native web search.
type WebSearchResult struct {
	Text    string
	Sources []WebSource
	Usage   *Usage
}

// WebSearcher is the native web search capability (PRV-7, PRV-8). Callers
// fall back to a configured external search when it is unavailable.
type WebSearcher interface {
	WebSearch(ctx context.Context, ep Endpoint, req WebSearchRequest) (WebSearchResult, error)
}

// HasCapability reports whether p declares capability c.
func HasCapability(p Provider, c ProviderCapability) bool {
	return slices.Contains(p.Capabilities(), c)
}

// ContextUsage is what a session's next request is estimated to take.
type ContextUsage struct {
	Tokens int64
	Limit  int64
	// Estimated is true when no real provider usage anchors the figure.
	Estimated bool
}
