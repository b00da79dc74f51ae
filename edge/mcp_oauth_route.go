package edge

import (
	"context"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/mcp"
	"github.com/foya-dev/foya/edge/web"
)

// MCPOAuthCallbackPath is where an MCP server's authorization server sends
// the browser back after a sign-in (the redirect_uri the kernel
// registers). It needs no bearer token: the state in the query is the
// credential (random, single use, valid 10 minutes, bound to the PKCE
// verifier the kernel keeps), so a browser that never saw the kernel's
// token can finish the sign-in.
const MCPOAuthCallbackPath = "/mcp/oauth/callback"

var callbackPage = template.Must(template.New("callback").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}} · Foya</title></head>
<body><h1>{{.Title}}</h1><p>{{.Text}}</p></body></html>
`))

// mcpOAuthCallback finishes a sign-in: the state and code go to the MCP
// service (which checks the state and exchanges the code with its PKCE
// verifier); the answer is a small page with the kernel's page headers.
func mcpOAuthCallback(svc *mcp.Service, log *slog.Logger) http.Handler {
	return web.PageHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		page := func(status int, title, text string) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(status)
			_ = callbackPage.Execute(w, struct{ Title, Text string }{title, text})
		}
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", "GET")
			page(http.StatusMethodNotAllowed, "Not a sign-in", "This address only takes the browser's return from a sign-in.")
			return
		}
		if svc == nil {
			page(http.StatusNotFound, "No MCP servers", "This kernel has no MCP servers.")
			return
		}
		q := r.URL.Query()
		if e := q.Get("error"); e != "" {
			page(http.StatusBadRequest, "Sign-in refused", "The authorization server answered: "+core.Clip(e+" "+q.Get("error_description"), 300)+". Start the sign-in again with foya mcp login.")
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
		defer cancel()
		name, err := svc.CompleteLogin(ctx, q.Get("state"), q.Get("code"), q.Get("iss"))
		if err != nil {
			var ce *core.Error
			msg := "The sign-in could not be completed."
			if errors.As(err, &ce) {
				msg = ce.Message
			} else {
				log.Error("mcp oauth callback", "err", err)
			}
			page(http.StatusBadRequest, "Sign-in failed", msg)
			return
		}
		page(http.StatusOK, "Signed in", "Foya is signed in to the MCP server \""+name+"\". You can close this page.")
	}))
}

// clientMetadataRoute serves the kernel's OAuth client ID metadata
// document (the draft-ietf-oauth-client-id-metadata-document JSON an
// authorization server reads at the kernel's client_id URL): public
// metadata, no token, GET and HEAD only; 404 when the kernel has no
// client_id URL (--mcp-client-metadata-url).
func clientMetadataRoute(doc func(context.Context) []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "GET only", http.StatusMethodNotAllowed)
			return
		}
		if doc == nil {
			http.Error(w, "this kernel has no client ID metadata document (start it with --mcp-client-metadata-url)", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		if r.Method == http.MethodGet {
			_, _ = w.Write(doc(r.Context()))
		}
	})
}
