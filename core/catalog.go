package core

import (
	"context"
	"net"
	"net/url"
	"strings"
)

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
	// PurposeGuardian reviews the approval requests of GUARDED sessions; it
	// falls back to the fast default, then to the session's own model.
	PurposeGuardian ModelPurpose = "guardian"
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
	// Fallbacks is the fallback chain per purpose (setFallbackModels): the
	// models a failed call continues on, in order (docs/fallback.md).
	Fallbacks map[ModelPurpose][]ModelRef `json:"fallbacks,omitempty"`
	Guardian  *ModelRef                   `json:"guardian,omitempty"`
}

// CatalogData is everything the model catalog persists: the connections
// (with their API keys) and the default models.
type CatalogData struct {
	Connections []Connection
	Defaults    DefaultModels
}

// CatalogStore persists the catalog (PRV-14). Load of a store that holds
// nothing yet returns an empty CatalogData. Save replaces everything
// atomically: after a crash either the old or the new catalog is read back,
// never a mix. Implementations keep the API keys away from anything but
// their own private files.
type CatalogStore interface {
	Load(ctx context.Context) (CatalogData, error)
	Save(ctx context.Context, data CatalogData) error
}

// URLOrigin is the origin of an http(s) URL: lowercase scheme and host and
// the port, the scheme's default when the URL gives none
// ("https://api.example.com:443"). A URL that does not parse is its own
// origin (compared as written).
func URLOrigin(raw string) string {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// ProviderLookup finds the provider runtime of a provider kind ("openai").
// It returns an error for a kind nobody serves. The Catalog may call it while
// holding its lock, so it must not call back into the Catalog.
type ProviderLookup interface {
	Provider(kind string) (Provider, error)
}

// CatalogChangeKind says what kind of catalog mutation happened.
type CatalogChangeKind string

// CatalogChange describes one committed catalog mutation, so that the caller
// can unbind sessions (PRV-13), rebuild provider clients and broadcast
// catalog_updated.
type CatalogChange struct {
	Kind CatalogChangeKind
	// ConnectionID is the connection the mutation was about; empty for
	// reorder and defaults changes.
	ConnectionID string
	// DeletedConnectionIDs lists connections that no longer exist. Sessions
	// bound to them must be unbound.
	DeletedConnectionIDs []string
	// RemovedModels lists (connection, model) pairs of surviving connections
	// that sessions can no longer use: the model left the connection's model
	// list, or the connection stopped being a language connection (then all
	// of its models are listed). A connection that lists no models accepts
	// any model name, so emptying a list removes nothing.
	RemovedModels []ModelRef
	// ClearedDefaults lists the default model purposes the mutation cleared,
	// explicitly or because their target went away (PRV-5).
	ClearedDefaults []ModelPurpose
}

// ConnectionInput creates or updates a connection; it mirrors the GraphQL
// ConnectionInput.
//
// On create, empty fields take defaults: Type "language", ProviderKind
// "openai", AuthKind "api_key"; a nil APIKey means no key (allowed for local
// endpoints), nil Models an empty model list, nil Order the end of the list.
//
// On update, the input is a patch: empty strings keep the stored values,
// a nil APIKey keeps the stored key and "" clears it, a nil Models keeps the
// stored models while an empty non-nil slice clears them, and a nil Order
// keeps the position. When the type changes away from video the stored
// video protocol is dropped.
//
// APIKey may be "env:NAME" to read the key from the kernel's environment at
// call time. Order is a position in the list (0 = first); values past the
// end move the connection last.
type ConnectionInput struct {
	Name          string
	Type          ConnectionType
	ProviderKind  string
	BaseURL       string
	AuthKind      AuthKind
	APIKey        *string
	Models        []Model
	Order         *int
	VideoProtocol string
	// Options replaces the provider options; nil keeps them on update.
	Options map[string]string
}
