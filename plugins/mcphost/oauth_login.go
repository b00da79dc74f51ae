package mcphost

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/foya-dev/foya/core"
)

const (
	// LoginTTL bounds a pending sign-in: its state is refused after it.
	LoginTTL = 10 * time.Minute
	// oauthTimeout bounds one request to an authorization server.
	oauthTimeout = 30 * time.Second
)

// pendingLogin is one sign-in between its authUrl and the callback: the
// PKCE verifier and what the code exchange needs. It never leaves the
// kernel's memory.
type pendingLogin struct {
	serverID string
	name     string
	authURL  string
	verifier string
	redirect string
	grant    core.MCPOAuthGrant // client, endpoints and resource; no token yet
	expires  time.Time
}

// oauthClient is the HTTP client of requests to authorization servers.
func (m *Manager) oauthClient() *http.Client {
	if m.cfg.OAuthHTTPClient != nil {
		return m.cfg.OAuthHTTPClient
	}
	return &http.Client{Timeout: oauthTimeout}
}

// callbackURL waits (briefly: the kernel starts its servers before it
// listens) for the kernel's callback URL.
func (m *Manager) callbackURL(ctx context.Context) string {
	if m.cfg.CallbackURL == nil {
		return ""
	}
	for range 50 {
		if u := m.cfg.CallbackURL(); u != "" {
			return u
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(100 * time.Millisecond):
		}
	}
	return ""
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// beginLogin discovers how to sign in to the server that answered resp
// (RFC 9728 protected-resource metadata named by WWW-Authenticate or at
// its well-known place, then the authorization server's RFC 8414 or
// OpenID metadata), gets a client (configured, or registered per RFC
// 7591), and records a pending login with a PKCE S256 verifier; it
// returns the authorization URL, which carries the resource indicator.
//
// A server with a pending login that has half its life left gets that
// login's URL again instead: one connection attempt meets several 401s
// (the SDK's requests of one connect, a reconnect), and a new sign-in for
// each would void the URL a user or an ACP client had already opened.
// scope, when set, is the scope to ask for (a step-up), instead of the one
// discovered; only a pending login for that scope is used again.
func (m *Manager) beginLogin(ctx context.Context, s *server, resp *http.Response, scope string) (string, error) {
	redirect := m.callbackURL(ctx)
	if redirect == "" {
		return "", errors.New("the kernel's callback URL is not known")
	}
	m.mu.Lock()
	again := m.pendingAuthURL(s.cfg.ID, redirect, scope, time.Now())
	m.mu.Unlock()
	if again != "" {
		return again, nil
	}
	hc := m.oauthClient()
	issuer, resource, discovered := discoverIssuer(ctx, s, resp, hc)
	want := scope
	if scope == "" {
		scope = discovered
	}
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, hc)
	if err != nil {
		return "", fmt.Errorf("authorization server metadata of %s: %w", issuer, err)
	}
	if asm == nil {
		return "", fmt.Errorf("authorization server %s publishes no metadata (RFC 8414 or OpenID discovery)", issuer)
	}
	g := core.MCPOAuthGrant{
		Issuer: asm.Issuer, TokenEndpoint: asm.TokenEndpoint, RevocationEndpoint: asm.RevocationEndpoint,
		Resource: resource, Scope: scope,
	}
	if err := m.oauthClientFor(ctx, &g, asm, s.cfg, redirect, hc); err != nil {
		return "", err
	}
	if err := checkOAuthURL(g.TokenEndpoint); err != nil {
		return "", fmt.Errorf("token endpoint: %w", err)
	}
	verifier := oauth2.GenerateVerifier()
	state := randomToken()
	oc := oauth2.Config{ClientID: g.ClientID, Endpoint: oauth2.Endpoint{AuthURL: asm.AuthorizationEndpoint}, RedirectURL: redirect}
	if scope != "" {
		oc.Scopes = strings.Fields(scope)
	}
	authURL := oc.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	m.mu.Lock()
	now := time.Now()
	if again := m.pendingAuthURL(s.cfg.ID, redirect, want, now); again != "" {
		// Another 401 of the same attempt began one meanwhile.
		m.mu.Unlock()
		return again, nil
	}
	for k, p := range m.pending {
		// One pending login per server (the newest), none past its life.
		if p.serverID == s.cfg.ID || now.After(p.expires) {
			delete(m.pending, k)
		}
	}
	m.pending[state] = &pendingLogin{serverID: s.cfg.ID, name: s.cfg.Name, authURL: authURL, verifier: verifier, redirect: redirect, grant: g, expires: now.Add(LoginTTL)}
	m.mu.Unlock()
	s.log.Info("mcp oauth sign-in needed", "issuer", asm.Issuer)
	return authURL, nil
}

