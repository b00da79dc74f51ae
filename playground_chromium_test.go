package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/foya-dev/foya/graph"
	"github.com/foya-dev/foya/providers/openai/openaitest"

	"github.com/foya-dev/foya/internal/testenv"
)

const chromiumPath = "/usr/bin/chromium"

// TestPlaygroundInChromium loads the playground in a real headless Chromium,
// runs a query and a subscription through GraphiQL's own UI and sees an
// event arrive. The machine running the tests may be offline, so the page's
// CDN scripts are answered from the npm tarballs of the same package
// versions (npm pack; the registry must be reachable), intercepted with the
// DevTools protocol. The bytes are the CDN's: the page's Subresource
// Integrity hashes are checked by the browser.
func TestPlaygroundInChromium(t *testing.T) {
	if testing.Short() && !testenv.CI() {
		t.Skip("-short: skipping the headless Chromium playground check")
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		testenv.Optional(t, "%s is absent: skipping the headless playground check (apt-get install chromium; .ci/run does)", chromiumPath)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	assets := playgroundAssets(ctx, t)

	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	sid := k.chatSession(t, fake.BaseURL())

	b := startChromium(ctx, t)
	page := b.newPage(ctx, t)
	var mu sync.Mutex
	served := map[string]bool{}
	page.onFetch = func(url string) ([]byte, bool) {
		mu.Lock()
		defer mu.Unlock()
		body, ok := assets[url]
		served[url] = ok
		return body, ok
	}
	page.call(ctx, t, "Fetch.enable", map[string]any{"patterns": []any{map[string]any{"urlPattern": "https://*"}}}, nil)
	page.call(ctx, t, "Page.navigate", map[string]any{"url": "http://" + k.addr + "/playground"}, nil)

	page.waitJS(ctx, t, `!!document.querySelector('.graphiql-query-editor .CodeMirror') && !!window.foyaPlayground`, "GraphiQL to render")
	if !page.evalBool(ctx, t, `document.body.innerText.includes('Foya kernel playground') && document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.getValue().includes('subscription WatchEvents')`) {
		t.Fatal("the default query with the example operations is not in the editor")
	}
	// A query, run with the execute button.
	page.runOperation(ctx, t, `query { sessions { id title } }`)
	page.waitJS(ctx, t, fmt.Sprintf(`%s.includes(%q)`, responseJS, sid), "the query result")

	// A subscription over graphql-transport-ws, then an event from a turn.
	page.runOperation(ctx, t, fmt.Sprintf(`subscription { sessionEvents(sessionId: %q) { seq type delta } }`, sid))
	time.Sleep(500 * time.Millisecond) // let the subscription register (live only: no afterSeq)
	fake.Enqueue(openaitest.TextStream("gpt-t", "Hi from ", "the browser"))
	k.gql(t, `mutation($s: ID!) { sendMessage(sessionId: $s, input: {text: "hi"}) { turnStarted } }`, map[string]any{"s": sid}, nil)
	page.waitJS(ctx, t, responseJS+`.includes('"type"')`, "a subscription event in the response pane")
	got := page.evalString(ctx, t, responseJS)
	if !strings.Contains(got, "sessionEvents") {
		t.Fatalf("response pane: %s", got)
	}
	for url, ok := range served {
		if !ok {
			t.Errorf("the page asked for %s, which the test could not serve", url)
		}
	}
	t.Logf("subscription event shown by GraphiQL: %.200s", strings.Join(strings.Fields(got), " "))
}

// responseJS reads GraphiQL's response pane.
const responseJS = `(document.querySelector('.graphiql-response .CodeMirror')?.CodeMirror.getValue() || '')`

// playgroundAssets fetches the npm tarballs of the page's CDN assets and maps
// each asset URL to its bytes, checking them against the page's SRI hashes.
func playgroundAssets(ctx context.Context, t *testing.T) map[string][]byte {
	npm, err := exec.LookPath("npm")
	if err != nil {
		testenv.Optional(t, "npm is not installed: the playground's scripts cannot be provided offline; skipping the Chromium check")
	}
	re := regexp.MustCompile(`^https://cdn\.jsdelivr\.net/npm/((?:@[^/]+/)?[^@/]+)@([^/]+)/(.+)$`)
	dir := t.TempDir()
	files := map[string][]byte{}
	for _, a := range graph.PlaygroundAssets {
		m := re.FindStringSubmatch(a.URL)
		if m == nil {
			t.Fatalf("asset %s is not a jsDelivr npm URL", a.URL)
		}
		pkg, ver, file := m[1], m[2], m[3]
		tgz := filepath.Join(dir, strings.ReplaceAll(strings.TrimPrefix(pkg, "@"), "/", "-")+"-"+ver+".tgz")
		if _, err := os.Stat(tgz); err != nil {
			cmd := exec.CommandContext(ctx, npm, "pack", "--silent", pkg+"@"+ver)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Skipf("npm pack %s@%s failed (registry unreachable?): %v\n%s", pkg, ver, err, out)
			}
		}
		body, err := tarFile(tgz, "package/"+file)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(body)
		if sri := "sha256-" + base64.StdEncoding.EncodeToString(sum[:]); sri != a.SRI {
			t.Fatalf("%s: npm bytes hash to %s, the page declares %s", a.URL, sri, a.SRI)
		}
		files[a.URL] = body
	}
	return files
}

