package storage

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
	"github.com/foya-dev/foya/storage/pgtest"
)

// A database written before sessions kept their usage totals gets them
// from its ledger when it migrates, on both dialects.
func TestMigrationSessionUsageTotalsFromTheLedger(t *testing.T) {
	ctx := context.Background()
	// Each opens the same database again at every call.
	open := map[string]func(t *testing.T) func() (*DB, error){
		"sqlite": func(t *testing.T) func() (*DB, error) {
			path := filepath.Join(t.TempDir(), "foya.db")
			return func() (*DB, error) { return Open(ctx, path, nil) }
		},
		"postgres": func(t *testing.T) func() (*DB, error) {
			dsn := pgtest.NewDatabase(t)
			return func() (*DB, error) { return OpenPostgres(ctx, dsn, nil) }
		},
	}
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			reopen := open[name](t)
			d, err := reopen()
			if err != nil {
				t.Fatal(err)
			}
			coretest.CreateSession(t, d, "a")
			coretest.CreateSession(t, d, "b")
			cost := 0.125
			for _, u := range []core.Usage{
				{InputTokens: 10, OutputTokens: 5, TotalTokens: 15, CacheWriteTokens: 3, Cost: &cost},
				{InputTokens: 1, OutputTokens: 2, TotalTokens: 3, Estimated: true},
			} {
				ev, err := core.NewEvent("a", core.EventUsage, core.UsagePayload{Route: "r", ConnectionID: "c", Purpose: "turn", Usage: u})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := d.Append(ctx, "a", core.AnyHead, []core.Event{ev}); err != nil {
					t.Fatal(err)
				}
			}
			// Back to the layout before the migration.
			for _, c := range []string{"usage_input", "usage_output", "usage_total", "usage_cached", "usage_cache_writes", "usage_estimated", "usage_unpriced", "usage_cost"} {
				if _, err := d.w.ExecContext(ctx, "ALTER TABLE sessions DROP COLUMN "+c); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := d.w.ExecContext(ctx, "DELETE FROM bun_migrations WHERE name = '20261203130000'"); err != nil {
				t.Fatal(err)
			}
			d.Close()

			if d, err = reopen(); err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			for _, id := range []string{"a", "b"} {
				got, want, same, err := d.RowTotals(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if !same {
					t.Fatalf("%s after the migration: %+v, the ledger's sums %+v", id, got, want)
				}
			}
			if s, _ := d.Session(ctx, "a"); s.UsageTotals.TotalTokens != 18 || !s.UsageTotals.Estimated || s.UsageTotals.UnpricedTokens != 3 {
				t.Fatalf("a after the migration: %+v", s.UsageTotals)
			}
		})
	}
}