// pendingAuthURL is the authorization URL of the server's pending login
// if it has at least half of LoginTTL left at now, comes back to redirect
// and asks for scope (any, when scope is ""), else "". The caller holds
// m.mu.
func (m *Manager) pendingAuthURL(serverID, redirect, scope string, now time.Time) string {
	for _, p := range m.pending {
		if p.serverID == serverID && p.redirect == redirect && p.expires.Sub(now) >= LoginTTL/2 && (scope == "" || p.grant.Scope == scope) {
			return p.authURL
		}
	}
	return ""
}

// discoverIssuer finds the authorization server for a server that
// answered 401 (resp): from its WWW-Authenticate challenge and its
// protected-resource metadata (RFC 9728), else the server's origin. It
// returns the issuer, the resource to ask a token for and the scope.
func discoverIssuer(ctx context.Context, s *server, resp *http.Response, hc *http.Client) (issuer, resource, scope string) {
	var metaURL string
	if chs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate")); err == nil {
		for _, ch := range chs {
			if ch.Scheme == "bearer" {
				metaURL, scope = ch.Params["resource_metadata"], ch.Params["scope"]
			}
		}
	}
	resource = s.cfg.URL
	var prm *oauthex.ProtectedResourceMetadata
	var perr error
	for _, u := range protectedResourceURLs(metaURL, s.cfg.URL) {
		if prm, perr = oauthex.GetProtectedResourceMetadata(ctx, u, s.cfg.URL, hc); prm != nil {
			break
		}
	}
	if prm != nil {
		resource = prm.Resource
		if len(prm.AuthorizationServers) > 0 {
			issuer = prm.AuthorizationServers[0]
		}
		if scope == "" && len(prm.ScopesSupported) > 0 {
			scope = strings.Join(prm.ScopesSupported, " ")
		}
	}
	if issuer == "" {
		if perr != nil {
			s.log.Info("no protected-resource metadata; trying the server's origin as authorization server", "err", s.scrub(perr.Error()))
		}
		issuer = core.URLOrigin(s.cfg.URL) // the 2025-03-26 fallback
	}
	return issuer, resource, scope
}

