package mcphost

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
)

// memAuth is an in-memory core.MCPAuthStore.
type memAuth struct {
	mu     sync.Mutex
	grants map[string]core.MCPOAuthGrant
}

func (m *memAuth) LoadMCPAuth(_ context.Context, id string) (core.MCPOAuthGrant, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.grants[id]
	return g, ok, nil
}

func (m *memAuth) SaveMCPAuth(_ context.Context, id string, g core.MCPOAuthGrant) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.grants[id] = g
	return nil
}

func (m *memAuth) UpdateMCPAuth(_ context.Context, id string, fn func(core.MCPOAuthGrant, bool) (core.MCPOAuthGrant, error)) (core.MCPOAuthGrant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.grants[id]
	next, err := fn(cur, ok)
	if err == nil {
		m.grants[id] = next
	}
	return next, err
}

func (m *memAuth) DeleteMCPAuth(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.grants, id)
	return nil
}

func TestExpiresSoon(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		name string
		g    core.MCPOAuthGrant
		want bool
	}{
		{"no expiry", core.MCPOAuthGrant{}, false},
		{"hour left", core.MCPOAuthGrant{Obtained: now, Expiry: now.Add(time.Hour)}, false},
		{"30s of an hour left", core.MCPOAuthGrant{Obtained: now.Add(-time.Hour), Expiry: now.Add(30 * time.Second)}, true},
		{"short token, fresh", core.MCPOAuthGrant{Obtained: now, Expiry: now.Add(6 * time.Second)}, false},
		{"short token, last third", core.MCPOAuthGrant{Obtained: now.Add(-5 * time.Second), Expiry: now.Add(time.Second)}, true},
		{"expired", core.MCPOAuthGrant{Obtained: now.Add(-time.Hour), Expiry: now.Add(-time.Second)}, true},
	} {
		if got := expiresSoon(c.g, now); got != c.want {
			t.Errorf("%s: expiresSoon = %v, want %v", c.name, got, c.want)
		}
	}
}