func tarFile(tgz, name string) ([]byte, error) {
	f, err := os.Open(tgz)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tgz, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			return nil, fmt.Errorf("%s in %s: %w", name, tgz, err)
		}
		if h.Name == name {
			return io.ReadAll(tr)
		}
	}
}

// browser is a headless Chromium driven over the DevTools protocol.
type browser struct {
	conn    *websocket.Conn
	mu      sync.Mutex
	nextID  int
	pending map[int]chan cdpMessage
	pages   map[string]*cdpPage
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct{ Message string }
	SessionID string `json:"sessionId,omitempty"`
}

func startChromium(ctx context.Context, t *testing.T) *browser {
	cmd := exec.CommandContext(ctx, chromiumPath, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--disable-dev-shm-usage", "--remote-debugging-port=0", "--user-data-dir="+t.TempDir(), "about:blank")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var logMu sync.Mutex
	var logs strings.Builder
	wsURL := make(chan string, 1)
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logMu.Lock()
			logs.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if u, ok := strings.CutPrefix(sc.Text(), "DevTools listening on "); ok {
				wsURL <- strings.TrimSpace(u)
			}
		}
		cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	var u string
	select {
	case u = <-wsURL:
	case <-exited:
		logMu.Lock()
		defer logMu.Unlock()
		t.Fatalf("chromium exited:\n%s", logs.String())
	case <-time.After(30 * time.Second):
		t.Fatal("chromium did not print its DevTools address in 30s")
	}
	conn, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetReadLimit(64 << 20)
	b := &browser{conn: conn, pending: map[int]chan cdpMessage{}, pages: map[string]*cdpPage{}}
	go b.read(ctx)
	t.Cleanup(func() { conn.CloseNow() })
	return b
}

func (b *browser) read(ctx context.Context) {
	for {
		_, data, err := b.conn.Read(ctx)
		if err != nil {
			return
		}
		var m cdpMessage
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch := b.pending[m.ID]; ch != nil {
				ch <- m
				delete(b.pending, m.ID)
			}
			b.mu.Unlock()
			continue
		}
		p := b.pages[m.SessionID]
		b.mu.Unlock()
		if p != nil && m.Method == "Fetch.requestPaused" {
			go p.fulfil(ctx, m.Params)
		}
	}
}

