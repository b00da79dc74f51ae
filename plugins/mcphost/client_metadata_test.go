package mcphost

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestValidateClientMetadataURL(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://example.com/foya/client.json": true,
		"https://127.0.0.1:8443/c.json":        true,
		"http://example.com/client.json":       false,
		"https://example.com":                  false,
		"https://example.com/":                 false,
		"https:///client.json":                 false,
		"https://example.com/c.json#frag":      false,
		"https://user:pw@example.com/c.json":   false,
		"https://example.com/a/../c.json":      false,
		"https://example.com/./c.json":         false,
		"https://example.com/a/..":             false,
		"://bad":                               false,
	} {
		if err := ValidateClientMetadataURL(raw); (err == nil) != ok {
			t.Errorf("%s: %v, want ok %v", raw, err, ok)
		}
	}
}

// The kernel reads its hosted document before a sign-in: a document that
// does not describe it is refused with what to fix; an unreachable or
// failing host is not (the authorization server may reach it); a good
// document is read once per recheck period.
func TestCheckClientMetadata(t *testing.T) {
	const cb = "http://127.0.0.1:4777/mcp/oauth/callback"
	reads := 0
	var body string
	status := 200
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reads++
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	id := srv.URL + "/c.json"
	ctx := context.Background()
	for _, c := range []struct {
		status int
		body   string
		want   string // "" = accepted
	}{
		{200, `{"client_id":"https://elsewhere/c.json","redirect_uris":["` + cb + `"]}`, "names client_id"},
		{200, `{"client_id":"` + id + `","redirect_uris":["http://127.0.0.1:1/cb"]}`, "does not list this kernel's callback"},
		{200, `not json`, "is not JSON"},
		{404, ``, "answers 404"},
		{200, strings.Repeat(" ", maxClientMetadata+1), "larger than"},
		{502, ``, ""}, // the host failed: not the kernel's to judge
		{200, `{"client_id":"` + id + `","redirect_uris":["` + cb + `"]}`, ""},
	} {
		m := New(Config{})
		status, body = c.status, c.body
		err := m.checkClientMetadata(ctx, id, cb, srv.Client())
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%d %.40q: %v, want …%s…", c.status, c.body, err, c.want)
		}
	}
	m := New(Config{})
	before := reads
	for range 3 {
		if err := m.checkClientMetadata(ctx, id, cb, srv.Client()); err != nil {
			t.Fatal(err)
		}
	}
	if reads-before != 1 {
		t.Fatalf("%d reads of a good document", reads-before)
	}
	// Unreachable: signed in with anyway.
	srv.Close()
	if err := New(Config{}).checkClientMetadata(ctx, id, cb, srv.Client()); err != nil {
		t.Fatalf("unreachable host refused: %v", err)
	}
}
