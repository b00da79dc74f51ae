package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
)

// PlaygroundAssets are the files the playground page loads, embedded in the
// binary (playground/dist) and served by the kernel under /playground/assets/,
// so the page works offline. They are the files of the npm packages
// graphiql@4.1.2, react@18.2.0, react-dom@18.2.0 (the versions gqlgen's own
// playground uses) and graphql-ws@5.16.2, copied verbatim by
// playground/build.mjs from the packages locked in playground/package-lock.json
// (`cd edge/web/playground && node build.mjs` rebuilds them; TestPlaygroundAssetsFresh
// fails when they are stale). SRI is the Subresource Integrity hash of each
// file, checked by the browser and by TestPlaygroundAssetsMatchSRI.
var PlaygroundAssets = []PlaygroundAsset{
	{Name: "react.production.min.js", SRI: "sha256-S0lp+k7zWUMk2ixteM6HZvu8L9Eh//OVrt+ZfbCpmgY="},
	{Name: "react-dom.production.min.js", SRI: "sha256-IXWO0ITNDjfnNXIu5POVfqlgYoop36bDzhodR6LW5Pc="},
	{Name: "graphql-ws.min.js", SRI: "sha256-3rjNG0/q3VKuA2Wk34qJhH8pBMKoy9rIdWuNliwMuOQ="},
	{Name: "graphiql.min.js", SRI: "sha256-hnImuor1znlJkD/FOTL3jayfS/xsyNoP04abi8bFJWs="},
	{Name: "graphiql.min.css", SRI: "sha256-MEh+B2NdMSpj9kexQNN3QKc8UzMrCXW/Sx/phcpuyIU=", CSS: true},
}

// PlaygroundAsset is one script or stylesheet of the playground.
type PlaygroundAsset struct {
	Name string
	SRI  string
	CSS  bool
}

// URL is where the kernel serves the asset.
func (a PlaygroundAsset) URL() string { return playgroundAssetPrefix + a.Name }

const playgroundAssetPrefix = "/playground/assets/"

//go:embed playground/dist
var playgroundFiles embed.FS

// PlaygroundFile returns the embedded bytes of an asset.
func PlaygroundFile(name string) ([]byte, error) {
	return playgroundFiles.ReadFile("playground/dist/" + name)
}

// PlaygroundQuery is the playground's default editor text: example
// operations to run one after the other (select one with the run button's
// menu). It is also exercised by the docs test.
const PlaygroundQuery = `# Foya kernel playground. Run the operations one by one (the run button asks
# which). Ids come from the previous results: paste them into Variables, e.g.
#   {"connection": "con_…", "session": "ses_…"}
# Subscriptions run over WebSocket (graphql-transport-ws): keep WatchEvents
# running in one tab and SendMessage from another.

# 1. A connection to an OpenAI-compatible endpoint. apiKey "env:OPENAI_API_KEY"
#    is read from the kernel's environment; a local server needs no key.
mutation CreateConnection {
  createConnection(input: {name: "openai", baseUrl: "https://api.openai.com/v1", apiKey: "env:OPENAI_API_KEY", models: [{id: "gpt-4.1-mini"}]}) {
    id name apiKeyConfigured models { id }
  }
}

# 2. A session (without connectionId it takes the default language model).
mutation CreateSession($connection: ID) {
  createSession(input: {connectionId: $connection, title: "playground", approvalMode: ASK}) {
    id model phase headSeq
  }
}

# 3. Watch the session: persisted events after afterSeq, then live ones.
subscription WatchEvents($session: ID!) {
  sessionEvents(sessionId: $session, afterSeq: 0) {
    seq type at delta phase
    message { role text }
    approval { requestId tool summary }
    payload
  }
}

# 4. Send a message (in a second tab, while WatchEvents runs).
mutation SendMessage($session: ID!) {
  sendMessage(sessionId: $session, input: {text: "Say hello in five words."}) {
    turnStarted queueItem { id }
  }
}

query Sessions {
  sessions { id title phase model updatedAt }
  connections { id name baseUrl models { id } }
}
`