func (b *browser) send(ctx context.Context, sessionID, method string, params any) (json.RawMessage, error) {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpMessage, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if sessionID != "" {
		msg["sessionId"] = sessionID
	}
	raw, _ := json.Marshal(msg)
	if err := b.conn.Write(ctx, websocket.MessageText, raw); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// cdpPage is one tab.
type cdpPage struct {
	b         *browser
	sessionID string
	onFetch   func(url string) ([]byte, bool)
}

func (b *browser) newPage(ctx context.Context, t *testing.T) *cdpPage {
	var target struct{ TargetID string }
	res, err := b.send(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	if err != nil || json.Unmarshal(res, &target) != nil {
		t.Fatalf("create target: %v", err)
	}
	var att struct{ SessionID string }
	res, err = b.send(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true})
	if err != nil || json.Unmarshal(res, &att) != nil {
		t.Fatalf("attach: %v", err)
	}
	p := &cdpPage{b: b, sessionID: att.SessionID}
	b.mu.Lock()
	b.pages[att.SessionID] = p
	b.mu.Unlock()
	return p
}

func (p *cdpPage) call(ctx context.Context, t *testing.T, method string, params, out any) {
	t.Helper()
	res, err := p.b.send(ctx, p.sessionID, method, params)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			t.Fatal(err)
		}
	}
}

// fulfil answers an intercepted request from the npm files, or fails it.
func (p *cdpPage) fulfil(ctx context.Context, params json.RawMessage) {
	var ev struct {
		RequestID string
		Request   struct{ URL string }
	}
	if json.Unmarshal(params, &ev) != nil {
		return
	}
	body, ok := p.onFetch(ev.Request.URL)
	if !ok {
		_, _ = p.b.send(ctx, p.sessionID, "Fetch.failRequest", map[string]any{"requestId": ev.RequestID, "errorReason": "InternetDisconnected"})
		return
	}
	ctype := mime.TypeByExtension(path.Ext(ev.Request.URL))
	_, _ = p.b.send(ctx, p.sessionID, "Fetch.fulfillRequest", map[string]any{
		"requestId": ev.RequestID, "responseCode": 200,
		"responseHeaders": []any{
			map[string]string{"name": "Content-Type", "value": ctype},
			map[string]string{"name": "Access-Control-Allow-Origin", "value": "*"},
		},
		"body": base64.StdEncoding.EncodeToString(body),
	})
}

func (p *cdpPage) eval(ctx context.Context, t *testing.T, expr string) json.RawMessage {
	t.Helper()
	var r struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails *struct {
			Text      string
			Exception struct{ Description string }
		}
	}
	p.call(ctx, t, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r)
	if r.ExceptionDetails != nil {
		t.Fatalf("%s: %s %s", expr, r.ExceptionDetails.Text, r.ExceptionDetails.Exception.Description)
	}
	return r.Result.Value
}

func (p *cdpPage) evalBool(ctx context.Context, t *testing.T, expr string) bool {
	t.Helper()
	var v bool
	_ = json.Unmarshal(p.eval(ctx, t, expr), &v)
	return v
}

func (p *cdpPage) evalString(ctx context.Context, t *testing.T, expr string) string {
	t.Helper()
	var v string
	_ = json.Unmarshal(p.eval(ctx, t, expr), &v)
	return v
}

// waitJS polls expr until it is true (20s).
func (p *cdpPage) waitJS(ctx context.Context, t *testing.T, expr, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !p.evalBool(ctx, t, expr) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("timed out waiting for %s; page text: %.500s", what,
				p.evalString(ctx, t, `document.body.innerText`))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runOperation puts one operation in GraphiQL's editor and presses the
// execute button (a running subscription is stopped first).
func (p *cdpPage) runOperation(ctx context.Context, t *testing.T, op string) {
	t.Helper()
	raw, _ := json.Marshal(op)
	p.eval(ctx, t, fmt.Sprintf(`(async () => {
		const btn = () => document.querySelector('.graphiql-execute-button');
		if (btn().getAttribute('aria-label')?.startsWith('Stop')) { btn().click(); await new Promise(r => setTimeout(r, 200)); }
		document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.setValue(%s);
		await new Promise(r => setTimeout(r, 300));
		btn().click();
	})()`, raw))
}
