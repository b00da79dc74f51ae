package storage_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/storage/pgtest"
)

func openPGTestDB(t testing.TB) *storage.DB {
	t.Helper()
	db, err := storage.OpenPostgres(context.Background(), pgtest.NewDatabase(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestEventStoreConformancePostgres(t *testing.T) {
	pgtest.Require(t)
	coretest.RunEventStoreSuite(t, coretest.StoreHarness{
		New: func(t *testing.T) core.Store { return openPGTestDB(t) },
		Rebuild: func(t *testing.T, s core.Store) {
			if _, err := s.(*storage.DB).RebuildProjections(context.Background()); err != nil {
				t.Fatal(err)
			}
		},
	})
}

// TestMigrationsInStep checks that every migration exists for both
// dialects, and that none sits outside the per-dialect folders (where it
// would not be embedded).
func TestMigrationsInStep(t *testing.T) {
	names := func(dir string) []string {
		var out []string
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out = append(out, d.Name())
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	lite, pg := names("migrations/sqlite"), names("migrations/postgres")
	if !slices.Equal(lite, pg) {
		t.Errorf("migrations differ between dialects:\nsqlite:   %v\npostgres: %v", lite, pg)
	}
	top, err := os.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range top {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".sql") {
			t.Errorf("migrations/%s is not embedded: put it in migrations/sqlite and migrations/postgres", e.Name())
		}
	}
}

// TestPostgresNULAndReopen stores text with a NUL (PostgreSQL text refuses
// it; the dialect writes U+FFFD, as on SQLite), finds nothing for an id
// with a NUL, and reopens the database (migrations already applied).
func TestPostgresNULAndReopen(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	db, err := storage.OpenPostgres(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	coretest.CreateSession(t, db, "s")
	if _, err := db.Append(ctx, "s", core.AnyHead, []core.Event{coretest.MessageEvent(t, "s", core.RoleUser, "a\x00b")}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Session(ctx, "s\x00"); core.ErrorCode(err) != core.CodeNotFound {
		t.Errorf("session with NUL id: %v, want NOT_FOUND", err)
	}
	db.Close()
	db, err = storage.OpenPostgres(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	msgs, err := db.Messages(ctx, "s", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 {
		t.Fatalf("messages after reopen: %d", len(msgs))
	}
}

// forEachDialect runs f on a fresh SQLite file and a fresh PostgreSQL
// database (skipped with a message when no server answers).
func forEachDialect(t *testing.T, f func(t *testing.T, db *storage.DB)) {
	t.Run("sqlite", func(t *testing.T) { f(t, openTestDB(t)) })
	t.Run("postgres", func(t *testing.T) { f(t, openPGTestDB(t)) })
}

// TestLedgerAnchorsAndDelete covers the tables beside the event log on
// both dialects: the usage ledger's sums, route anchor upserts, and a
// delete that keeps a blob a fork still refers to and reports the others.
func TestLedgerAnchorsAndDelete(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		coretest.CreateSession(t, db, "a")
		coretest.CreateSession(t, db, "b")
		usage := func(sid string, in, out int64, est bool) core.Event {
			ev, err := core.NewEvent(sid, core.EventUsage, core.UsagePayload{Route: "r", ConnectionID: "c", Purpose: "turn",
				Usage: core.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out, CacheWriteTokens: 1, Estimated: est}})
			if err != nil {
				t.Fatal(err)
			}
			return ev
		}
		for _, ev := range []core.Event{usage("a", 10, 5, false), usage("a", 1, 1, false), usage("b", 100, 0, true)} {
			if _, err := db.Append(ctx, ev.SessionID, core.AnyHead, []core.Event{ev}); err != nil {
				t.Fatal(err)
			}
		}
		ua, err := db.UsageTotals(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if ua.InputTokens != 11 || ua.OutputTokens != 6 || ua.TotalTokens != 17 || ua.CacheWriteTokens != 2 || ua.Estimated {
			t.Errorf("usage of a = %+v", ua)
		}
		all, err := db.UsageTotals(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if all.InputTokens != 111 || !all.Estimated {
			t.Errorf("usage of all = %+v", all)
		}
		// The batch a session list reads: each session's own sums, none
		// for a session without usage or unknown (odd ids go as they are).
		many, err := db.SessionUsageTotals(ctx, []string{"b", "a", "none", "it's \"odd\" ü"})
		if err != nil {
			t.Fatal(err)
		}
		ub, _ := db.UsageTotals(ctx, "b")
		if len(many) != 2 || !reflect.DeepEqual(many["a"], ua) || !reflect.DeepEqual(many["b"], ub) {
			t.Errorf("usage of a, b = %+v, want a %+v, b %+v", many, ua, ub)
		}

		for i := range 2 {
			if err := db.SaveRouteAnchor(ctx, core.RouteAnchor{SessionID: "a", Route: "r", ThroughSeq: int64(3 + i), Digest: "d", InputTokens: 7}); err != nil {
				t.Fatal(err)
			}
		}
		if a, err := db.RouteAnchor(ctx, "a", "r"); err != nil || a.ThroughSeq != 4 {
			t.Errorf("anchor = %+v, %v", a, err)
		}

		shared, only := strings.Repeat("1", 64), strings.Repeat("2", 64)
		msg := func(sid string, hashes ...string) core.Event {
			m := core.Message{Role: core.RoleAssistant, Text: "edit"}
			for _, h := range hashes {
				m.FileChanges = append(m.FileChanges, core.FileChange{Path: "f", Action: "modify", AfterHash: h})
			}
			ev, err := core.NewEvent(sid, core.EventMessageEnd, core.MessagePayload{Message: m})
			if err != nil {
				t.Fatal(err)
			}
			return ev
		}
		if _, err := db.Append(ctx, "a", core.AnyHead, []core.Event{msg("a", shared, only)}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Append(ctx, "b", core.AnyHead, []core.Event{msg("b", shared)}); err != nil {
			t.Fatal(err)
		}
		del, err := db.DeleteSession(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(del.IDs, []string{"a"}) || !slices.Equal(del.OrphanBlobs, []string{only}) {
			t.Errorf("delete = %+v, want ids [a] and orphan %s only", del, only)
		}
		if _, err := db.RouteAnchor(ctx, "a", "r"); core.ErrorCode(err) != core.CodeNotFound {
			t.Errorf("anchor after delete: %v", err)
		}
		if ua, _ := db.UsageTotals(ctx, "a"); ua.InputTokens != 11 {
			t.Errorf("the ledger outlives the session: %+v", ua)
		}
	})
}

// TestProjectsBothDialects: a project reads back as created; a second
// project on the same path conflicts; an unknown or deleted one is
// NOT_FOUND.
func TestProjectsBothDialects(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		p := core.Project{ID: "p1", Name: "one", Path: "/x", CreatedAt: time.Date(2026, 12, 3, 1, 2, 3, 456789000, time.UTC)}
		if err := db.CreateProject(ctx, p); err != nil {
			t.Fatal(err)
		}
		if got, err := db.Project(ctx, "p1"); err != nil || !reflect.DeepEqual(got, p) {
			t.Errorf("project = %+v, %v; want %+v", got, err, p)
		}
		if _, err := db.Project(ctx, "p\x00none"); core.ErrorCode(err) != core.CodeNotFound {
			t.Errorf("unknown project: %v, want NOT_FOUND", err)
		}
		p.ID = "p2"
		if err := db.CreateProject(ctx, p); core.ErrorCode(err) != core.CodeConflict {
			t.Errorf("same path: %v, want CONFLICT", err)
		}
		ps, err := db.Projects(ctx)
		if err != nil || len(ps) != 1 {
			t.Fatalf("projects = %+v, %v", ps, err)
		}
		if err := db.DeleteProject(ctx, "p1"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Project(ctx, "p1"); core.ErrorCode(err) != core.CodeNotFound {
			t.Errorf("deleted project: %v, want NOT_FOUND", err)
		}
	})
}

// TestPostgresAppendsFromTwoPools: two kernels (two connection pools) append
// to one session at once; the seqs are unique and contiguous and the head
// matches.
func TestPostgresAppendsFromTwoPools(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	var dbs []*storage.DB
	for range 2 {
		db, err := storage.OpenPostgres(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs = append(dbs, db)
	}
	coretest.CreateSession(t, dbs[0], "s")
	var wg sync.WaitGroup
	for i := range 8 {
		db := dbs[i%2]
		wg.Go(func() {
			for range 10 {
				batch := []core.Event{coretest.MessageEvent(t, "s", core.RoleUser, "a"), coretest.MessageEvent(t, "s", core.RoleAssistant, "b")}
				if _, err := db.Append(ctx, "s", core.AnyHead, batch); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	evs, err := dbs[1].Events(ctx, "s", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 161 {
		t.Fatalf("%d events, want 161", len(evs))
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
	}
	s, err := dbs[0].Session(ctx, "s")
	if err != nil || s.HeadSeq != 161 {
		t.Fatalf("head %d, %v", s.HeadSeq, err)
	}
}