// oauthClientFor fills g's client, in the order of the MCP authorization
// specification: the one configured on the server; else the kernel's
// client ID metadata document (its URL is the client_id) when the
// authorization server takes such documents; else one registered with it
// (RFC 7591).
func (m *Manager) oauthClientFor(ctx context.Context, g *core.MCPOAuthGrant, asm *oauthex.AuthServerMeta, cfg core.MCPServerConfig, redirect string, hc *http.Client) error {
	cimd := m.cfg.ClientMetadataURL
	switch {
	case cfg.OAuthClientID != "":
		g.ClientID, g.ClientSecret = cfg.OAuthClientID, cfg.OAuthClientSecret
		g.ClientAuth = "none"
		if g.ClientSecret != "" {
			g.ClientAuth = "client_secret_basic"
			if slices.Contains(asm.TokenEndpointAuthMethodsSupported, "client_secret_post") && !slices.Contains(asm.TokenEndpointAuthMethodsSupported, "client_secret_basic") {
				g.ClientAuth = "client_secret_post"
			}
		}
	case cimd != "" && asm.ClientIDMetadataDocumentSupported:
		if err := m.checkClientMetadata(ctx, cimd, redirect, hc); err != nil {
			return err
		}
		g.ClientID, g.ClientAuth = cimd, "none"
	case asm.RegistrationEndpoint != "":
		reg, err := oauthex.RegisterClient(ctx, asm.RegistrationEndpoint, &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: "none",
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
			ClientName: "Foya", SoftwareID: "foya", SoftwareVersion: m.cfg.Version, Scope: g.Scope,
		}, hc)
		if err != nil {
			return fmt.Errorf("register a client with %s (RFC 7591): %w", asm.Issuer, err)
		}
		g.ClientID, g.ClientSecret = reg.ClientID, reg.ClientSecret
		g.ClientAuth = "none"
		if g.ClientSecret != "" {
			g.ClientAuth = "client_secret_basic"
			if reg.TokenEndpointAuthMethod == "client_secret_post" {
				g.ClientAuth = "client_secret_post"
			}
		}
	case asm.ClientIDMetadataDocumentSupported:
		return fmt.Errorf("authorization server %s takes client ID metadata documents and offers no dynamic client registration: start the kernel with --mcp-client-metadata-url URL and host its document (GET %s on the kernel) at that https URL, or register a client there and set oauthClientId on the server", asm.Issuer, core.MCPClientMetadataPath)
	default:
		return fmt.Errorf("authorization server %s offers no dynamic client registration: register a client there and set oauthClientId (and oauthClientSecret) on the server", asm.Issuer)
	}
	return nil
}

// protectedResourceURLs are the places of the protected-resource metadata:
// the one WWW-Authenticate names, else the well-known URIs of RFC 9728
// (path-aware first, then the root).
func protectedResourceURLs(named, server string) []string {
	if named != "" {
		return []string{named}
	}
	u, err := url.Parse(server)
	if err != nil {
		return nil
	}
	var out []string
	if p := strings.TrimRight(u.Path, "/"); p != "" {
		out = append(out, core.URLOrigin(server)+"/.well-known/oauth-protected-resource"+p)
	}
	return append(out, core.URLOrigin(server)+"/.well-known/oauth-protected-resource")
}

// checkOAuthURL allows https, and http to loopback hosts only.
func checkOAuthURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme == "https" {
		return nil
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); u.Scheme == "http" && (host == "localhost" || (ip != nil && ip.IsLoopback())) {
		return nil
	}
	return fmt.Errorf("%s: https required (http only to loopback)", core.RedactURL(raw))
}

// transientError is a token endpoint failure worth trying again (the
// network, a 5xx or 429), unlike an OAuth error such as invalid_grant.
type transientError struct{ error }

func (e transientError) Unwrap() error { return e.error }

// tokenResponse is an RFC 6749 token endpoint answer.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
	Error        string `json:"error"`
	ErrorDesc    string `json:"error_description"`
}

// apply returns g with the new tokens; a refresh answer without a
// refresh token keeps the old one (no rotation).
func (t tokenResponse) apply(g core.MCPOAuthGrant, now time.Time) core.MCPOAuthGrant {
	g.AccessToken, g.Obtained, g.Expiry = t.AccessToken, now, time.Time{}
	if t.ExpiresIn > 0 {
		g.Expiry = now.Add(time.Duration(t.ExpiresIn) * time.Second)
	}
	if t.RefreshToken != "" {
		g.RefreshToken = t.RefreshToken
	}
	if t.Scope != "" {
		g.Scope = t.Scope
	}
	return g
}

