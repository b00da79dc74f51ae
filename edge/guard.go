package edge

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/edge/access"
)

// browserGuard protects the kernel from web pages (cross-site request
// forgery and DNS rebinding) and lets loopback pages in with CORS:
//
//   - Host: without a required token, only loopback names (127.0.0.0/8, ::1,
//     localhost) and hostPatterns are served, so a rebound name cannot reach a
//     local kernel. With a token required (auth set) any Host is served: a
//     rebinding page has no token.
//   - Origin: a request from a browser page is refused unless the page is the
//     kernel itself (same host and port), a loopback page (any port) or
//     matches originPatterns. A multipart upload is a "simple" request that
//     browsers send cross-site without asking, so this cannot be left to
//     CORS. Clients that send no Origin (scripts, CLIs) are not affected.
//   - CORS: allowed pages of another origin get Access-Control-Allow-Origin
//     on every answer, and preflight requests (OPTIONS, which carry no token)
//     are answered here, allowing the Authorization header.
//
// Refusals come before any operation runs, as 403 coded UNAUTHENTICATED.
func browserGuard(next http.Handler, auth *Auth, originPatterns, hostPatterns []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if auth == nil && !hostAllowed(r.Host, hostPatterns) {
			refuse(w, "Host "+r.Host+" is not served by this kernel (DNS rebinding protection); start it with --allow-host to add one")
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			u, ok := originAllowed(o, r.Host, originPatterns)
			if !ok {
				refuse(w, "requests from the web origin "+o+" are refused; start the kernel with --allow-origin to allow it")
				return
			}
			if !strings.EqualFold(u.Host, r.Host) {
				h := w.Header()
				h.Set("Access-Control-Allow-Origin", o)
				h.Add("Vary", "Origin")
				if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
					h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
					h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept")
					h.Set("Access-Control-Max-Age", "600")
					w.WriteHeader(http.StatusNoContent)
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

func hostAllowed(hostport string, patterns []string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if access.IsLoopbackName(host) {
		return true
	}
	host = strings.Trim(strings.ToLower(host), "[]")
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ToLower(p), host); ok {
			return true
		}
	}
	return false
}

// originAllowed parses origin and says whether it may use the kernel served
// as host: itself, a loopback page or one matching patterns (host or
// host:port patterns, as --allow-origin).
func originAllowed(origin, host string, patterns []string) (*url.URL, bool) {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, false
	}
	if strings.EqualFold(u.Host, host) || access.IsLoopbackName(u.Hostname()) {
		return u, true
	}
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(u.Host)); ok {
			return u, true
		}
	}
	return u, false
}

func refuse(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []any{map[string]any{
		"message": msg, "extensions": map[string]any{"code": string(core.CodeUnauthenticated)},
	}}})
}
