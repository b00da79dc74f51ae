package edge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
	"github.com/foya-dev/foya/core/coretest"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/core/pubsub"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/edge"
	"github.com/foya-dev/foya/internal/gqltest"
	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/storage/artifacts"
	"github.com/foya-dev/foya/storage/catalogfile"
)

// The HTTP edge's tests run a real kernel (SQLite storage, the core
// services, the engine) behind edge.NewHandler on an httptest server, and
// speak HTTP, SSE and graphql-transport-ws to it. No provider is needed:
// these tests check transports, guards and limits, never a turn.

type testKernel struct {
	svc    *session.Service
	engine *engine.Engine
	srv    *httptest.Server
}

// noProviders is a provider lookup that knows no provider.
type noProviders struct{}

func (noProviders) Provider(kind string) (core.Provider, error) {
	return nil, fmt.Errorf("provider %q: %w", kind, core.ErrNotFound)
}

// newTestKernel wires a kernel behind the real handler; opts adjust its
// server configuration (func(*edge.Config)), e.g. smaller limits.
func newTestKernel(t testing.TB, opts ...func(*edge.Config)) *testKernel {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	dir := t.TempDir()
	db, err := storage.Open(ctx, filepath.Join(dir, "foya.db"), log)
	if err != nil {
		t.Fatal(err)
	}
	catStore, err := catalogfile.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.New(ctx, catalog.Config{Store: catStore, Providers: noProviders{}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := session.New(session.Config{Store: db, Broker: pubsub.New(pubsub.Config{Logger: log}), Logger: log, Models: cat, Changes: cat})
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := artifacts.New(filepath.Join(dir, "artifacts"))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{
		Sessions: svc, Catalog: cat, Providers: noProviders{},
		Attachments: db, Blobs: blobs, Describe: artifacts.Describe, History: db, ScratchDir: t.TempDir(), Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := edge.Config{Service: svc, Engine: eng, Usage: db, Catalog: cat, Logger: log}
	for _, o := range opts {
		o(&cfg)
	}
	srv := httptest.NewServer(edge.NewHandler(cfg))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		eng.Close(ctx)
		srv.CloseClientConnections()
		srv.Close()
		db.Close()
	})
	return &testKernel{svc: svc, engine: eng, srv: srv}
}

// mustDo posts an operation that must succeed and decodes its data into v.
func (k *testKernel) mustDo(t testing.TB, query string, vars map[string]any, v any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	resp, err := http.Post(k.srv.URL+"/graphql", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r gqlResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	if len(r.Errors) > 0 {
		t.Fatalf("%s: errors %+v", strings.SplitN(strings.TrimSpace(query), "\n", 2)[0], r.Errors)
	}
	if v != nil {
		if err := json.Unmarshal(r.Data, v); err != nil {
			t.Fatalf("decode data %s: %v", r.Data, err)
		}
	}
}

// seedSession creates a session holding n user messages.
func seedSession(t *testing.T, k *testKernel, n int) string {
	t.Helper()
	s, err := k.svc.CreateSession(context.Background(), core.CreateSessionInput{})
	if err != nil {
		t.Fatal(err)
	}
	batch := make([]core.Event, n)
	for i := range batch {
		batch[i] = coretest.MessageEvent(t, s.ID, core.RoleUser, fmt.Sprintf("old %d", i))
	}
	if _, err := k.svc.Append(context.Background(), s.ID, batch...); err != nil {
		t.Fatal(err)
	}
	return s.ID
}

// The raw-HTTP helpers shared with the graph tests live in internal/gqltest.
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
