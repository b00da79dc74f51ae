package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The policy names the page's own WebSocket origin, and nothing from a
// Host header that is not a plain host[:port] gets into it.
func TestPageCSPHost(t *testing.T) {
	h := PageHeaders(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for host, want := range map[string]string{
		"127.0.0.1:4777":           "connect-src 'self' ws://127.0.0.1:4777 wss://127.0.0.1:4777;",
		"[::1]:4777":               "connect-src 'self' ws://[::1]:4777 wss://[::1]:4777;",
		"evil; script-src *":       "connect-src 'self';",
		"a.test 'unsafe-inline' x": "connect-src 'self';",
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Host = host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		csp := w.Header().Get("Content-Security-Policy")
		if !strings.Contains(csp, want) || strings.Count(csp, "script-src") != 1 || !strings.Contains(csp, "script-src 'self';") {
			t.Errorf("Host %q: %s", host, csp)
		}
	}
}
