package core

import ()

// ConnectionType says what a connection is used for (PRV-2).
type ConnectionType string

// Connection types. Only language connections serve chat sessions.
const (
	ConnLanguage ConnectionType = "language"
	ConnImage    ConnectionType = "image"
	ConnVideo    ConnectionType = "video"
)

// AuthKind is how a connection authenticates (PRV-3); only api_key today.
type AuthKind string

// Auth kinds.
const AuthAPIKey AuthKind = "api_key"

// Generation flags of a model (PRV-4). Nil means unknown.
type Generation struct {
	Image *bool `json:"image,omitempty"`
	Video *bool `json:"video,omitempty"`
	Audio *bool `json:"audio,omitempty"`
}

// Capabilities are what a model can do (PRV-4). Every field is optional:
// nil means unknown, never unsupported.
type Capabilities struct {
	ContextWindow    *int64      `json:"contextWindow,omitempty"`
	MaxInputTokens   *int64      `json:"maxInputTokens,omitempty"`
	MaxOutputTokens  *int64      `json:"maxOutputTokens,omitempty"`
	ImageInput       *bool       `json:"imageInput,omitempty"`
	ToolCalling      *bool       `json:"toolCalling,omitempty"`
	ReasoningEfforts []string    `json:"reasoningEfforts,omitempty"`
	WebSearch        *bool       `json:"webSearch,omitempty"`
	Generation       *Generation `json:"generation,omitempty"`
	// Prices are the user's per-model prices; nil: unknown (no cost figures).
	Prices *ModelPrices `json:"prices,omitempty"`
}

// Model is one model a connection offers.
type Model struct {
	ID           string       `json:"id"`
	Capabilities Capabilities `json:"capabilities"`
}

// Connection is one user-configured account or endpoint (PRV-3). APIKey is
// secret: it never leaves the kernel except towards the connection's own
// endpoint. It is excluded from JSON (storage keeps it in its own row type)
// and String/LogValue redact it, so a Connection printed, logged or
// marshalled by accident never shows the key. APIKey may be a literal key or
// a reference "env:NAME" resolved from the kernel's environment at call time
// (see Catalog.Endpoint).
type Connection struct {
	ID            string         `json:"id"`
	Name          string         `json:"name"`
	Type          ConnectionType `json:"type"`
	ProviderKind  string         `json:"providerKind"`
	BaseURL       string         `json:"baseUrl"`
	AuthKind      AuthKind       `json:"authKind"`
	APIKey        string         `json:"-"`
	VideoProtocol string         `json:"videoProtocol,omitempty"`
	Models        []Model        `json:"models"`
	Order         int            `json:"order"`
	// Options are provider-specific extension settings (PRV-15), e.g. for the
	// OpenAI-compatible provider "web_search": "responses" or
	// "max_tokens_field": "max_tokens". They reach the provider with every call.
	Options map[string]string `json:"options,omitempty"`
}

// ModelPurpose names a default model slot (PRV-5).
type ModelPurpose string

// Model purposes.
const (
	PurposeLanguage ModelPurpose = "language"
	PurposeFast     ModelPurpose = "fast"
	PurposeImage    ModelPurpose = "image"
	PurposeVideo    ModelPurpose = "video"
)

// ModelRef points at one model of one connection.
type ModelRef struct {
	ConnectionID string `json:"connectionId"`
	Model        string `json:"model"`
}

// DefaultModels holds the default model per purpose; nil means none.
type DefaultModels struct {
	Language *ModelRef `json:"language,omitempty"`
	Fast     *ModelRef `json:"fast,omitempty"`
	Image    *ModelRef `json:"image,omitempty"`
	Video    *ModelRef `json:"video,omitempty"`
}
