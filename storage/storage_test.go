package storage_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
	"github.com/foya-dev/foya/storage"
)

func openTestDB(t testing.TB) *storage.DB {
	t.Helper()
	db, err := storage.Open(context.Background(), filepath.Join(t.TempDir(), "foya.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestEventStoreConformance(t *testing.T) {
	coretest.RunEventStoreSuite(t, coretest.StoreHarness{
		New: func(t *testing.T) core.Store { return openTestDB(t) },
		Rebuild: func(t *testing.T, s core.Store) {
			if _, err := s.(*storage.DB).RebuildProjections(context.Background()); err != nil {
				t.Fatal(err)
			}
		},
	})
}

func TestPragmas(t *testing.T) {
	db := openTestDB(t)
	ctx := context.Background()
	for name, want := range map[string]string{"journal_mode": "wal", "synchronous": "1", "foreign_keys": "1", "busy_timeout": "5000", "temp_store": "2"} {
		got, err := db.Pragma(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("PRAGMA %s = %s, want %s", name, got, want)
		}
	}
}
