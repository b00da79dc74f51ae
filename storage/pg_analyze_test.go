package storage_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx"

	"github.com/foya-dev/foya/core"
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
	autovacuumOff(t, raw, "sessions", "events")
	fillSessions(t, db, 2000)
	reltuples := func(table string) float64 { return reltuplesOf(t, raw, table) }
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

// TestPostgresAnalyzesAfterABulkLoad: a kernel that itself writes a bulk
// load (a script importing archives one after the other) takes the
// session table's planner statistics once it has more than doubled,
// without waiting for autovacuum (off here).
func TestPostgresAnalyzesAfterABulkLoad(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	db, err := storage.OpenPostgres(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	raw, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	autovacuumOff(t, raw, "attachments", "events", "messages", "sessions", "usage_ledger")
	created := func(id string) []core.Event {
		ev, err := core.NewEvent(id, core.EventSessionCreated, core.SessionPayload{Session: core.SessionMeta{ID: id, Title: id, Model: "m"}})
		if err != nil {
			t.Fatal(err)
		}
		return []core.Event{ev}
	}
	// A kernel in use: 50 sessions, and statistics that count them.
	for i := range 50 {
		id := fmt.Sprintf("ses_%04d", i)
		if _, err := db.Append(ctx, id, 0, created(id)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.ExecContext(ctx, "ANALYZE sessions"); err != nil {
		t.Fatal(err)
	}
	reltuples := func(table string) float64 { return reltuplesOf(t, raw, table) }
	if n := reltuples("sessions"); n != 50 {
		t.Fatalf("sessions: reltuples %v after ANALYZE, want 50", n)
	}
	// The bulk load: 1,100 archives imported one by one.
	for i := range 1100 {
		id := fmt.Sprintf("imp_%04d", i)
		if _, err := db.ImportSession(ctx, id, created(id), nil); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for reltuples("sessions") < 1000 {
		if time.Now().After(deadline) {
			t.Fatalf("sessions: reltuples %v 30 s after 1,150 sessions were written, want at least 1,000 (analyzed after the load)", reltuples("sessions"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// events had no statistics at all: taken in the same look.
	if n := reltuples("events"); n < 1000 {
		t.Fatalf("events: reltuples %v, want at least 1,000 (analyzed with sessions)", n)
	}
}

// autovacuumOff turns autovacuum off for the tables: their statistics are
// then the test's to take.
func autovacuumOff(t *testing.T, raw *sql.DB, tables ...string) {
	t.Helper()
	for _, table := range tables {
		if _, err := raw.ExecContext(context.Background(), "ALTER TABLE "+table+" SET (autovacuum_enabled = false)"); err != nil {
			t.Fatal(err)
		}
	}
}

// reltuplesOf is the row count of the table's planner statistics (-1:
// none).
func reltuplesOf(t *testing.T, raw *sql.DB, table string) float64 {
	t.Helper()
	var n float64
	if err := raw.QueryRowContext(context.Background(), "SELECT reltuples FROM pg_class WHERE oid = $1::regclass", table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
