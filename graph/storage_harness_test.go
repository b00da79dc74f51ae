package graph_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
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
		template, err := migratedPGTemplate()
		if err != nil {
			t.Fatal(err)
		}
		url := pgtest.NewDatabaseFrom(t, template)
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
	if _, err := os.Stat(dbPath); errors.Is(err, fs.ErrNotExist) {
		// A new kernel starts from a copy of an empty migrated database
		// (a kernel restarted on its data directory keeps its own).
		data, err := migratedDatabase()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dbPath, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
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

// pgTemplate is a PostgreSQL database with every migration applied, made
// once per test process, that each test kernel's database is a copy of
// (migrating cost each about 0.14 s); TestMain drops it.
var pgTemplate struct {
	once sync.Once
	name string
	drop func() error
	err  error
}

func migratedPGTemplate() (string, error) {
	pgTemplate.once.Do(func() {
		pgTemplate.name, pgTemplate.drop, pgTemplate.err = pgtest.NewTemplate(func(url string) error {
			db, err := storage.OpenPostgres(context.Background(), url, nil)
			if err != nil {
				return err
			}
			return db.Close()
		})
	})
	return pgTemplate.name, pgTemplate.err
}

// dropPGTemplate drops the template of migratedPGTemplate, if one was made.
func dropPGTemplate() error {
	if pgTemplate.drop == nil {
		return nil
	}
	return pgTemplate.drop()
}

// migrated is an empty SQLite database with every migration applied, made
// once per test process. Applying them cost each test kernel about 0.15 s
// of CPU under -race (SQLite parsing the schema); storage's own tests
// migrate from scratch.
var migrated struct {
	once sync.Once
	data []byte
	err  error
}

func migratedDatabase() ([]byte, error) {
	migrated.once.Do(func() {
		dir, err := os.MkdirTemp("", "foya-graph-db-")
		if err != nil {
			migrated.err = err
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "foya.db")
		db, err := storage.Open(context.Background(), path, nil)
		if err != nil {
			migrated.err = err
			return
		}
		if err := db.Close(); err != nil {
			migrated.err = err
			return
		}
		migrated.data, migrated.err = os.ReadFile(path)
	})
	return migrated.data, migrated.err
}