// The callback's state: unknown, expired (10 minutes), reused, or back from
// another issuer (RFC 9207) is refused with BAD_INPUT and nothing stored.
func TestCompleteLoginRefusals(t *testing.T) {
	store := &memAuth{grants: map[string]core.MCPOAuthGrant{}}
	m := New(Config{Auth: store})
	pending := func(state string, expires time.Time) {
		m.mu.Lock()
		m.pending[state] = &pendingLogin{serverID: "mcp_1", name: "docs", verifier: "v", redirect: "http://127.0.0.1:1/cb",
			grant: core.MCPOAuthGrant{Issuer: "https://as.example", TokenEndpoint: "https://as.example/token"}, expires: expires}
		m.mu.Unlock()
	}
	ctx := context.Background()
	for _, c := range []struct {
		name, state, iss, want string
		setup                  func()
	}{
		{"unknown", "nope", "", "unknown or already used", func() {}},
		{"empty", "", "", "unknown or already used", func() {}},
		{"expired", "old", "", "expired", func() { pending("old", time.Now().Add(-time.Second)) }},
		{"other issuer", "iss", "https://evil.example", "RFC 9207", func() { pending("iss", time.Now().Add(LoginTTL)) }},
	} {
		c.setup()
		_, err := m.CompleteLogin(ctx, c.state, "code", c.iss)
		var ce *core.Error
		if !errors.As(err, &ce) || ce.Code != core.CodeBadInput || !strings.Contains(ce.Message, c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
		// Single use: the state is gone after the attempt.
		if _, err := m.CompleteLogin(ctx, c.state, "code", ""); err == nil || !strings.Contains(err.Error(), "unknown or already used") {
			t.Errorf("%s: second use: %v", c.name, err)
		}
	}
	if len(store.grants) != 0 {
		t.Fatalf("a refused callback stored a grant: %d", len(store.grants))
	}
}

// TestPendingLoginIsHandedOutAgain: a server's pending sign-in with half
// its life left is the one every later 401 hands out (its URL stays
// valid); one near its end, of another server or coming back to another
// callback is not.
func TestPendingLoginIsHandedOutAgain(t *testing.T) {
	m := New(Config{Auth: &memAuth{grants: map[string]core.MCPOAuthGrant{}}})
	now := time.Now()
	m.pending["a"] = &pendingLogin{serverID: "mcp_1", authURL: "https://as.example/authorize?state=a", redirect: "http://127.0.0.1:1/cb", expires: now.Add(LoginTTL), grant: core.MCPOAuthGrant{Scope: "read"}}
	m.pending["b"] = &pendingLogin{serverID: "mcp_2", authURL: "https://as.example/authorize?state=b", redirect: "http://127.0.0.1:1/cb", expires: now.Add(LoginTTL/2 - time.Second)}
	for _, c := range []struct {
		name, server, redirect, scope string
		at                            time.Time
		want                          string
	}{
		{"fresh", "mcp_1", "http://127.0.0.1:1/cb", "", now, "https://as.example/authorize?state=a"},
		{"fresh, the same scope", "mcp_1", "http://127.0.0.1:1/cb", "read", now, "https://as.example/authorize?state=a"},
		{"a step-up to more scope", "mcp_1", "http://127.0.0.1:1/cb", "read write", now, ""},
		{"half its life gone", "mcp_1", "http://127.0.0.1:1/cb", "", now.Add(LoginTTL/2 + time.Second), ""},
		{"near its end", "mcp_2", "http://127.0.0.1:1/cb", "", now, ""},
		{"another server", "mcp_3", "http://127.0.0.1:1/cb", "", now, ""},
		{"another callback", "mcp_1", "http://127.0.0.1:2/cb", "", now, ""},
	} {
		if got := m.pendingAuthURL(c.server, c.redirect, c.scope, c.at); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// Logout of a server that is not running (deleted) still forgets its grant.
func TestLogoutForgetsWithoutServer(t *testing.T) {
	store := &memAuth{grants: map[string]core.MCPOAuthGrant{"mcp_gone": {AccessToken: "a", RefreshToken: "r"}}}
	m := New(Config{Auth: store})
	if err := m.Logout(context.Background(), "mcp_gone"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := store.LoadMCPAuth(context.Background(), "mcp_gone"); ok {
		t.Fatal("the grant is still stored")
	}
}

func TestCheckOAuthURL(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://as.example/token": true, "http://127.0.0.1:9/token": true, "http://localhost/token": true,
		"http://as.example/token": false, "ftp://as.example/": false, "http://[::1]:8/t": true,
	} {
		if err := checkOAuthURL(raw); (err == nil) != ok {
			t.Errorf("%s: %v", raw, err)
		}
	}
}

// A grant made for another origin (the server's url moved) is not sent.
func TestGrantOfAnotherOriginIsNotUsed(t *testing.T) {
	store := &memAuth{grants: map[string]core.MCPOAuthGrant{
		"mcp_1": {Resource: "https://old.example/mcp", AccessToken: "tok"},
		"mcp_2": {Resource: "https://new.example/mcp", AccessToken: "tok"},
	}}
	m := New(Config{Auth: store})
	for id, want := range map[string]bool{"mcp_1": false, "mcp_2": true} {
		s := newServer(m, core.MCPServerConfig{ID: id, Name: id, Transport: core.MCPHTTP, URL: "https://new.example/mcp", Enabled: true})
		s.oauth.load(context.Background())
		ts, _ := s.oauth.TokenSource(context.Background())
		if (ts != nil) != want {
			t.Errorf("%s: token source %v, want one: %v", id, ts, want)
		}
	}
}

// promptArgs takes any text a user types after a prompt name: it never
// panics, and what it returns names only the prompt's arguments.
func FuzzPromptArgs(f *testing.F) {
	for _, s := range []string{"", "Paris", "Paris state=Texas", "city= state=", "a b c d", "state=Texas Paris rest of line", "=x =", "\x00 \u00a0city=é"} {
		f.Add(s)
	}
	p := core.MCPPromptState{Name: "args-prompt", Arguments: []core.MCPPromptArgument{{Name: "city", Required: true}, {Name: "state"}}}
	f.Fuzz(func(t *testing.T, rest string) {
		args, err := promptArgs(p, rest)
		if err != nil {
			return
		}
		for k := range args {
			if k != "city" && k != "state" {
				t.Fatalf("argument %q from %q", k, rest)
			}
		}
		if _, ok := args["city"]; !ok {
			t.Fatalf("required city missing without an error: %q", rest)
		}
	})
}

// A token endpoint that is down or overloaded is a passing failure (the
// server in NEEDS_AUTH tries again); an OAuth error such as invalid_grant
// is not; an answer never puts a token in the error.
func TestTokenRequestErrors(t *testing.T) {
	for _, c := range []struct {
		status    int
		body      string
		transient bool
	}{
		{503, `oops`, true},
		{429, `{"error":"slow_down"}`, true},
		{400, `{"error":"invalid_grant","error_description":"used"}`, false},
		{200, `{"access_token":"","token_type":"Bearer"}`, false},
		{200, `{"access_token":"tok-123","token_type":"mac"}`, false},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(c.status)
			_, _ = w.Write([]byte(c.body))
		}))
		m := New(Config{})
		_, err := m.tokenRequest(context.Background(), core.MCPOAuthGrant{TokenEndpoint: srv.URL + "/token", ClientID: "c"}, map[string]string{"grant_type": "refresh_token", "refresh_token": "rt-secret"})
		srv.Close()
		var te transientError
		if err == nil || errors.As(err, &te) != c.transient || strings.Contains(err.Error(), "rt-secret") || strings.Contains(err.Error(), "tok-123") {
			t.Errorf("%d %s: %v (transient %v)", c.status, c.body, err, errors.As(err, &te))
		}
	}
	m := New(Config{})
	if _, err := m.tokenRequest(context.Background(), core.MCPOAuthGrant{TokenEndpoint: "http://127.0.0.1:1/token"}, nil); !errors.As(err, new(transientError)) {
		t.Errorf("unreachable endpoint: %v", err)
	}
}

