// Package web serves the kernel's pages: Foya web (the chat client, client/),
// the GraphiQL playground and its assets (playground/, built from locked npm
// packages), the favicon, and the security headers every page gets
// (PageHeaders). The assets are embedded; standard library only.
package web

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// webFiles is Foya web, the chat client served at "/": plain HTML, CSS and
// JavaScript modules (app.js is the entry) with no build step and no
// third-party code, so the page works offline. It speaks only the public API
// (POST /graphql and graphql-transport-ws); see docs/web.md.
//
//go:embed client/index.html client/*.js client/*.css
var webFiles embed.FS

// ClientHandler serves the chat client: index.html at "/", its scripts and
// stylesheet under /web/. Any other path is a 404.
func ClientHandler() http.Handler {
	sub, err := fs.Sub(webFiles, "client")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	assets := http.StripPrefix("/web/", http.FileServer(http.FS(sub)))
	index, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		panic(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-cache")
			w.Write(index)
		case isAsset(sub, r.URL.Path):
			w.Header().Set("Cache-Control", "no-cache")
			assets.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	})
}

// isAsset reports whether path names one of the client's scripts or its
// stylesheet under /web/ (a file directly in client/, not index.html).
func isAsset(sub fs.FS, path string) bool {
	name, ok := strings.CutPrefix(path, "/web/")
	if !ok || strings.Contains(name, "/") || !(strings.HasSuffix(name, ".js") || strings.HasSuffix(name, ".css")) {
		return false
	}
	_, err := fs.Stat(sub, name)
	return err == nil
}
