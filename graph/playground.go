package graph

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
// (`cd graph/playground && node build.mjs` rebuilds them; TestPlaygroundAssetsFresh
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

var playgroundPage = template.Must(template.New("playground").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>body{margin:0}#graphiql{height:100vh}.loading{height:100%;display:flex;align-items:center;justify-content:center;font:1.2rem sans-serif;color:#555;padding:2rem;text-align:center}</style>
{{- range .Assets}}{{if .CSS}}
<link rel="stylesheet" href="{{.URL}}" integrity="{{.SRI}}">
{{- end}}{{end}}
</head>
<body>
<a href="/" style="position:fixed;right:.6rem;bottom:.4rem;z-index:10;font:13px sans-serif">Foya web (chat)</a>
<div id="graphiql"><div class="loading" id="foya-loading">Loading GraphiQL…<br>
(It needs JavaScript. The API works without it: POST {{.Endpoint}}, see the README.)</div></div>
{{- range .Assets}}{{if not .CSS}}
<script src="{{.URL}}" integrity="{{.SRI}}"></script>
{{- end}}{{end}}
<script>
(function () {
  const endpoint = {{.Endpoint}};
  const url = location.protocol + '//' + location.host + endpoint;
  const subscriptionUrl = (location.protocol === 'https:' ? 'wss:' : 'ws:') + '//' + location.host + endpoint;
  if (!window.GraphiQL || !window.graphqlWs || !window.React || !window.ReactDOM) {
    document.getElementById('foya-loading').textContent =
      'GraphiQL could not be loaded from this kernel. The API itself works: POST ' + url + '.';
    return;
  }
  // A kernel that requires a token answers UNAUTHENTICATED (HTTP 401, or a
  // WebSocket closed with 4403). The page then asks for the token and keeps
  // it in sessionStorage only: this tab, until it is closed; never in
  // localStorage, cookies or the URL.
  const tokenKey = 'foya-token';
  const token = () => sessionStorage.getItem(tokenKey) || '';
  const askToken = (refused) => {
    const t = window.prompt((refused ? 'The kernel refused the token (was it rotated?).\n' : '') +
      'This kernel requires its bearer token: run "foya token show" where the kernel runs ' +
      '(or read the auth-token file in its data directory). It is kept in this tab only.');
    if (!t || !t.trim()) return false;
    sessionStorage.setItem(tokenKey, t.trim());
    return true;
  };
  const unauthenticated = async (resp) => {
    if (resp.status !== 401) return false;
    try {
      const body = await resp.clone().json();
      return !!(body.errors && body.errors.some((e) => e.extensions && e.extensions.code === 'UNAUTHENTICATED'));
    } catch (e) {
      return false;
    }
  };
  // POST (and SSE) requests carry the token as a Bearer header.
  const authFetch = async (input, init) => {
    for (let attempt = 0; ; attempt++) {
      const headers = new Headers((init && init.headers) || {});
      const t = token();
      if (t && !headers.has('Authorization')) headers.set('Authorization', 'Bearer ' + t);
      const resp = await fetch(input, Object.assign({}, init, { headers }));
      if (attempt >= 3 || !(await unauthenticated(resp)) || !askToken(t !== '')) return resp;
    }
  };
  window.foyaAuth = { tokenKey, token, askToken, authFetch };
  // Subscriptions use the graphql-transport-ws protocol of the graphql-ws
  // client; the token goes in connection_init.
  const wsClient = graphqlWs.createClient({
    url: subscriptionUrl, lazy: true, retryAttempts: 3,
    connectionParams: () => (token() ? { authorization: 'Bearer ' + token() } : {}),
    shouldRetry: (e) => !(e && e.code === 4403),
    on: { closed: (e) => { if (e && e.code === 4403) askToken(token() !== ''); } },
  });
  const fetcher = GraphiQL.createFetcher({ url, wsClient, fetch: authFetch });
  window.foyaPlayground = { fetcher, url, subscriptionUrl };
  ReactDOM.render(
    React.createElement(GraphiQL, {
      fetcher,
      defaultQuery: {{.DefaultQuery}},
      defaultEditorToolsVisibility: true,
      isHeadersEditorEnabled: true,
      inputValueDeprecation: true,
    }),
    document.getElementById('graphiql'),
  );
})();
</script>
</body>
</html>
`))

// PlaygroundHandler serves GraphiQL at /playground for endpoint (a path on this
// host) with subscriptions over graphql-transport-ws and example operations
// as the default query, and its embedded assets under /playground/assets/
// (gzip-compressed for clients that accept it; ETag revalidation). Nothing
// comes from another host.
func PlaygroundHandler(title, endpoint string) http.HandlerFunc {
	data := struct {
		Title, Endpoint, DefaultQuery string
		Assets                        []PlaygroundAsset
	}{title, endpoint, PlaygroundQuery, PlaygroundAssets}
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
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(plain)
		zw.Close()
		sum := sha256.Sum256(plain)
		assetsByName[a.Name] = playgroundAsset{plain: plain, gz: buf.Bytes(), etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
	}
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
