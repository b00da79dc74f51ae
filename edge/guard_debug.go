package edge

import "net/http"

// DebugGuard protects an endpoint that describes the kernel's internals
// (the --pprof profiles) like /graphql, and a little more strictly:
//
//   - Host: only loopback names and hostPatterns, whether or not a token is
//     required (a DNS-rebinding page names another host);
//   - Origin: the same rule as /graphql (browserGuard);
//   - the bearer token when auth is set (the default), as on /graphql.
//
// Refusals are 403 (Host, Origin) and 401 (token), coded UNAUTHENTICATED.
func DebugGuard(h http.Handler, auth *Auth, originPatterns, hostPatterns []string) http.Handler {
	if auth != nil {
		h = auth.middleware(h)
	}
	inner := browserGuard(h, auth, originPatterns, hostPatterns)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, hostPatterns) {
			refuse(w, "Host "+r.Host+" is not served by this kernel's debug endpoint (DNS rebinding protection); start it with --allow-host to add one")
			return
		}
		inner.ServeHTTP(w, r)
	})
}
