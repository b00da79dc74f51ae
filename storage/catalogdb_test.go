package storage_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
	"github.com/foya-dev/foya/core/mcp"
	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/storage/pgtest"
)

type anyProvider struct{}

func (anyProvider) Provider(string) (core.Provider, error) { return nil, nil }

func newSealer(t *testing.T) *storage.Sealer {
	t.Helper()
	key := make([]byte, 32)
	rand.Read(key)
	s, err := storage.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSharedCatalogTwoKernels: two kernels (two connection pools, two
// catalogs) on one PostgreSQL database see each other's changes at their
// next read, concurrent changes are all kept (a stale save is redone on the
// fresh catalog, never overwrites), keys and MCP secrets are sealed (absent
// in plain text from every table), and a kernel with another key refuses
// to start.
func TestSharedCatalogTwoKernels(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	sealer := newSealer(t)
	open := func() (*storage.DB, *catalog.Catalog, *mcp.Service) {
		db, err := storage.OpenPostgres(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := db.CheckSecretKey(ctx, sealer); err != nil {
			t.Fatal(err)
		}
		cat, err := catalog.New(ctx, catalog.Config{Store: db.CatalogStore(sealer), Providers: anyProvider{}})
		if err != nil {
			t.Fatal(err)
		}
		mcp, err := mcp.New(ctx, mcp.Config{Store: db.MCPStore(sealer), Runtime: nopRuntime{}})
		if err != nil {
			t.Fatal(err)
		}
		return db, cat, mcp
	}
	dbA, catA, mcpA := open()
	_, catB, mcpB := open()

	key := "sk-shared-secret-0123456789"
	conn, err := catA.CreateConnection(ctx, core.ConnectionInput{Name: "one", BaseURL: "http://127.0.0.1:1/v1", APIKey: &key,
		Models: []core.Model{{ID: "m1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := catA.SetDefaultModel(ctx, core.PurposeLanguage, &core.ModelRef{ConnectionID: conn.ID, Model: "m1"}); err != nil {
		t.Fatal(err)
	}
	ep, err := catB.Endpoint(ctx, conn.ID)
	if err != nil || ep.APIKey != key {
		t.Fatalf("B's endpoint of A's connection: %+v, %v", ep, err)
	}
	if d, _ := catB.Defaults(ctx); d.Language == nil || d.Language.Model != "m1" {
		t.Fatalf("B's defaults: %+v", d)
	}

	// Concurrent creates on both kernels: every success is kept.
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := map[string]bool{conn.ID: true}
	for k, cat := range []*catalog.Catalog{catA, catB} {
		wg.Go(func() {
			for i := range 5 {
				c, err := cat.CreateConnection(ctx, core.ConnectionInput{Name: fmt.Sprintf("c-%d-%d", k, i), BaseURL: "http://127.0.0.1:1/v1"})
				if err != nil {
					if !errors.Is(err, core.ErrStale) {
						t.Errorf("create: %v", err)
					}
					continue
				}
				mu.Lock()
				created[c.ID] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for name, cat := range map[string]*catalog.Catalog{"A": catA, "B": catB} {
		conns, err := cat.Connections(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(conns) != len(created) {
			t.Errorf("%s sees %d connections, %d were created", name, len(conns), len(created))
		}
		for _, c := range conns {
			if !created[c.ID] {
				t.Errorf("%s sees unknown connection %s", name, c.ID)
			}
		}
	}

	// A save over a newer version is refused, not applied.
	stale := dbA.CatalogStore(sealer)
	if _, err := stale.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := catB.DeleteConnection(ctx, conn.ID); err != nil {
		t.Fatal(err)
	}
	if err := stale.Save(ctx, core.CatalogData{}); !errors.Is(err, core.ErrStale) {
		t.Fatalf("stale save: %v, want ErrStale", err)
	}

	// MCP servers: created on A, listed (and started) on B.
	mcpSecret := "mcp-header-secret-987654"
	mcpURL := "http://127.0.0.1:1/mcp"
	srv, err := mcpA.Create(ctx, core.MCPServerInput{Name: "remote", Transport: core.MCPHTTP, URL: &mcpURL,
		Headers: []core.KeyValue{{Key: "Authorization", Value: "Bearer " + mcpSecret}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mcpB.Server(ctx, srv.ID); err != nil {
		t.Fatalf("B does not see A's MCP server: %v", err)
	}
	loaded, err := dbA.MCPStore(sealer).Load(ctx)
	if err != nil || len(loaded) != 1 || loaded[0].Headers[0].Value != "Bearer "+mcpSecret {
		t.Fatalf("MCP servers read back: %+v, %v", loaded, err)
	}

	text, err := dbA.AllText(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "catalog_connections") || !strings.Contains(text, "mcp_servers") {
		t.Fatalf("dump misses tables:\n%s", text)
	}
	for _, secret := range []string{key, mcpSecret} {
		if strings.Contains(text, secret) {
			t.Errorf("secret %q is in the database in plain text", secret)
		}
	}

	// Another key: refused at start, and the sealed values do not open.
	other := newSealer(t)
	if err := dbA.CheckSecretKey(ctx, other); err == nil || !strings.Contains(err.Error(), "--secret-key-file") {
		t.Errorf("check with another key: %v", err)
	}
	if _, err := dbA.MCPStore(other).Load(ctx); err == nil {
		t.Error("MCP secrets opened with another key")
	}
}

type nopRuntime struct{}

func (nopRuntime) Apply(context.Context, []core.MCPServerConfig) {}
func (nopRuntime) State(string) core.MCPServerState              { return core.MCPServerState{} }
func (nopRuntime) Restart(context.Context, string) error         { return nil }
func (nopRuntime) SetSessionDisabled(string, []string)           {}

func TestSecretKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys", storage.SecretKeyFileName)
	k1, err := storage.LoadOrCreateSecretKey(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	k2, err := storage.LoadOrCreateSecretKey(path)
	if err != nil || string(k1) != string(k2) || len(k1) != 32 {
		t.Fatalf("reread key differs: %v", err)
	}
	os.Chmod(path, 0o644)
	if _, err := storage.LoadOrCreateSecretKey(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("world-readable key file: %v", err)
	}
	os.WriteFile(path, []byte("short\n"), 0o600)
	os.Chmod(path, 0o600)
	if _, err := storage.LoadOrCreateSecretKey(path); err == nil {
		t.Error("a malformed key file was accepted")
	}

	s, _ := storage.NewSealer(k1)
	sealed, err := s.Seal("v", "place/a")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := s.Open(sealed, "place/a"); err != nil || v != "v" {
		t.Fatalf("open: %q %v", v, err)
	}
	if _, err := s.Open(sealed, "place/b"); err == nil {
		t.Error("a sealed value opened in another place")
	}
}
