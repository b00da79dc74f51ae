package storage_test

import (
	"context"
	"database/sql"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx"

	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/storage/pgtest"
)

// TestPostgresAnalyzesTablesWithoutStatistics: a kernel that starts on a
// database whose tables hold rows but have no planner statistics (as after
// pg_restore; here autovacuum is off for them) takes them before it
// answers, so the session list walks its index from the first request.
func TestPostgresAnalyzesTablesWithoutStatistics(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	db, err := storage.OpenPostgres(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, table := range []string{"sessions", "events"} {
		if _, err := raw.ExecContext(ctx, "ALTER TABLE "+table+" SET (autovacuum_enabled = false)"); err != nil {
			t.Fatal(err)
		}
	}
	fillSessions(t, db, 2000)
	reltuples := func(table string) float64 {
		t.Helper()
		var n float64
		if err := raw.QueryRowContext(ctx, "SELECT reltuples FROM pg_class WHERE oid = $1::regclass", table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := reltuples("sessions"); n >= 0 {
		t.Fatalf("sessions has statistics before the restart (reltuples %v): the test cannot tell", n)
	}
	db.Close()

	db, err = storage.OpenPostgres(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// 2,000 top-level sessions and a child for every tenth.
	if n := reltuples("sessions"); n != 2200 {
		t.Fatalf("sessions: reltuples %v after the start, want 2200 (analyzed)", n)
	}
	if n := reltuples("events"); n < 2200 {
		t.Fatalf("events: reltuples %v after the start, want at least 2200 (analyzed)", n)
	}
}
