package web

import (
	"net/http"
	"strings"
)

// pageCSP is the Content-Security-Policy of Foya web ("/"), the playground
// and their assets: scripts, styles, images and fonts from the kernel only
// (no inline script, no eval), requests to the kernel only, no plugins, and
// no page of any origin may frame them (clickjacking). Images may also be
// data: and blob: URLs (GraphiQL's icons; attachments shown in the page),
// and videos blob: URLs (attachments played in the page).
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src blob:; font-src 'self' data:; " +
	"connect-src 'self'%s; manifest-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'"

// PageHeaders adds the browser security headers to every answer of h:
// Content-Security-Policy (pageCSP), X-Content-Type-Options: nosniff,
// Referrer-Policy: no-referrer and X-Frame-Options: DENY (frame-ancestors
// for browsers without CSP 2).
func PageHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", pageCSPFor(r.Host))
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("X-Frame-Options", "DENY")
		h.ServeHTTP(w, r)
	})
}

// pageCSPFor is pageCSP for a page served as host: WebSocket URLs of the
// same host are named too, for browsers whose 'self' does not cover ws: and
// wss: (CSP 2). A Host that is not a plain host[:port] gets 'self' only.
func pageCSPFor(host string) string {
	extra := ""
	if host != "" && !strings.ContainsFunc(host, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(".-:[]", c))
	}) {
		extra = " ws://" + host + " wss://" + host
	}
	return strings.Replace(pageCSP, "%s", extra, 1)
}
