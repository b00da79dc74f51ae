// Package web serves the kernel's pages: Foya web (the chat client, client/),
// the GraphiQL playground and its assets (playground/, built from locked npm
// packages), the favicon, and the security headers every page gets
// (PageHeaders). The assets are embedded; standard library only.
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"
)

// webFiles is Foya web, the chat client served at "/": plain HTML, CSS and
// JavaScript modules (app.js is the entry) with no build step and no
// third-party code, so the page works offline. It speaks only the public API
// (POST /graphql and graphql-transport-ws); see docs/web.md.
//
//go:embed client/index.html client/*.js client/*.css
var webFiles embed.FS

// clientFile is one file of Foya web as served: its bytes (with versioned
// references, see loadClient), the same gzip-compressed, and their ETags.
type clientFile struct {
	name, ctype    string
	body, gz       []byte
	etag, etagGzip string
}

// client is the embedded client as served, read on its first request (a
// kernel driven only through the API never builds it: compressing it is
// ~17 ms of CPU and ~150 KB of heap) and once per process (the files are
// fixed at build time).
var client = sync.OnceValues(loadClient)

// loadClient reads the embedded client. Every reference between its
// files (index.html's src and href under /web/, the modules' relative
// imports) gets ?v=<version>, a hash of all the files, so that a versioned
// URL names one content for ever and is cached for a year (immutable); a
// new binary with other files has other URLs. Each file is also compressed
// here, for browsers that accept gzip.
func loadClient() (map[string]*clientFile, string) {
	names, err := fs.Glob(webFiles, "client/*")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	h := sha256.New()
	raw := map[string][]byte{}
	for _, n := range names {
		b, err := webFiles.ReadFile(n)
		if err != nil {
			panic(err)
		}
		raw[path.Base(n)] = b
		h.Write([]byte(n))
		h.Write(b)
	}
	version := hex.EncodeToString(h.Sum(nil))[:12]
	htmlRef := regexp.MustCompile(`((?:src|href)="/web/[\w.-]+\.(?:js|css))"`)
	importRef := regexp.MustCompile(`(?m)^((?:import|export)\b[^'\n]*'\./[\w.-]+\.js)'`)
	files := map[string]*clientFile{}
	for name, b := range raw {
		f := &clientFile{name: name}
		switch path.Ext(name) {
		case ".html":
			f.ctype = "text/html; charset=utf-8"
			b = htmlRef.ReplaceAll(b, []byte(`$1?v=`+version+`"`))
		case ".js":
			f.ctype = "text/javascript; charset=utf-8"
			b = importRef.ReplaceAll(b, []byte(`$1?v=`+version+`'`))
		case ".css":
			f.ctype = "text/css; charset=utf-8"
		}
		f.body = b
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		zw.Write(b)
		zw.Close()
		f.gz = z.Bytes()
		sum := sha256.Sum256(b)
		f.etag = `"` + hex.EncodeToString(sum[:8]) + `"`
		f.etagGzip = `"` + hex.EncodeToString(sum[:8]) + `-gz"`
		files[name] = f
	}
	return files, version
}

// ClientHandler serves the chat client: index.html at "/" (revalidated on
// every load: no-cache with an ETag), its scripts and stylesheet under /web/
// (cached for good under the versioned URLs the page uses, revalidated
// otherwise), gzip-compressed for browsers that accept it. Any other path is
// a 404.
func ClientHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		files, version := client()
		var f *clientFile
		switch name, ok := strings.CutPrefix(r.URL.Path, "/web/"); {
		case r.URL.Path == "/":
			f = files["index.html"]
			w.Header().Set("Cache-Control", "no-cache")
		case ok && name != "index.html" && files[name] != nil:
			f = files[name]
			if r.URL.Query().Get("v") == version {
				w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
			} else {
				w.Header().Set("Cache-Control", "no-cache")
			}
		default:
			http.NotFound(w, r)
			return
		}
		f.serve(w, r)
	})
}

// serve writes f, compressed when the request accepts gzip; ServeContent
// answers If-None-Match with 304 and handles HEAD.
func (f *clientFile) serve(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Type", f.ctype)
	hd.Add("Vary", "Accept-Encoding")
	body, etag := f.body, f.etag
	if acceptsGzip(r) {
		body, etag = f.gz, f.etagGzip
		hd.Set("Content-Encoding", "gzip")
	}
	hd.Set("ETag", etag)
	http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(body))
}

// acceptsGzip reports whether the request's Accept-Encoding lists gzip
// (without q=0).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") {
			return strings.ReplaceAll(strings.TrimSpace(params), " ", "") != "q=0"
		}
	}
	return false
}
