package mcphost

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/foya-dev/foya/core"
)

// OAuth 2.1 for HTTP servers (the MCP authorization specification). Each
// HTTP server has an oauthHandler, the go-sdk transport's OAuthHandler:
// TokenSource gives the stored access token, refreshed shortly before it
// expires; Authorize runs when the server answers 401 or 403: it refreshes
// once (the token may have been revoked or rotated by another kernel) and
// otherwise starts a sign-in (discovery, client registration, PKCE) and
// puts the server in NEEDS_AUTH with its authUrl. The grant lives in the
// core.MCPAuthStore, sealed; it is never logged, shown or given to a
// process. Refreshes go through MCPAuthStore.UpdateMCPAuth, so kernels on
// one database refresh one at a time and a rotated refresh token is spent
// once.

// errNeedsAuth ends a connection attempt of a server that needs a sign-in.
var errNeedsAuth = errors.New("the server needs a sign-in (OAuth)")

type oauthHandler struct {
	s *server

	mu      sync.Mutex
	grant   core.MCPOAuthGrant
	has     bool
	refused string // why the last refresh failed ("" when it did not)
	// transient: the last refresh failed for a reason that may pass (the
	// authorization server unreachable, 5xx): NEEDS_AUTH retries.
	transient bool
}

// load reads the stored grant before a connection attempt. A grant made
// for another origin (the server's URL moved) is not used.
func (h *oauthHandler) load(ctx context.Context) {
	g, ok, err := h.s.m.cfg.Auth.LoadMCPAuth(ctx, h.s.cfg.ID)
	if err != nil {
		h.s.log.Warn("read the stored OAuth grant", "err", err)
	}
	if ok && core.URLOrigin(g.Resource) != core.URLOrigin(h.s.cfg.URL) {
		ok = false
	}
	h.mu.Lock()
	h.grant, h.has, h.refused = g, ok && g.AccessToken != "", ""
	h.mu.Unlock()
}

func (h *oauthHandler) current() (core.MCPOAuthGrant, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.grant, h.has
}

// TokenSource implements auth.OAuthHandler: nil (no Authorization header)
// until the server has a grant.
func (h *oauthHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	if _, ok := h.current(); !ok {
		return nil, nil
	}
	return tokenSource{h}, nil
}

type tokenSource struct{ h *oauthHandler }

// Token returns the access token, refreshed first when it expires soon. A
// failed refresh sends the request without a token: the server's 401
// brings Authorize, which reports NEEDS_AUTH with the reason.
func (t tokenSource) Token() (*oauth2.Token, error) {
	g, _ := t.h.current()
	if expiresSoon(g, time.Now()) {
		ctx, cancel := context.WithTimeout(t.h.s.ctx, oauthTimeout)
		defer cancel()
		var err error
		if g, err = t.h.refresh(ctx, ""); err != nil {
			return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant"}
		}
	}
	return &oauth2.Token{AccessToken: g.AccessToken, TokenType: "Bearer"}, nil
}

// expiresSoon: within a third of the token's life, at most a minute.
func expiresSoon(g core.MCPOAuthGrant, now time.Time) bool {
	if g.Expiry.IsZero() {
		return false
	}
	margin := time.Minute
	if !g.Obtained.IsZero() {
		margin = min(margin, g.Expiry.Sub(g.Obtained)/3)
	}
	return now.Add(margin).After(g.Expiry)
}