// The page's own script and stylesheet (playground/page): external files,
// since the page's Content-Security-Policy allows no inline script. Its
// settings are a JSON data block, which browsers do not execute.
//
//go:embed playground/page/playground.js playground/page/playground.css
var playgroundPageFiles embed.FS

// playgroundPageAssets are the page's own files, served under
// /playground/assets/ with the vendored ones.
var playgroundPageAssets = []string{"playground.js", "playground.css"}

var playgroundPage = template.Must(template.New("playground").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<link rel="stylesheet" href="/playground/assets/playground.css">
{{- range .Assets}}{{if .CSS}}
<link rel="stylesheet" href="{{.URL}}" integrity="{{.SRI}}">
{{- end}}{{end}}
<script type="application/json" id="foya-playground-config">{{.Config}}</script>
</head>
<body>
<a href="/" class="foya-web-link">Foya web (chat)</a>
<div id="graphiql"><div class="loading" id="foya-loading">Loading GraphiQL…<br>
(It needs JavaScript. The API works without it: POST {{.Endpoint}}, see the README.)</div></div>
{{- range .Assets}}{{if not .CSS}}
<script src="{{.URL}}" integrity="{{.SRI}}"></script>
{{- end}}{{end}}
<script src="/playground/assets/playground.js"></script>
</body>
</html>
`))

// PlaygroundHandler serves GraphiQL at /playground for endpoint (a path on this
// host) with subscriptions over graphql-transport-ws and example operations
// as the default query, and its embedded assets under /playground/assets/
// (gzip-compressed for clients that accept it; ETag revalidation). Nothing
// comes from another host.
func PlaygroundHandler(title, endpoint string) http.HandlerFunc {
	type config struct {
		Endpoint     string `json:"endpoint"`
		DefaultQuery string `json:"defaultQuery"`
	}
	data := struct {
		Title, Endpoint string
		Config          config
		Assets          []PlaygroundAsset
	}{title, endpoint, config{endpoint, PlaygroundQuery}, PlaygroundAssets}
	return func(w http.ResponseWriter, r *http.Request) {
		if name, ok := strings.CutPrefix(r.URL.Path, playgroundAssetPrefix); ok {
			serveAsset(w, r, name)
			return
		}
		if r.URL.Path != "/playground" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		if err := playgroundPage.Execute(w, data); err != nil {
			http.Error(w, "render playground", http.StatusInternalServerError)
		}
	}
}

type playgroundAsset struct {
	plain, gz []byte
	etag      string
}

var (
	assetsOnce   sync.Once
	assetsByName map[string]playgroundAsset
)

// loadAssets reads the embedded assets and compresses them once, on first use.
func loadAssets() {
	assetsByName = map[string]playgroundAsset{}
	for _, a := range PlaygroundAssets {
		plain, err := PlaygroundFile(a.Name)
		if err != nil {
			panic(err) // the embedded tree is fixed at build time
		}
		assetsByName[a.Name] = newPlaygroundAsset(plain)
	}
	for _, name := range playgroundPageAssets {
		plain, err := playgroundPageFiles.ReadFile("playground/page/" + name)
		if err != nil {
			panic(err)
		}
		assetsByName[name] = newPlaygroundAsset(plain)
	}
}

func newPlaygroundAsset(plain []byte) playgroundAsset {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(plain)
	zw.Close()
	sum := sha256.Sum256(plain)
	return playgroundAsset{plain: plain, gz: buf.Bytes(), etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
}

func serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	assetsOnce.Do(loadAssets)
	a, ok := assetsByName[name]
	if !ok || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	h.Add("Vary", "Accept-Encoding")
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.plain
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		body = a.gz
	}
	w.Write(body)
}
