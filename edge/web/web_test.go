package web

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// Foya web's modules hang together: every module a script imports is
// embedded, index.html preloads every module (so the browser fetches them at
// once rather than one import level at a time), and each is served under
// /web/ as JavaScript (module scripts need a JavaScript MIME type).
func TestWebClientModules(t *testing.T) {
	names, err := fs.Glob(webFiles, "client/*.js")
	if err != nil || len(names) < 2 {
		t.Fatalf("client modules %v: %v", names, err)
	}
	index, _ := webFiles.ReadFile("client/index.html")
	if !strings.Contains(string(index), `<script type="module" src="/web/app.js">`) {
		t.Error("index.html does not load app.js as a module")
	}
	importRE := regexp.MustCompile(`(?m)^import (?:[^'"]* from )?'\./([\w.-]+)';`)
	h := ClientHandler()
	for _, n := range names {
		base := strings.TrimPrefix(n, "client/")
		if !strings.Contains(string(index), `<link rel="modulepreload" href="/web/`+base+`">`) {
			t.Errorf("index.html does not preload %s", base)
		}
		src, _ := webFiles.ReadFile(n)
		for _, m := range importRE.FindAllStringSubmatch(string(src), -1) {
			if _, err := fs.Stat(webFiles, "client/"+m[1]); err != nil {
				t.Errorf("%s imports %s, which is not embedded", base, m[1])
			}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/web/"+base, nil))
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/javascript") || rec.Body.String() != string(src) {
			t.Errorf("/web/%s: %d %q", base, rec.Code, rec.Header().Get("Content-Type"))
		}
	}
	for _, p := range []string{"/web/index.html", "/web/nope.js", "/web/../web.go", "/web/playground/x.js"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
		if rec.Code != 404 {
			t.Errorf("%s: %d, want 404", p, rec.Code)
		}
	}
}