// refresh gets a new access token with the refresh token, under the
// store's lock. rejected is an access token the server refused: a stored
// token other than it that is not about to expire is used as it is (another
// kernel refreshed meanwhile), and so is a fresh one when rejected is "".
func (h *oauthHandler) refresh(ctx context.Context, rejected string) (core.MCPOAuthGrant, error) {
	var did bool
	g, err := h.s.m.cfg.Auth.UpdateMCPAuth(ctx, h.s.cfg.ID, func(cur core.MCPOAuthGrant, ok bool) (core.MCPOAuthGrant, error) {
		did = false
		if !ok {
			return cur, errors.New("no stored grant (signed out)")
		}
		if cur.AccessToken != rejected && !expiresSoon(cur, time.Now()) {
			return cur, nil
		}
		if cur.RefreshToken == "" {
			return cur, errors.New("the access token expired and the authorization server gave no refresh token")
		}
		tok, err := h.s.m.tokenRequest(ctx, cur, map[string]string{
			"grant_type": "refresh_token", "refresh_token": cur.RefreshToken, "resource": cur.Resource,
		})
		if err != nil {
			return cur, err
		}
		did = true
		return tok.apply(cur, time.Now()), nil
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		h.refused = "token refresh failed: " + h.s.scrub(err.Error())
		var te transientError
		h.transient = errors.As(err, &te)
		h.s.log.Warn("mcp oauth token refresh failed", "err", h.s.scrub(err.Error()))
		return core.MCPOAuthGrant{}, err
	}
	if did {
		h.s.log.Info("mcp oauth token refreshed", "expires", g.Expiry.UTC().Format(time.RFC3339))
	}
	h.grant, h.has, h.refused, h.transient = g, true, "", false
	return g, nil
}

// Authorize implements auth.OAuthHandler for a 401 or 403 answer.
func (h *oauthHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	g, has := h.current()
	if need := insufficientScope(resp); need != "" && has {
		// Step-up (the MCP authorization specification's scope challenge):
		// a new sign-in asks for what was granted and what the server
		// wants; a refresh cannot widen a grant.
		scope := unionScope(g.Scope, need)
		reason := fmt.Sprintf("the server needs the scope %q, which the sign-in did not grant: sign in again (foya mcp login %s)", need, h.s.cfg.Name)
		authURL, err := h.s.m.beginLogin(ctx, h.s, resp, scope)
		if err != nil {
			reason += "; cannot start a sign-in: " + h.s.scrub(err.Error())
		}
		h.s.needsAuth(authURL, reason)
		return errNeedsAuth
	}
	h.mu.Lock()
	reason := h.refused
	h.mu.Unlock()
	sent := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
	if has && reason == "" && sent != "" {
		// The server refused a token it should take: refresh once.
		if g.RefreshToken != "" {
			if _, err := h.refresh(ctx, sent); err == nil {
				return nil
			}
			h.mu.Lock()
			reason = h.refused
			h.mu.Unlock()
		} else {
			reason = "the server refused the access token and there is no refresh token"
		}
	}
	if resp.StatusCode == http.StatusForbidden && sent != "" && reason == "" {
		return fmt.Errorf("the server answered 403 Forbidden to the signed-in user")
	}
	authURL, err := h.s.m.beginLogin(ctx, h.s, resp, "")
	if err != nil {
		reason = strings.TrimPrefix(strings.Join([]string{reason, "cannot start a sign-in: " + h.s.scrub(err.Error())}, "; "), "; ")
	}
	h.s.needsAuth(authURL, reason)
	return errNeedsAuth
}

// insufficientScope is the scope a 403 answer's Bearer challenge asks for
// with error="insufficient_scope" (RFC 6750), "" for any other answer and
// for a scope that is not one: over maxStepUpScope bytes, or with a
// character RFC 6749 does not allow in a scope token (it goes into an
// authorization URL and the server's status).
func insufficientScope(resp *http.Response) string {
	if resp.StatusCode != http.StatusForbidden {
		return ""
	}
	chs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return ""
	}
	for _, ch := range chs {
		if ch.Scheme == "bearer" && ch.Params["error"] == "insufficient_scope" {
			scope := strings.TrimSpace(ch.Params["scope"])
			if len(scope) > maxStepUpScope || strings.ContainsFunc(scope, func(r rune) bool {
				return r != ' ' && (r < 0x21 || r > 0x7e || r == '"' || r == '\\')
			}) {
				return ""
			}
			return scope
		}
	}
	return ""
}

// maxStepUpScope bounds the scope a step-up asks for.
const maxStepUpScope = 1024

// unionScope is the scopes of a and b (space-separated), each once, a's
// first.
func unionScope(a, b string) string {
	var out []string
	for _, s := range append(strings.Fields(a), strings.Fields(b)...) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

// needsAuth puts the server in NEEDS_AUTH: its tools disappear from new
// requests and the supervisor waits for a sign-in.
func (s *server) needsAuth(authURL, reason string) {
	s.mu.Lock()
	s.wasUp = false
	s.authWait = true
	s.mu.Unlock()
	s.set(func(st *core.MCPServerState) {
		*st = core.MCPServerState{Status: core.MCPNeedsAuth, AuthURL: authURL, Error: reason}
	})
	s.log.Warn("mcp server needs a sign-in", "reason", reason)
	if s.m.cfg.OnNeedsAuth != nil {
		s.m.cfg.OnNeedsAuth(s.cfg.ID)
	}
	select {
	case s.authLost <- struct{}{}:
	default:
	}
}

// takeAuthWait reports (and clears) whether the last attempt ended in
// NEEDS_AUTH.
func (s *server) takeAuthWait() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.authWait
	s.authWait = false
	return w
}

// waitAuth waits in NEEDS_AUTH for a sign-in on this kernel, a grant
// stored by another kernel (polled), a restart request or the stop; it
// returns false when the server is stopped.
func (s *server) waitAuth() bool {
	select {
	case <-s.authLost: // drained: this wait is its consequence
	default:
	}
	before, _, _ := s.m.cfg.Auth.LoadMCPAuth(s.ctx, s.cfg.ID)
	t := time.NewTicker(s.m.cfg.AuthPoll)
	defer t.Stop()
	// A refresh that failed for a passing reason is tried again.
	var retry <-chan time.Time
	if s.oauth != nil {
		s.oauth.mu.Lock()
		if s.oauth.transient {
			rt := time.NewTimer(s.m.cfg.MaxBackoff)
			defer rt.Stop()
			retry = rt.C
		}
		s.oauth.mu.Unlock()
	}
	for {
		select {
		case <-s.ctx.Done():
			return false
		case <-retry:
			s.log.Info("mcp oauth: trying the refresh again")
			return true
		case <-s.restart:
			return true
		case <-s.authed:
			return true
		case <-t.C:
			g, ok, err := s.m.cfg.Auth.LoadMCPAuth(s.ctx, s.cfg.ID)
			if err == nil && ok && g.AccessToken != "" && g.AccessToken != before.AccessToken {
				s.log.Info("mcp oauth grant stored by another kernel; reconnecting")
				return true
			}
		}
	}
}
