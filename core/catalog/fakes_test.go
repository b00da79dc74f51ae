package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
)

// fakeProvider is a hand-written core.Provider; nil Fn fields fall back to
// harmless defaults.
type fakeProvider struct {
	KindFn         func() string
	CapabilitiesFn func() []core.ProviderCapability
	ListModelsFn   func(ctx context.Context, ep core.Endpoint) ([]core.Model, error)
}

func (p *fakeProvider) Kind() string {
	if p.KindFn != nil {
		return p.KindFn()
	}
	return "openai"
}

func (p *fakeProvider) Capabilities() []core.ProviderCapability {
	if p.CapabilitiesFn != nil {
		return p.CapabilitiesFn()
	}
	return nil
}

func (p *fakeProvider) Stream(context.Context, core.Endpoint, core.ProviderRequest) (core.ProviderStream, error) {
	return nil, core.Errorf(core.CodeUnavailable, "fake provider does not stream")
}

func (p *fakeProvider) Complete(context.Context, core.Endpoint, core.ProviderRequest) (core.Completion, error) {
	return core.Completion{}, core.Errorf(core.CodeUnavailable, "fake provider does not complete")
}

func (p *fakeProvider) ListModels(ctx context.Context, ep core.Endpoint) ([]core.Model, error) {
	if p.ListModelsFn != nil {
		return p.ListModelsFn(ctx, ep)
	}
	return nil, core.Errorf(core.CodeUnavailable, "fake provider does not list models")
}

// fakeLookup serves providers by kind.
type fakeLookup map[string]core.Provider

func (l fakeLookup) Provider(kind string) (core.Provider, error) {
	if p, ok := l[kind]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("no provider plugin serves %q (known: openai, lister)", kind)
}

// memStore is an in-memory core.CatalogStore.
type memStore struct {
	mu     sync.Mutex
	data   core.CatalogData
	saves  int
	SaveFn func(core.CatalogData) error
}

func (s *memStore) Load(context.Context) (core.CatalogData, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.data, nil
}

func (s *memStore) Save(_ context.Context, d core.CatalogData) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.SaveFn != nil {
		if err := s.SaveFn(d); err != nil {
			return err
		}
	}
	s.data = d
	s.saves++
	return nil
}

func (s *memStore) saveCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saves
}

type harness struct {
	cat      *catalog.Catalog
	store    *memStore
	lister   *fakeProvider
	mu       sync.Mutex
	changes  []core.CatalogChange
	lookup   fakeLookup
	ctx      context.Context
	tb       testing.TB
	listed   []core.Model
	listErr  error
	lastSeen core.Endpoint
}

// newHarness builds a catalog with two provider kinds: "openai" (no model
// lister) and "lister" (lists h.listed).
func newHarness(t testing.TB, initial core.CatalogData) *harness {
	t.Helper()
	h := &harness{store: &memStore{data: initial}, ctx: context.Background(), tb: t}
	h.lister = &fakeProvider{
		KindFn:         func() string { return "lister" },
		CapabilitiesFn: func() []core.ProviderCapability { return []core.ProviderCapability{core.CapModelLister} },
		ListModelsFn: func(_ context.Context, ep core.Endpoint) ([]core.Model, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.lastSeen = ep
			return h.listed, h.listErr
		},
	}
	h.lookup = fakeLookup{"openai": &fakeProvider{}, "lister": h.lister}
	cat, err := catalog.New(h.ctx, catalog.Config{
		Store:     h.store,
		Providers: h.lookup,
	})
	if err != nil {
		t.Fatal(err)
	}
	cat.Watch(func(_ context.Context, c core.CatalogChange) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.changes = append(h.changes, c)
	})
	h.cat = cat
	return h
}

func (h *harness) lastChange() core.CatalogChange {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.changes) == 0 {
		h.tb.Fatal("no catalog change reported")
	}
	return h.changes[len(h.changes)-1]
}

func (h *harness) changeCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.changes)
}

func (h *harness) create(in core.ConnectionInput) core.Connection {
	h.tb.Helper()
	c, err := h.cat.CreateConnection(h.ctx, in)
	if err != nil {
		h.tb.Fatalf("create connection: %v", err)
	}
	return c
}

func catModels(ids ...string) []core.Model {
	out := make([]core.Model, len(ids))
	for i, id := range ids {
		out[i] = core.Model{ID: id}
	}
	return out
}

func catPtr[T any](v T) *T { return &v }

// connSeq numbers the names validConnInput gives: names are unique.
var connSeq atomic.Int64

func validConnInput() core.ConnectionInput {
	n := connSeq.Add(1)
	name := "Local"
	if n > 1 {
		name = fmt.Sprintf("Local %d", n)
	}
	return core.ConnectionInput{
		Name:    name,
		BaseURL: "http://localhost:8080/v1",
		Models:  catModels("m1", "m2"),
	}
}

func wantCatCode(t *testing.T, err error, code core.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s error, got nil", code)
	}
	if got := core.ErrorCode(err); got != code {
		t.Fatalf("want %s error, got %s: %v", code, got, err)
	}
}

var errCatBoom = errors.New("boom")