// tokenRequest posts to g's token endpoint with the client's
// authentication. Error messages name the OAuth error, never a token.
func (m *Manager) tokenRequest(ctx context.Context, g core.MCPOAuthGrant, params map[string]string) (tokenResponse, error) {
	if err := checkOAuthURL(g.TokenEndpoint); err != nil {
		return tokenResponse{}, err
	}
	form := url.Values{}
	for k, v := range params {
		if v != "" {
			form.Set(k, v)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.TokenEndpoint, nil)
	if err != nil {
		return tokenResponse{}, err
	}
	switch g.ClientAuth {
	case "client_secret_basic":
		req.SetBasicAuth(url.QueryEscape(g.ClientID), url.QueryEscape(g.ClientSecret))
	case "client_secret_post":
		form.Set("client_id", g.ClientID)
		form.Set("client_secret", g.ClientSecret)
	default:
		form.Set("client_id", g.ClientID)
	}
	body := form.Encode()
	req.Body = io.NopCloser(strings.NewReader(body))
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := m.oauthClient().Do(req)
	if err != nil {
		return tokenResponse{}, transientError{fmt.Errorf("token endpoint: %w", err)}
	}
	defer resp.Body.Close()
	var tr tokenResponse
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return tokenResponse{}, fmt.Errorf("token endpoint: %w", err)
	}
	if jerr := json.Unmarshal(raw, &tr); jerr != nil && resp.StatusCode == http.StatusOK {
		return tokenResponse{}, fmt.Errorf("token endpoint: answer is not JSON: %w", jerr)
	}
	if resp.StatusCode != http.StatusOK || tr.Error != "" {
		msg := fmt.Sprintf("token endpoint answered %s", resp.Status)
		if tr.Error != "" {
			msg += ": " + core.Clip(tr.Error+" "+tr.ErrorDesc, 200)
		}
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
			return tokenResponse{}, transientError{errors.New(msg)}
		}
		return tokenResponse{}, errors.New(msg)
	}
	if tr.AccessToken == "" {
		return tokenResponse{}, errors.New("token endpoint gave no access_token")
	}
	if tt := strings.ToLower(tr.TokenType); tt != "" && tt != "bearer" {
		return tokenResponse{}, fmt.Errorf("token endpoint gave a %q token; only Bearer is supported", tr.TokenType)
	}
	return tr, nil
}

// Login implements core.MCPAuthRuntime: the pending authUrl of a server
// in NEEDS_AUTH (waiting a little for one that is still starting).
func (m *Manager) Login(ctx context.Context, id string) (string, error) {
	m.mu.Lock()
	s := m.servers[id]
	m.mu.Unlock()
	if s == nil {
		return "", core.Errorf(core.CodeConflict, "MCP server %s is not running", id)
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		s.mu.Lock()
		st, ch := s.state, s.changed
		s.mu.Unlock()
		switch st.Status {
		case core.MCPNeedsAuth:
			if st.AuthURL == "" {
				return "", core.Errorf(core.CodeUnavailable, "MCP server %q needs a sign-in but none could be started: %s", s.cfg.Name, st.Error)
			}
			return st.AuthURL, nil
		case core.MCPReady:
			return "", core.Errorf(core.CodeConflict, "MCP server %q is connected and needs no sign-in (sign out first with logoutMcpServer to sign in again)", s.cfg.Name)
		case core.MCPFailed:
			return "", core.Errorf(core.CodeConflict, "MCP server %q failed: %s (restart it with restartMcpServer)", s.cfg.Name, st.Error)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return "", core.Errorf(core.CodeUnavailable, "MCP server %q is still starting; try again", s.cfg.Name)
		}
	}
}

