package core

import (
	"context"
	"slices"
)

// MCPTransport is how the kernel reaches an MCP server.
type MCPTransport string

// MCP transports.
const (
	// MCPStdio runs the server as a child process of the kernel and speaks
	// JSON-RPC over its stdin and stdout.
	MCPStdio MCPTransport = "stdio"
	// MCPHTTP speaks Streamable HTTP to a URL.
	MCPHTTP MCPTransport = "http"
)

// MCPStatus is the connection state of an MCP server.
type MCPStatus string

// MCP server states.
const (
	MCPStarting MCPStatus = "starting"
	MCPReady    MCPStatus = "ready"
	MCPFailed   MCPStatus = "failed"
	MCPDisabled MCPStatus = "disabled"
)

// DefaultMCPTimeout is the per-call timeout, in seconds, of a server that
// sets none.
const DefaultMCPTimeout = 60

// MaxMCPTimeout bounds timeoutSeconds.
const MaxMCPTimeout = 3600

// MaxSessionMCPServers bounds the servers attached to one session: each is
// a process or connection the kernel keeps while the session lives.
const MaxSessionMCPServers = 16

// MaxMCPServers bounds the kernel-wide MCP servers (stored, enabled or
// not): each enabled one is a process or connection the kernel keeps.
const MaxMCPServers = 64

// KeyValue is one environment variable or HTTP header. Values of MCP
// servers are secrets: they are stored, never shown.
type KeyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// MCPServerConfig is one configured MCP server, secrets included. It lives
// only in the MCP store and the MCP runtime; everything shown is an
// MCPServer.
type MCPServerConfig struct {
	ID        string       `json:"id"`
	Name      string       `json:"name"`
	Transport MCPTransport `json:"transport"`
	Command   string       `json:"command,omitempty"`
	Args      []string     `json:"args,omitempty"`
	Env       []KeyValue   `json:"env,omitempty"`
	URL       string       `json:"url,omitempty"`
	Headers   []KeyValue   `json:"headers,omitempty"`
	Enabled   bool         `json:"enabled"`
	// TimeoutSeconds bounds one tool call; 0 means DefaultMCPTimeout.
	TimeoutSeconds int `json:"timeoutSeconds,omitempty"`
	// SessionID is set for a server attached to one session only
	// (AttachSession): its tools are offered in that session and its
	// sub-agent sessions, and it is never stored.
	SessionID string `json:"sessionId,omitempty"`
	// OAuthClientID and OAuthClientSecret are a client registered by hand
	// with the server's authorization server (HTTP only); without them
	// the kernel registers itself dynamically (RFC 7591). The secret is
	// write-only.
	OAuthClientID     string `json:"oauthClientId,omitempty"`
	OAuthClientSecret string `json:"oauthClientSecret,omitempty"`
}

// CallTimeoutSeconds is the effective per-call timeout.
func (c MCPServerConfig) CallTimeoutSeconds() int {
	if c.TimeoutSeconds <= 0 {
		return DefaultMCPTimeout
	}
	return c.TimeoutSeconds
}

// Clone returns a copy of c that shares no slice with it.
func (c MCPServerConfig) Clone() MCPServerConfig {
	c.Args = slices.Clone(c.Args)
	c.Env = slices.Clone(c.Env)
	c.Headers = slices.Clone(c.Headers)
	return c
}

// MCPToolState is one tool a server offers, as listed by the server.
type MCPToolState struct {
	Name        string
	Description string
	// ReadOnly is the tool's readOnlyHint annotation.
	ReadOnly bool
}

// MCPServerState is what the runtime knows about a running server.
type MCPServerState struct {
	Status MCPStatus
	// Error says why the server failed, or why the last attempt did while
	// it is starting again.
	Error string
	// AuthURL is set while the server is MCPNeedsAuth and a sign-in is
	// pending: the authorization server's page a person opens.
	AuthURL         string
	ProtocolVersion string
	Tools           []MCPToolState
	// Prompts, Resources and ResourceTemplates are what the server lists
	// (refreshed on its list_changed notifications); empty when it offers
	// none.
	Prompts           []MCPPromptState
	Resources         []MCPResourceState
	ResourceTemplates []MCPResourceTemplateState
}

// MCPServer is the public view of a server: its configuration without
// secret values (only the names of env variables and headers) and its
// state.
type MCPServer struct {
	ID             string
	Name           string
	Transport      MCPTransport
	Command        string
	Args           []string
	URL            string
	EnvKeys        []string
	HeaderKeys     []string
	Enabled        bool
	TimeoutSeconds int
	// SessionID is the session a session-scoped server is attached to.
	SessionID string
	// OAuthClientID is the configured OAuth client id ("" when the kernel
	// registers itself); OAuthClientSecretSet says whether a secret is
	// configured (it is never shown).
	OAuthClientID        string
	OAuthClientSecretSet bool
	MCPServerState
}

// MCPServerInput creates or updates an MCP server; it mirrors the GraphQL
// McpServerInput. On update, nil fields keep the stored values (Env and
// Headers included: their values cannot be read back, so leaving them out
// keeps them, and a given list replaces them whole).
type MCPServerInput struct {
	Name           string
	Transport      MCPTransport
	Command        *string
	Args           []string
	Env            []KeyValue
	URL            *string
	Headers        []KeyValue
	Enabled        *bool
	TimeoutSeconds *int
	// OAuthClientID and OAuthClientSecret configure an OAuth client (HTTP
	// only); on update nil keeps the stored value and "" clears it.
	OAuthClientID     *string
	OAuthClientSecret *string
}

// MCPStore persists the MCP servers, secrets included. Load of an empty
// store returns nil; Save replaces everything atomically.
type MCPStore interface {
	Load(ctx context.Context) ([]MCPServerConfig, error)
	Save(ctx context.Context, servers []MCPServerConfig) error
}

// MCPRuntime connects to MCP servers and reports their state. Apply makes
// the running set match servers (starting new and enabled ones, stopping
// removed and disabled ones, restarting changed ones); it must not block on
// a server coming up. It must not call back into the mcp.Service
// synchronously.
type MCPRuntime interface {
	Apply(ctx context.Context, servers []MCPServerConfig)
	// Restart stops and starts one server again, clearing a FAILED state.
	Restart(ctx context.Context, id string) error
	// State returns the server's state; an unknown id is STARTING.
	State(id string) MCPServerState
	// SetSessionDisabled sets the servers whose tools are not offered in a
	// session and the sub-agent sessions below it (nil: none).
	SetSessionDisabled(sessionID string, serverIDs []string)
}

type toolScopeKey struct{}

// WithToolScope tells tool runners which sessions a tool listing or call
// is for: the session first, then its ancestors (a sub-agent session sees
// the MCP servers attached to the sessions that spawned it).
func WithToolScope(ctx context.Context, sessionIDs []string) context.Context {
	return context.WithValue(ctx, toolScopeKey{}, slices.Clone(sessionIDs))
}

// ToolScope returns the sessions set by WithToolScope (nil: none, only
// kernel-wide tools).
func ToolScope(ctx context.Context) []string {
	ids, _ := ctx.Value(toolScopeKey{}).([]string)
	return ids
}
