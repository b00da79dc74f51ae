package graph_test

import (
	"context"
	"crypto/rand"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/storage/catalogfile"
	"github.com/foya-dev/foya/storage/pgtest"
)

// testStorage is a test kernel's storage: by default a SQLite file and the
// catalog files in dataDir; when FOYA_TEST_DATABASE names a PostgreSQL
// server, a fresh database of its own holding the sessions, the catalog and
// the MCP servers (secrets sealed under a random key), as `foya serve
// --database` keeps them.
type testStorage struct {
	db      *storage.DB
	dbPath  string // SQLite only
	pgURL   string // PostgreSQL only
	catalog core.CatalogStore
	mcp     core.MCPStore
}

func openTestStorage(t testing.TB, dataDir string, log *slog.Logger) testStorage {
	t.Helper()
	ctx := context.Background()
	if pgtest.Selected() {
		url := pgtest.NewDatabase(t)
		db, err := storage.OpenPostgres(ctx, url, log)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		key := make([]byte, 32)
		rand.Read(key)
		sealer, err := storage.NewSealer(key)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.CheckSecretKey(ctx, sealer); err != nil {
			t.Fatal(err)
		}
		return testStorage{db: db, pgURL: url, catalog: db.CatalogStore(sealer), mcp: db.MCPStore(sealer)}
	}
	dbPath := filepath.Join(dataDir, "foya.db")
	db, err := storage.Open(ctx, dbPath, log)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalogfile.New(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	mcp, err := catalogfile.NewMCP(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	return testStorage{db: db, dbPath: dbPath, catalog: cat, mcp: mcp}
}

// storedText is everything the kernel's database holds, as text.
func (k *testKernel) storedText(t *testing.T) string {
	t.Helper()
	if k.dbPath != "" {
		return string(readAll(t, k.dbPath))
	}
	text, err := k.db.AllText(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return text
}
