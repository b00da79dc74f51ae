package graph_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// listener is a real HTTP server that records the requests it gets.
type listener struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // method, path and Authorization of each request
}

func newListener(t *testing.T) *listener {
	l := &listener{}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.seen = append(l.seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		l.mu.Unlock()
		http.Error(w, "not here", http.StatusNotFound)
	}))
	t.Cleanup(l.Close)
	return l
}

func (l *listener) requests() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// A key is bound to its endpoint: moving a connection to another origin
// without apiKey in the same update is BAD_INPUT, leaves the connection as
// it was, and refreshModels afterwards sends nothing to the new host. With
// the key in the update the move is made, and the new host gets only the
// new key.
func TestConnectionKeyBoundToItsOrigin(t *testing.T) {
	k := newTestKernel(t)
	evil := newListener(t)
	conn := k.createConn(t, map[string]any{"name": "main", "providerKind": "openai", "baseUrl": k.fake.BaseURL(), "apiKey": secretKey, "models": []any{map[string]any{"id": testModel}}})

	for _, u := range []string{evil.URL + "/v1", strings.Replace(k.fake.BaseURL(), "http://", "https://", 1), strings.Replace(k.fake.BaseURL(), "127.0.0.1", "localhost", 1)} {
		msg := k.mustFail(t, "BAD_INPUT", `mutation($id: ID!, $u: String) { updateConnection(id: $id, input: {baseUrl: $u}) { id } }`, map[string]any{"id": conn.ID, "u": u})
		if !strings.Contains(msg, "input.apiKey: required when baseUrl moves connection \"main\" to another origin") || strings.Contains(msg, secretKey) {
			t.Fatalf("%s: message %q", u, msg)
		}
	}
	k.do(t, `mutation($id: ID!) { refreshModels(connectionId: $id) { id } }`, map[string]any{"id": conn.ID})
	var got struct{ Connections []connJSON }
	k.mustDo(t, `{ connections { `+connFields+` } }`, nil, &got)
	if len(got.Connections) != 1 || got.Connections[0].BaseURL != k.fake.BaseURL() || !got.Connections[0].APIKeyConfigured {
		t.Fatalf("the refused update changed the connection: %+v", got.Connections)
	}
	if r := evil.requests(); len(r) != 0 {
		t.Fatalf("the new host got requests after a refused update: %q", r)
	}

	// Same origin, other path: no key needed.
	k.mustDo(t, `mutation($id: ID!, $u: String) { updateConnection(id: $id, input: {baseUrl: $u}) { id } }`, map[string]any{"id": conn.ID, "u": k.fake.BaseURL() + "/"}, nil)
	// Another origin with a new key: allowed; the new host sees only it.
	k.mustDo(t, `mutation($id: ID!, $u: String) { updateConnection(id: $id, input: {baseUrl: $u, apiKey: "sk-for-the-new-host"}) { id } }`, map[string]any{"id": conn.ID, "u": evil.URL + "/v1"}, nil)
	k.do(t, `mutation($id: ID!) { refreshModels(connectionId: $id) { id } }`, map[string]any{"id": conn.ID})
	r := evil.requests()
	if len(r) == 0 {
		t.Fatal("refreshModels after the accepted move reached no host")
	}
	for _, line := range r {
		if strings.Contains(line, secretKey) || !strings.Contains(line, "sk-for-the-new-host") {
			t.Fatalf("request to the new host: %q", line)
		}
	}
	// A connection without a key moves freely.
	local := k.createConn(t, map[string]any{"name": "local", "baseUrl": "http://127.0.0.1:11434/v1", "models": []any{map[string]any{"id": "llama"}}})
	k.mustDo(t, `mutation($id: ID!, $u: String) { updateConnection(id: $id, input: {baseUrl: $u}) { id } }`, map[string]any{"id": local.ID, "u": "http://10.0.0.7:8080/v1"}, nil)
}

// The same for an HTTP MCP server's headers: a URL moved to another origin
// without headers in the same update is BAD_INPUT and the server keeps its
// URL; the new host gets no request. Given again, the move is made.
func TestMCPHeadersBoundToTheirOrigin(t *testing.T) {
	k := newMCPKernel(t)
	first, evil := newListener(t), newListener(t)
	srv := k.createMCP(t, map[string]any{"name": "remote", "transport": "HTTP", "url": first.URL + "/mcp", "enabled": false,
		"headers": []any{map[string]any{"key": "Authorization", "value": "Bearer mcp-header-secret"}}})
	msg := k.mustFail(t, "BAD_INPUT", `mutation($id: ID!, $u: String) { updateMcpServer(id: $id, input: {name: "remote", transport: HTTP, url: $u, enabled: true}) { id } }`,
		map[string]any{"id": srv.ID, "u": evil.URL + "/mcp"})
	if !strings.Contains(msg, `input.headers: required when url moves MCP server "remote" to another origin`) || strings.Contains(msg, "mcp-header-secret") {
		t.Fatalf("message %q", msg)
	}
	if got := k.mcpServer(t, srv.ID); got.URL == nil || *got.URL != first.URL+"/mcp" || got.Enabled || len(got.HeaderKeys) != 1 {
		t.Fatalf("the refused update changed the server: %+v", got)
	}
	// Same origin: headers kept without being given.
	k.mustDo(t, `mutation($id: ID!, $u: String) { updateMcpServer(id: $id, input: {name: "remote", transport: HTTP, url: $u}) { id } }`, map[string]any{"id": srv.ID, "u": first.URL + "/other"}, nil)
	// Given again ([] for none): the move is made and the old header is gone.
	k.mustDo(t, `mutation($id: ID!, $u: String) { updateMcpServer(id: $id, input: {name: "remote", transport: HTTP, url: $u, headers: []}) { id } }`, map[string]any{"id": srv.ID, "u": evil.URL + "/mcp"}, nil)
	if got := k.mcpServer(t, srv.ID); got.URL == nil || *got.URL != evil.URL+"/mcp" || len(got.HeaderKeys) != 0 {
		t.Fatalf("after the move with headers: %+v", got)
	}
	for _, line := range append(first.requests(), evil.requests()...) {
		if strings.Contains(line, "mcp-header-secret") {
			t.Fatalf("a request carried the header: %q", line)
		}
	}
}
