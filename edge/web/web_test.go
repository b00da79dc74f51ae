package web

import (
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// get asks h for target with the given request headers (name, value, …).
func get(h http.Handler, target string, headers ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// Foya web's modules hang together: every module a script imports is
// embedded, index.html loads boot.js first (a classic script in <head>) and
// preloads every other module (so the browser fetches them together rather
// than one import level at a time), and each is served under /web/ as
// JavaScript (module scripts need a JavaScript MIME type).
func TestWebClientModules(t *testing.T) {
	names, err := fs.Glob(webFiles, "client/*.js")
	if err != nil || len(names) < 2 {
		t.Fatalf("client modules %v: %v", names, err)
	}
	index, _ := webFiles.ReadFile("client/index.html")
	if !strings.Contains(string(index), `<script type="module" src="/web/app.js">`) || !strings.Contains(string(index), `<script src="/web/boot.js">`) {
		t.Error("index.html does not load boot.js, then app.js as a module")
	}
	importRE := regexp.MustCompile(`(?m)^(?:import|export) (?:[^'"]* from )?'\./([\w.-]+)';`)
	h := ClientHandler()
	for _, n := range names {
		base := strings.TrimPrefix(n, "client/")
		if base != "boot.js" && !strings.Contains(string(index), `<link rel="modulepreload" href="/web/`+base+`">`) {
			t.Errorf("index.html does not preload %s", base)
		}
		src, _ := webFiles.ReadFile(n)
		for _, m := range importRE.FindAllStringSubmatch(string(src), -1) {
			if _, err := fs.Stat(webFiles, "client/"+m[1]); err != nil {
				t.Errorf("%s imports %s, which is not embedded", base, m[1])
			}
		}
		rec := get(h, "/web/"+base)
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/javascript") {
			t.Errorf("/web/%s: %d %q", base, rec.Code, rec.Header().Get("Content-Type"))
		}
	}
	for _, p := range []string{"/web/index.html", "/web/nope.js", "/web/../web.go", "/web/playground/x.js", "/index.html"} {
		if rec := get(h, p); rec.Code != 404 {
			t.Errorf("%s: %d, want 404", p, rec.Code)
		}
	}
}

// The page names its assets by versioned URLs (?v=, in index.html and in
// every import) that are cached for good; an asset asked for without the
// version is revalidated. Answers are gzip-compressed when the browser
// accepts it, and a known ETag gets 304 Not Modified.
func TestWebClientCaching(t *testing.T) {
	h := ClientHandler()
	page := get(h, "/")
	if page.Code != 200 || page.Header().Get("Cache-Control") != "no-cache" || page.Header().Get("ETag") == "" {
		t.Fatalf("/: %d %v", page.Code, page.Header())
	}
	var refs [][]string
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?:src|href)="(/web/[\w.-]+\?v=[0-9a-f]{12})"`).FindAllStringSubmatch(page.Body.String(), -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			refs = append(refs, m)
		}
	}
	names, _ := fs.Glob(webFiles, "client/*.[jc]s*")
	if len(refs) != len(names) {
		t.Fatalf("index.html names %d versioned assets, the client has %d files besides it: %v", len(refs), len(names), refs)
	}
	version := refs[0][1][strings.Index(refs[0][1], "?v=")+3:]
	for _, ref := range refs {
		rec := get(h, ref[1], "Accept-Encoding", "gzip, deflate, br")
		if rec.Code != 200 || rec.Header().Get("Cache-Control") != "public, max-age=31536000, immutable" || rec.Header().Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s: %d %v", ref[1], rec.Code, rec.Header())
		}
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(zr)
		plain := get(h, ref[1])
		if plain.Header().Get("Content-Encoding") != "" || plain.Body.String() != string(body) {
			t.Errorf("%s: the gzip body differs from the plain one", ref[1])
		}
		for _, imp := range regexp.MustCompile(`(?m)^(?:import|export)\b[^'\n]*'(\./[^']+)'`).FindAllStringSubmatch(string(body), -1) {
			if !strings.HasSuffix(imp[1], ".js?v="+version) {
				t.Errorf("%s imports %s, not versioned", ref[1], imp[1])
			}
		}
		if again := get(h, ref[1], "Accept-Encoding", "gzip", "If-None-Match", rec.Header().Get("ETag")); again.Code != http.StatusNotModified {
			t.Errorf("%s with its ETag: %d, want 304", ref[1], again.Code)
		}
	}
	if rec := get(h, "/web/app.js"); rec.Code != 200 || rec.Header().Get("Cache-Control") != "no-cache" {
		t.Errorf("/web/app.js unversioned: %d %v", rec.Code, rec.Header())
	}
	if rec := get(h, "/web/app.js?v=000000000000"); rec.Header().Get("Cache-Control") != "no-cache" {
		t.Errorf("/web/app.js of another version: %v", rec.Header())
	}
	if rec := get(h, "/", "Accept-Encoding", "gzip;q=0"); rec.Header().Get("Content-Encoding") != "" {
		t.Errorf("gzip;q=0 still compressed")
	}
}