// CompleteLogin implements core.MCPAuthRuntime: the callback's state names
// a pending login (removed at once: single use), the code is exchanged
// with its PKCE verifier and the resource indicator, the grant is stored
// sealed and the server reconnects.
func (m *Manager) CompleteLogin(ctx context.Context, state, code, iss string) (string, error) {
	m.mu.Lock()
	p := m.pending[state]
	delete(m.pending, state)
	m.mu.Unlock()
	if p == nil || state == "" {
		return "", core.Errorf(core.CodeBadInput, "unknown or already used sign-in state; start the sign-in again (foya mcp login NAME)")
	}
	if time.Now().After(p.expires) {
		return "", core.Errorf(core.CodeBadInput, "this sign-in expired (they last %s); start it again (foya mcp login %s)", LoginTTL, p.name)
	}
	if iss != "" && iss != p.grant.Issuer {
		return "", core.Errorf(core.CodeBadInput, "the sign-in came back from issuer %q, not %q (RFC 9207); refused", core.Clip(iss, 200), p.grant.Issuer)
	}
	if code == "" {
		return "", core.Errorf(core.CodeBadInput, "the authorization server sent no code")
	}
	tok, err := m.tokenRequest(ctx, p.grant, map[string]string{
		"grant_type": "authorization_code", "code": code, "redirect_uri": p.redirect,
		"code_verifier": p.verifier, "resource": p.grant.Resource,
	})
	if err != nil {
		return "", core.Errorf(core.CodeProviderError, "MCP server %q: code exchange failed: %s", p.name, err.Error())
	}
	g := tok.apply(p.grant, time.Now())
	if err := m.cfg.Auth.SaveMCPAuth(ctx, p.serverID, g); err != nil {
		return "", err
	}
	m.log.Info("mcp oauth sign-in completed", "mcp_server", p.name, "mcp_server_id", p.serverID)
	m.mu.Lock()
	s := m.servers[p.serverID]
	m.mu.Unlock()
	if s != nil {
		select {
		case s.authed <- struct{}{}:
		default:
		}
	}
	return p.name, nil
}

// Logout implements core.MCPAuthRuntime: revoke (RFC 7009) where offered,
// forget, reconnect.
func (m *Manager) Logout(ctx context.Context, id string) error {
	g, ok, err := m.cfg.Auth.LoadMCPAuth(ctx, id)
	if err != nil {
		return err
	}
	if ok && g.RevocationEndpoint != "" && checkOAuthURL(g.RevocationEndpoint) == nil {
		for _, t := range []struct{ tok, hint string }{{g.RefreshToken, "refresh_token"}, {g.AccessToken, "access_token"}} {
			if t.tok == "" {
				continue
			}
			if err := m.revoke(ctx, g, t.tok, t.hint); err != nil {
				m.log.Warn("mcp oauth revocation failed; the tokens are forgotten anyway", "mcp_server_id", id, "err", err)
			}
		}
	}
	if err := m.cfg.Auth.DeleteMCPAuth(ctx, id); err != nil {
		return err
	}
	m.mu.Lock()
	for k, p := range m.pending {
		if p.serverID == id {
			delete(m.pending, k)
		}
	}
	s := m.servers[id]
	m.mu.Unlock()
	if s != nil {
		if s.oauth != nil {
			s.oauth.mu.Lock()
			s.oauth.grant, s.oauth.has = core.MCPOAuthGrant{}, false
			s.oauth.mu.Unlock()
		}
		s.requestRestart()
	}
	return nil
}

func (m *Manager) revoke(ctx context.Context, g core.MCPOAuthGrant, token, hint string) error {
	form := url.Values{"token": {token}, "token_type_hint": {hint}}
	switch g.ClientAuth {
	case "client_secret_post":
		form.Set("client_id", g.ClientID)
		form.Set("client_secret", g.ClientSecret)
	case "client_secret_basic":
	default:
		form.Set("client_id", g.ClientID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.RevocationEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	if g.ClientAuth == "client_secret_basic" {
		req.SetBasicAuth(url.QueryEscape(g.ClientID), url.QueryEscape(g.ClientSecret))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := m.oauthClient().Do(req)
	if err != nil {
		return fmt.Errorf("revocation endpoint: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("revocation endpoint answered %s", resp.Status)
	}
	return nil
}
