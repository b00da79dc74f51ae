package graph

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/foya-dev/foya/core"
)

// loopbackHosts are the Host names a loopback kernel answers to.
var loopbackHosts = []string{"127.0.0.1", "localhost", "::1"}

// browserGuard protects a local daemon from web pages (cross-site request
// forgery and DNS rebinding): a request whose Host is not one the kernel
// serves, or that carries an Origin that is neither the kernel itself nor an
// allowed pattern, is refused before any operation runs. A multipart upload
// is a "simple" request that browsers send cross-site without asking, so
// the check cannot be left to CORS. Clients that send no Origin (scripts,
// CLIs) are not affected.
func browserGuard(next http.Handler, originPatterns, hostPatterns []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, hostPatterns) {
			refuse(w, "Host "+r.Host+" is not served by this kernel (DNS rebinding protection); start it with --allow-host to add one")
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !originAllowed(o, r.Host, originPatterns) {
			refuse(w, "requests from the web origin "+o+" are refused; start the kernel with --allow-origin to allow it")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func hostAllowed(hostport string, patterns []string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(strings.ToLower(host), "[]")
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ToLower(p), host); ok {
			return true
		}
	}
	return false
}

func originAllowed(origin, host string, patterns []string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, host) {
		return true // the kernel's own pages (the playground)
	}
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(u.Host)); ok {
			return true
		}
	}
	return false
}

func refuse(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []any{map[string]any{
		"message": msg, "extensions": map[string]any{"code": string(core.CodeUnauthenticated)},
	}}})
}
