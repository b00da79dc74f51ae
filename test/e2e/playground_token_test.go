package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/internal/testenv"
)

// playgroundHarness runs the playground page's own script in Node against a
// real kernel. GraphiQL, React and the graphql-ws client (CDN scripts) are
// replaced by recorders; fetch is Node's real one, window.prompt answers
// from a list, and sessionStorage is a Map (localStorage and cookies throw,
// so any use of them fails the check).
const playgroundHarness = `
const answers = JSON.parse(process.env.ANSWERS);
const prompts = [];
const store = new Map();
globalThis.window = globalThis;
globalThis.location = new URL(process.env.BASE);
globalThis.document = { getElementById: (id) => (id === 'foya-playground-config' ? { textContent: process.env.CONFIG } : {}) };
Object.defineProperty(globalThis, 'sessionStorage', { value: {
  getItem: (k) => (store.has(k) ? store.get(k) : null), setItem: (k, v) => store.set(k, String(v)), removeItem: (k) => store.delete(k),
} });
Object.defineProperty(globalThis, 'localStorage', { get() { throw new Error('localStorage used'); } });
Object.defineProperty(document, 'cookie', { get() { throw new Error('cookie used'); }, set() { throw new Error('cookie used'); } });
window.prompt = (msg) => { prompts.push(msg); return answers.shift() ?? null; };
let fetcherOpts, wsOpts;
globalThis.React = { createElement: () => ({}) };
globalThis.ReactDOM = { render: () => {} };
globalThis.GraphiQL = function () {};
GraphiQL.createFetcher = (o) => { fetcherOpts = o; return () => {}; };
globalThis.graphqlWs = { createClient: (o) => { wsOpts = o; return {}; } };
%SCRIPT%
const check = (ok, what) => { if (!ok) { console.error('FAIL: ' + what, JSON.stringify({ prompts, store: [...store] })); process.exit(1); } };
const post = () => fetcherOpts.fetch(location.origin + '/graphql', {
  method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' },
  body: JSON.stringify({ query: '{ sessions { id } }' }),
});
(async () => {
  // The first answer is wrong: the page says so and asks again.
  const resp = await post();
  const body = await resp.json();
  check(resp.status === 200 && body.data && Array.isArray(body.data.sessions), 'POST after asking: ' + resp.status + ' ' + JSON.stringify(body));
  check(prompts.length === 2 && /refused/.test(prompts[1]), 'asked twice, the second time saying the token was refused');
  check(store.get('foya-token') === process.env.TOKEN, 'token kept in sessionStorage');
  // Later requests reuse it without asking.
  check((await post()).status === 200 && prompts.length === 2, 'second POST without asking');
  // Subscriptions: the token goes in connection_init.
  const params = wsOpts.connectionParams();
  check(params.authorization === 'Bearer ' + process.env.TOKEN, 'connectionParams: ' + JSON.stringify(params));
  check(wsOpts.shouldRetry({ code: 4403 }) === false && wsOpts.shouldRetry({ code: 1006 }) === true, 'no retry loop on 4403');
  // A WebSocket closed with 4403 (rotation) asks again.
  wsOpts.on.closed({ code: 4403 });
  check(prompts.length === 3, 'asked again after a 4403 close');
  console.log('ok: ' + prompts.length + ' prompts');
})().catch((e) => { console.error(e); process.exit(1); });
`

// The playground asks for the token when the kernel answers
// UNAUTHENTICATED, keeps it in sessionStorage only, and sends it on POST
// and in connection_init. Its page script runs in Node (the headless
// Chromium check covers the real GraphiQL UI without a token).
func TestPlaygroundAsksForToken(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Optional(t, "node is not installed: skipping the playground token check")
	}
	tokFile := filepath.Join(t.TempDir(), "token")
	k := startKernel(t, t.TempDir(), "--require-token", "--auth-token-file", tokFile)
	raw, err := os.ReadFile(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(raw))
	resp, err := http.Get(k.url() + "/playground")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// The page has no inline script (its Content-Security-Policy forbids
	// them): its own script is /playground/assets/playground.js, its
	// settings a JSON data block.
	if inline := regexp.MustCompile(`<script>`).FindAll(page, -1); len(inline) != 0 {
		t.Fatalf("want no inline script in the page, got %d", len(inline))
	}
	config := regexp.MustCompile(`(?s)<script type="application/json" id="foya-playground-config">(.*?)</script>`).FindSubmatch(page)
	if config == nil || !strings.Contains(string(page), `<script src="/playground/assets/playground.js"></script>`) {
		t.Fatalf("no settings block or page script in the playground:\n%s", page)
	}
	resp, err = http.Get(k.url() + "/playground/assets/playground.js")
	if err != nil {
		t.Fatal(err)
	}
	script, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	js := filepath.Join(t.TempDir(), "page.mjs")
	if err := os.WriteFile(js, []byte(strings.Replace(playgroundHarness, "%SCRIPT%", string(script), 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, js)
	cmd.Env = append(os.Environ(), "BASE="+k.url(), "TOKEN="+token, "CONFIG="+string(config[1]),
		`ANSWERS=["`+strings.Repeat("w", 43)+`", "`+token+`", "`+token+`"]`)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok:") {
		t.Fatalf("playground script: %v\n%s\nkernel log:\n%s", err, out, k.Logs())
	}
}
