package core

import (
	"context"
	"time"
)

// MCPNeedsAuth is the state of an HTTP MCP server that answered 401 and
// waits for a person to sign in (MCPServerState.AuthURL) or whose tokens
// could no longer be refreshed (MCPServerState.Error says why).
const MCPNeedsAuth MCPStatus = "needs_auth"

// KernelMCPNeedsAuth is the kernel event of a server entering
// MCPNeedsAuth; its McpServerID names the server.
const KernelMCPNeedsAuth KernelEventType = "mcp_needs_auth"

// MCPOAuthGrant is what the kernel keeps of one MCP server's OAuth
// sign-in: the client it used (registered dynamically or configured), the
// endpoints it learnt, and the tokens. Every field is stored sealed; none
// is ever shown, logged, put in an event or given to a process.
type MCPOAuthGrant struct {
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret,omitempty"`
	// ClientAuth is how the client authenticates at the token endpoint:
	// "none", "client_secret_basic" or "client_secret_post".
	ClientAuth         string    `json:"clientAuth,omitempty"`
	Issuer             string    `json:"issuer"`
	TokenEndpoint      string    `json:"tokenEndpoint"`
	RevocationEndpoint string    `json:"revocationEndpoint,omitempty"`
	Resource           string    `json:"resource"`
	Scope              string    `json:"scope,omitempty"`
	AccessToken        string    `json:"accessToken"`
	RefreshToken       string    `json:"refreshToken,omitempty"`
	Expiry             time.Time `json:"expiry,omitzero"`
	// Obtained is when the access token was issued to the kernel.
	Obtained time.Time `json:"obtained,omitzero"`
}

// MCPAuthStore keeps the OAuth grants of MCP servers, sealed at rest.
type MCPAuthStore interface {
	// LoadMCPAuth returns a server's grant; ok is false when there is none.
	LoadMCPAuth(ctx context.Context, serverID string) (g MCPOAuthGrant, ok bool, err error)
	// SaveMCPAuth replaces a server's grant.
	SaveMCPAuth(ctx context.Context, serverID string, g MCPOAuthGrant) error
	// UpdateMCPAuth reads the grant, calls fn and stores what it returns,
	// holding a lock on the grant meanwhile (one transaction; on
	// PostgreSQL a row lock, so that kernels sharing the database refresh
	// one at a time and never both spend a rotating refresh token). fn may
	// do network I/O; when it fails nothing is written. Without a stored
	// grant fn gets ok false.
	UpdateMCPAuth(ctx context.Context, serverID string, fn func(cur MCPOAuthGrant, ok bool) (MCPOAuthGrant, error)) (MCPOAuthGrant, error)
	// DeleteMCPAuth forgets a server's grant (no error when there is none).
	DeleteMCPAuth(ctx context.Context, serverID string) error
}

// MCPAuthRuntime is the sign-in side of an MCP runtime.
type MCPAuthRuntime interface {
	// Login returns the URL a person opens to sign in to an HTTP server
	// that needs it (CONFLICT when it does not).
	Login(ctx context.Context, id string) (authURL string, err error)
	// Logout revokes the server's tokens where the authorization server
	// offers revocation, forgets them and reconnects the server (which
	// then needs a sign-in again).
	Logout(ctx context.Context, id string) error
	// CompleteLogin finishes a sign-in from the authorization server's
	// redirect: state names the pending login (single use, bounded life),
	// code is exchanged with its PKCE verifier. It returns the server's
	// name.
	CompleteLogin(ctx context.Context, state, code, iss string) (name string, err error)
}

// MCPClientMetadataPath is where a kernel serves its OAuth client ID
// metadata document (draft-ietf-oauth-client-id-metadata-document), when
// it has one (--mcp-client-metadata-url): the document to host at that
// URL.
const MCPClientMetadataPath = "/mcp/oauth/client-metadata.json"
