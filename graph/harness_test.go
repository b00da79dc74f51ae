package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/core/pubsub"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/edge"
	"github.com/foya-dev/foya/internal/gqltest"
	"github.com/foya-dev/foya/plugins/builtin/tools"
	"github.com/foya-dev/foya/plugins/host/hosttest"
	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/openai"
	"github.com/foya-dev/foya/providers/openai/openaitest"
	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/storage/artifacts"
)

type testKernel struct {
	svc       *session.Service
	catalog   *catalog.Catalog
	engine    *engine.Engine
	providers *fakeProviders
	lister    *fakeProvider
	blobs     *artifacts.Store
	// fake is the OpenAI-compatible endpoint the real provider talks to.
	fake   *openaitest.Server
	db     *storage.DB
	dbPath string // SQLite only
	pgURL  string // with FOYA_TEST_DATABASE: the test's PostgreSQL database
	srv    *httptest.Server
	// edge is the configuration srv's handler was made with.
	edge edge.Config
	// logs collects everything the kernel logged.
	logs *lockedBuffer
	// responses collects every response body of do.
	responses lockedBuffer
	// sleeps records the retry waits the engine asked for; they return at once.
	sleeps sleepLog
}

// sleepLog is the injected retry sleeper: it records and never waits.
type sleepLog struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *sleepLog) sleep(ctx context.Context, d time.Duration) error {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
	return ctx.Err()
}

func (l *sleepLog) all() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Duration(nil), l.d...)
}

// newTestKernel wires a kernel behind the real handler; opts adjust its
// engine configuration (func(*engine.Config)) or its server
// configuration (func(*edge.Config)), e.g. smaller limits.
func newTestKernel(t testing.TB, opts ...any) *testKernel {
	t.Helper()
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	st := openTestStorage(t, t.TempDir(), log)
	db, catStore := st.db, st.catalog
	k := &testKernel{db: db, dbPath: st.dbPath, pgURL: st.pgURL, logs: logs, fake: openaitest.New(t)}
	openaiProvider, _ := hosttest.NewInProcess(t, sdk.ServeConfig{Provider: openai.New(openai.Config{Logger: log})})
	_, toolRunner := hosttest.NewInProcess(t, sdk.ServeConfig{Tools: &testTools{}})
	_, builtinTools := hosttest.NewInProcess(t, sdk.ServeConfig{Tools: tools.New(tools.Config{})})
	k.lister = &fakeProvider{kind: "fakelist", caps: []core.ProviderCapability{core.CapModelLister}}
	k.providers = &fakeProviders{kinds: map[string]core.Provider{
		"openai":   openaiProvider,
		"native":   &nativeProvider{Provider: openaiProvider},
		"fakelist": k.lister,
		"nolist":   &fakeProvider{kind: "nolist"},
	}}
	cat, err := catalog.New(context.Background(), catalog.Config{
		Store: catStore, Providers: k.providers, Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := session.New(session.Config{Store: db, Broker: pubsub.New(pubsub.Config{Logger: log}), Logger: log, Models: cat, Changes: cat})
	if err != nil {
		t.Fatal(err)
	}
	k.svc, k.catalog = svc, cat
	blobs, err := artifacts.New(filepath.Join(t.TempDir(), "artifacts"))
	if err != nil {
		t.Fatal(err)
	}
	k.blobs = blobs
	ecfg := engine.Config{
		Sessions: svc, Catalog: cat, Providers: k.providers, Tools: engine.NewToolHub(map[string]core.ToolRunner{"test": toolRunner, "tools": builtinTools}, log),
		Attachments: db, Blobs: blobs, Describe: artifacts.Describe, History: db, ScratchDir: t.TempDir(), Logger: log,
		MaxSteps: 8, StopWait: 20 * time.Second,
		Retry: engine.RetryPolicy{Sleep: k.sleeps.sleep, Jitter: func() float64 { return 1 }},
	}
	for _, o := range opts {
		if f, ok := o.(func(*engine.Config)); ok {
			f(&ecfg)
		}
	}
	k.engine, err = engine.New(ecfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := edge.Config{Service: svc, Engine: k.engine, Usage: db, Catalog: cat, Backup: db, Logger: log}
	for _, o := range opts {
		switch f := o.(type) {
		case func(*edge.Config):
			f(&cfg)
		case func(*engine.Config):
		default:
			t.Fatalf("newTestKernel: option of type %T", o)
		}
	}
	srv := httptest.NewServer(edge.NewHandler(cfg))
	k.srv, k.edge = srv, cfg
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		k.engine.Close(ctx)
		srv.CloseClientConnections()
		srv.Close()
		db.Close()
	})
	return k
}

// withEdge is k served by another handler, made with k's configuration
// changed by change: the same store, services and engine (and so the same
// sessions), at a URL of its own until the test ends.
func (k *testKernel) withEdge(t testing.TB, change func(*edge.Config)) *testKernel {
	t.Helper()
	cfg := k.edge
	change(&cfg)
	srv := httptest.NewServer(edge.NewHandler(cfg))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return &testKernel{svc: k.svc, catalog: k.catalog, engine: k.engine, providers: k.providers, lister: k.lister, blobs: k.blobs,
		fake: k.fake, db: k.db, dbPath: k.dbPath, pgURL: k.pgURL, srv: srv, edge: cfg, logs: k.logs}
}

// raw posts one operation to the real handler over HTTP and returns the
// response body as it came.
func (k *testKernel) raw(t testing.TB, query string, vars map[string]any) []byte {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	resp, err := http.Post(k.srv.URL+"/graphql", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// do posts one operation to the real handler over HTTP.
func (k *testKernel) do(t testing.TB, query string, vars map[string]any) gqlResponse {
	t.Helper()
	raw := k.raw(t, query, vars)
	k.responses.Write(raw)
	var out gqlResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return out
}

// mustDo runs an operation that must succeed and decodes its data into v.
func (k *testKernel) mustDo(t testing.TB, query string, vars map[string]any, v any) {
	t.Helper()
	r := k.do(t, query, vars)
	if len(r.Errors) > 0 {
		t.Fatalf("%s: errors %+v", firstLine(query), r.Errors)
	}
	if v != nil {
		if err := json.Unmarshal(r.Data, v); err != nil {
			t.Fatalf("decode data %s: %v", r.Data, err)
		}
	}
}

// mustFail runs an operation that must fail with code, and returns the message.
func (k *testKernel) mustFail(t testing.TB, code, query string, vars map[string]any) string {
	t.Helper()
	r := k.do(t, query, vars)
	if len(r.Errors) == 0 {
		t.Fatalf("%s: succeeded with %s, want %s", firstLine(query), r.Data, code)
	}
	if got := r.Errors[0].Extensions.Code; got != code {
		t.Fatalf("%s: code %s (%s), want %s", firstLine(query), got, r.Errors[0].Message, code)
	}
	return r.Errors[0].Message
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i > 0 {
		return s[:i]
	}
	return s
}

// The raw-HTTP helpers shared with the edge tests live in internal/gqltest.
type (
	gqlError    = gqltest.Error
	gqlResponse = gqltest.Response
	httpReply   = gqltest.Reply
	wsMessage   = gqltest.WSMessage
	eventJSON   = gqltest.Event
)

const subscribeEvents = gqltest.SubscribeEvents

// postRaw posts body as is to k's /graphql.
func postRaw(t *testing.T, k *testKernel, contentType string, body io.Reader) httpReply {
	t.Helper()
	return gqltest.PostRaw(t, k.srv.URL+"/graphql", contentType, body)
}
