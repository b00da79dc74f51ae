package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/foya-dev/foya/providers/openai/openaitest"

	"github.com/foya-dev/foya/internal/testenv"
)

const chromiumPath = "/usr/bin/chromium"

// TestPlaygroundInChromium loads the playground in a real headless Chromium
// with every request to a host other than the kernel blocked (intercepted
// with the DevTools protocol and failed as InternetDisconnected), then runs a
// query and a subscription through GraphiQL's own UI and sees an event
// arrive. GraphiQL, React and graphql-ws are embedded in the binary, so the
// page must render offline and must not even try another host. Under
// CI=true a missing Chromium is a failure, not a skip.
func TestPlaygroundInChromium(t *testing.T) {
	t.Parallel()
	if testing.Short() && !testenv.CI() {
		t.Skip("-short: skipping the headless Chromium playground check")
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		testenv.Optional(t, "%s is absent: skipping the headless playground check (apt-get install chromium; .ci/run does)", chromiumPath)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	sid := k.chatSession(t, fake.BaseURL())

	b := startChromium(ctx, t)
	page := b.newPage(ctx, t)
	page.allowHost = k.addr
	page.call(ctx, t, "Fetch.enable", map[string]any{"patterns": []any{map[string]any{"urlPattern": "*"}}}, nil)
	// Violations of the page's Content-Security-Policy are collected: the
	// browser's log, and the page's securitypolicyviolation events.
	page.call(ctx, t, "Log.enable", map[string]any{}, nil)
	page.call(ctx, t, "Page.enable", map[string]any{}, nil)
	page.call(ctx, t, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": `window.__csp = []; document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));`}, nil)
	// The web link with the token in the fragment (the kernel requires it).
	page.call(ctx, t, "Page.navigate", map[string]any{"url": "http://" + k.addr + "/playground#token=" + k.token}, nil)

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
	k.sendMessage(t, sid, "hi")
	page.waitJS(ctx, t, responseJS+`.includes('"type"')`, "a subscription event in the response pane")
	got := page.evalString(ctx, t, responseJS)
	if !strings.Contains(got, "sessionEvents") {
		t.Fatalf("response pane: %s", got)
	}
	if csp := page.evalString(ctx, t, `JSON.stringify(window.__csp || 'no listener')`); csp != "[]" {
		t.Errorf("Content-Security-Policy violations: %s", csp)
	}
	page.mu.Lock()
	for _, l := range page.logs {
		if strings.Contains(l, "Content Security Policy") {
			t.Errorf("browser log: %s", l)
		}
	}
	page.mu.Unlock()
	// The policy is in force: an inline script added now does not run.
	page.evalString(ctx, t, `(() => { const s = document.createElement('script'); s.textContent = 'window.__inlineRan = true'; document.body.appendChild(s); return ''; })()`)
	page.waitJS(ctx, t, `window.__csp.some((v) => v.startsWith('script-src'))`, "the violation report of an inline script")
	if page.evalBool(ctx, t, `!!window.__inlineRan`) {
		t.Error("an inline script ran under the page's policy")
	}
	if href := page.evalString(ctx, t, `location.href + ' ' + (sessionStorage.getItem('foya-token') === `+strconv.Quote(k.token)+`)`); href != "http://"+k.addr+"/playground true" {
		t.Errorf("after the web link: %s (want the token in sessionStorage, not in the address bar)", href)
	}
	page.mu.Lock()
	defer page.mu.Unlock()
	if len(page.blocked) > 0 {
		t.Errorf("the page tried hosts other than the kernel: %v", page.blocked)
	}
	if page.allowed == 0 {
		t.Error("no request to the kernel went through the interception")
	}
	t.Logf("%d kernel requests, none elsewhere; subscription event shown by GraphiQL: %.200s", page.allowed, strings.Join(strings.Fields(got), " "))
}

// TestPlaygroundAssetsFresh rebuilds the playground's embedded files from the
// npm packages locked in edge/web/playground (node build.mjs --check: npm ci in a
// temporary directory, then a byte comparison) and fails when
// edge/web/playground/dist is stale. It needs node and the npm registry; without
// them it is skipped, except under CI=true.
func TestPlaygroundAssetsFresh(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skipping the npm check of the playground assets")
	}
	skip := func(format string, args ...any) {
		t.Helper()
		testenv.Optional(t, format, args...)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skip("node is not installed: skipping the playground assets check")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		skip("npm is not installed: skipping the playground assets check")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "build.mjs", "--check")
	cmd.Dir = repoPath("edge", "web", "playground")
	out, err := cmd.CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "is stale") {
			t.Fatalf("%s", out)
		}
		skip("npm pack of the playground packages failed (registry unreachable?): %v\n%s", err, out)
	}
	t.Log(strings.TrimSpace(string(out)))
}

// responseJS reads GraphiQL's response pane.
const responseJS = `(document.querySelector('.graphiql-response .CodeMirror')?.CodeMirror.getValue() || '')`

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
		if p != nil && m.Method == "Log.entryAdded" {
			var e struct {
				Entry struct{ Source, Level, Text string }
			}
			if json.Unmarshal(m.Params, &e) == nil {
				p.mu.Lock()
				p.logs = append(p.logs, e.Entry.Source+" "+e.Entry.Level+": "+e.Entry.Text)
				p.mu.Unlock()
			}
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
	// allowHost is the only host:port intercepted requests may reach; the
	// others are failed and recorded in blocked.
	allowHost string
	mu        sync.Mutex
	blocked   []string
	allowed   int
	logs      []string // the browser's log entries (Log.enable)
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

// fulfil lets an intercepted request to the kernel through and fails any
// other (as if offline), recording it.
func (p *cdpPage) fulfil(ctx context.Context, params json.RawMessage) {
	var ev struct {
		RequestID string
		Request   struct{ URL string }
	}
	if json.Unmarshal(params, &ev) != nil {
		return
	}
	u, err := url.Parse(ev.Request.URL)
	p.mu.Lock()
	ok := err == nil && u.Host == p.allowHost
	if ok {
		p.allowed++
	} else {
		p.blocked = append(p.blocked, ev.Request.URL)
	}
	p.mu.Unlock()
	if ok {
		_, _ = p.b.send(ctx, p.sessionID, "Fetch.continueRequest", map[string]any{"requestId": ev.RequestID})
		return
	}
	_, _ = p.b.send(ctx, p.sessionID, "Fetch.failRequest", map[string]any{"requestId": ev.RequestID, "errorReason": "InternetDisconnected"})
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