// A 403 whose Bearer challenge says insufficient_scope names the scope to
// ask for; any other answer names none. The step-up asks for the granted
// scopes and the new ones, each once.
func TestInsufficientScopeChallenge(t *testing.T) {
	for _, c := range []struct {
		status int
		header string
		want   string
	}{
		{403, `Bearer error="insufficient_scope", scope="files:write", resource_metadata="https://x.example/.well-known/oauth-protected-resource"`, "files:write"},
		{403, `Bearer realm="x", error="insufficient_scope", scope="a b"`, "a b"},
		{403, `Bearer error="invalid_token"`, ""},
		{401, `Bearer error="insufficient_scope", scope="files:write"`, ""},
		{403, ``, ""},
		{403, `Bearer error="insufficient_scope", scope="` + strings.Repeat("s", 1025) + `"`, ""},
		{403, "Bearer error=\"insufficient_scope\", scope=\"files:write\u00e9\"", ""},
		{403, "Bearer error=\"insufficient_scope\", scope=\"a\tb\"", ""},
	} {
		resp := &http.Response{StatusCode: c.status, Header: http.Header{}}
		if c.header != "" {
			resp.Header.Set("WWW-Authenticate", c.header)
		}
		if got := insufficientScope(resp); got != c.want {
			t.Errorf("%d %s: %q, want %q", c.status, c.header, got, c.want)
		}
	}
	if got := unionScope("read files:read", "files:write read"); got != "read files:read files:write" {
		t.Fatalf("union %q", got)
	}
	if got := unionScope("", "files:write"); got != "files:write" {
		t.Fatalf("union %q", got)
	}
}
