package storage_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/storage/pgtest"
)

// openPGBulk opens a fresh PostgreSQL database whose commits do not wait
// for the disk (synchronous_commit=off, a runtime parameter of the
// connection): for tests that write thousands of small transactions to set
// up what they read. Nothing measured here is a durable write.
func openPGBulk(t testing.TB) *storage.DB {
	t.Helper()
	u := pgtest.NewDatabase(t)
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	db, err := storage.OpenPostgres(context.Background(), u+sep+"synchronous_commit=off", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// fillSessions creates n top-level sessions, every tenth with a child, and
// returns the top-level ids in the order of the session list (newest
// first, then by id). Groups of three share a creation time, so the list's
// tie-break by id is exercised.
func fillSessions(t testing.TB, db *storage.DB, n int) []string {
	t.Helper()
	ctx := context.Background()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type entry struct {
		id string
		at time.Time
	}
	var top []entry
	var batch [][]core.Event
	flush := func() {
		if err := db.AppendEach(ctx, batch); err != nil {
			t.Fatal(err)
		}
		batch = batch[:0]
	}
	create := func(meta core.SessionMeta) {
		ev, err := core.NewEvent(meta.ID, core.EventSessionCreated, core.SessionPayload{Session: meta})
		if err != nil {
			t.Fatal(err)
		}
		if batch = append(batch, []core.Event{ev}); len(batch) == 1000 {
			flush()
		}
	}
	for i := range n {
		// Ids do not sort like creation times: the list must not rely on it.
		id := fmt.Sprintf("ses_%05d", (i*7919)%n)
		at := base.Add(time.Duration(i/3) * time.Second)
		create(core.SessionMeta{ID: id, Title: "session " + id, CreatedAt: at, Model: "m"})
		top = append(top, entry{id, at})
		if i%10 == 0 {
			create(core.SessionMeta{ID: id + "_child", ParentID: id, CreatedAt: at.Add(time.Millisecond)})
		}
	}
	if len(batch) > 0 {
		flush()
	}
	slices.SortFunc(top, func(a, b entry) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	ids := make([]string, len(top))
	for i, e := range top {
		ids[i] = e.id
	}
	return ids
}

// listAll walks the session list in pages of size (sessions(first:,
// after:)) and returns the ids in the order visited.
func listAll(t testing.TB, db *storage.DB, f core.SessionFilter, size int) []string {
	t.Helper()
	var out []string
	f.First = size
	for {
		page, err := db.Sessions(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range page {
			out = append(out, s.ID)
		}
		if len(page) < size {
			return out
		}
		f.After = page[len(page)-1].ID
	}
}

// testPagingVisitsEachOnce lists 10,000 sessions (and their 1,000
// children) in pages: every session comes exactly once, in the list's
// order, the same order as the list in one piece.
func testPagingVisitsEachOnce(t *testing.T, db *storage.DB) {
	want := fillSessions(t, db, 10_000)
	for _, size := range []int{1000, 97} {
		got := listAll(t, db, core.SessionFilter{}, size)
		if !slices.Equal(got, want) {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Fatalf("pages of %d: %d sessions, want %d; first difference at %d", size, len(got), len(want), i)
		}
	}
	ctx := context.Background()
	if end, err := db.Sessions(ctx, core.SessionFilter{First: 10, After: want[len(want)-1]}); err != nil || len(end) != 0 {
		t.Fatalf("after the last session: %d sessions, %v; want an empty page", len(end), err)
	}
	if _, err := db.Sessions(ctx, core.SessionFilter{First: 10, After: "ses_gone"}); core.ErrorCode(err) != core.CodeNotFound {
		t.Fatalf("after an unknown session: %v, want NOT_FOUND", err)
	}
	whole, err := db.Sessions(ctx, core.SessionFilter{IncludeChildren: true})
	if err != nil {
		t.Fatal(err)
	}
	all := listAll(t, db, core.SessionFilter{IncludeChildren: true}, 250)
	if len(all) != 11_000 || len(whole) != len(all) {
		t.Fatalf("with children: %d in pages, %d in one piece, want 11,000", len(all), len(whole))
	}
	for i, s := range whole {
		if all[i] != s.ID {
			t.Fatalf("with children: session %d is %s in pages, %s in one piece", i, all[i], s.ID)
		}
	}
}

func TestSessionPagingVisitsEachOnce(t *testing.T) {
	t.Parallel()
	testPagingVisitsEachOnce(t, openTestDB(t))
}

func TestSessionPagingVisitsEachOncePostgres(t *testing.T) {
	t.Parallel()
	pgtest.Require(t)
	testPagingVisitsEachOnce(t, openPGBulk(t))
}

// BenchmarkSessionList10k measures the session list of a kernel with
// 10,000 sessions: the first page of 50 (what a sidebar opens with), a
// page deep in the list, and the whole list walked in pages of 50, 100
// and 1,000.
func BenchmarkSessionList10k(b *testing.B) {
	for _, d := range []struct {
		name string
		open func(testing.TB) *storage.DB
	}{{"sqlite", openTestDB}, {"postgres", openPGBulk}} {
		b.Run(d.name, func(b *testing.B) {
			db := d.open(b)
			ids := fillSessions(b, db, 10_000)
			ctx := context.Background()
			if d.name == "postgres" {
				// As autovacuum would a minute after the load: without
				// statistics the planner sorts the whole table for a page.
				if err := db.Analyze(ctx); err != nil {
					b.Fatal(err)
				}
			}
			page := func(f core.SessionFilter, want int) {
				got, err := db.Sessions(ctx, f)
				if err != nil || len(got) != want {
					b.Fatal(len(got), err)
				}
			}
			b.Run("first50", func(b *testing.B) {
				cpu := startCPU()
				for b.Loop() {
					page(core.SessionFilter{First: 50}, 50)
				}
				cpu.report(b)
			})
			b.Run("page50at9000", func(b *testing.B) {
				cpu := startCPU()
				for b.Loop() {
					page(core.SessionFilter{First: 50, After: ids[8999]}, 50)
				}
				cpu.report(b)
			})
			for _, size := range []int{50, 100, 1000} {
				b.Run(fmt.Sprintf("all10k_pages%d", size), func(b *testing.B) {
					cpu := startCPU()
					for b.Loop() {
						if n := len(listAll(b, db, core.SessionFilter{}, size)); n != 10_000 {
							b.Fatal(n)
						}
					}
					cpu.report(b)
				})
			}
			// With the usage totals (the CLI's list), each session's spent.
			b.Run("all10k_pages1000_usage", func(b *testing.B) {
				if err := db.SpendOnEverySession(ctx); err != nil {
					b.Fatal(err)
				}
				cpu := startCPU()
				for b.Loop() {
					if n := len(listAll(b, db, core.SessionFilter{Usage: true}, 1000)); n != 10_000 {
						b.Fatal(n)
					}
				}
				cpu.report(b)
			})
		})
	}
}

// testTail100k reads the last 50 messages of a 100,000-event session: the
// newest 50, in seq order, ending at the head.
func testTail100k(t *testing.T, db *storage.DB) {
	ctx := context.Background()
	coretest.CreateSession(t, db, "s")
	seqs := fillMessages(t, db, "s", 99_999)
	head, err := db.HeadSeq(ctx, "s")
	if err != nil || head != 100_000 {
		t.Fatalf("head %d, %v; want 100,000 events", head, err)
	}
	msgs, err := db.MessagePage(ctx, "s", core.MessageQuery{Limit: 50, Last: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 50 {
		t.Fatalf("%d messages, want 50", len(msgs))
	}
	for i, m := range msgs {
		k := len(seqs) - 50 + i
		if m.Seq != seqs[k] || m.Text != fmt.Sprintf("message %d", k) || !m.Active {
			t.Fatalf("message %d of the tail: seq %d %q, want seq %d %q", i, m.Seq, m.Text, seqs[k], fmt.Sprintf("message %d", k))
		}
	}
	// The page before it continues it.
	prev, err := db.MessagePage(ctx, "s", core.MessageQuery{Limit: 50, Last: true, BeforeSeq: msgs[0].Seq})
	if err != nil || len(prev) != 50 || prev[49].Seq != seqs[len(seqs)-51] {
		t.Fatalf("the page before the tail: %d messages, %v", len(prev), err)
	}
}

func TestTail100k(t *testing.T) {
	t.Parallel()
	testTail100k(t, openTestDB(t))
}

func TestTail100kPostgres(t *testing.T) {
	t.Parallel()
	pgtest.Require(t)
	testTail100k(t, openPGBulk(t))
}

// TestSessionListOwnsItsStrings: every session of a page keeps its own
// metadata after the rows after it were read (on SQLite the list decodes
// each row's metadata in the driver's own slice, scanSessions: a driver
// that reused that slice from row to row would leave every session of a
// page with the last row's id and title), and after the next page too.
func TestSessionListOwnsItsStrings(t *testing.T) {
	db := openTestDB(t)
	ids := fillSessions(t, db, 2500)
	var pages [][]core.Session
	f := core.SessionFilter{First: 1000}
	for {
		page, err := db.Sessions(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, page)
		if len(page) < f.First {
			break
		}
		f.After = page[len(page)-1].ID
	}
	i := 0
	for _, page := range pages {
		for _, s := range page {
			if i >= len(ids) || s.ID != ids[i] || s.Title != "session "+ids[i] || s.Phase != core.PhaseIdle || s.Model != "m" {
				t.Fatalf("session %d of the list: %q %q %q %q, want %q", i, s.ID, s.Title, s.Phase, s.Model, ids[min(i, len(ids)-1)])
			}
			i++
		}
	}
	if i != len(ids) {
		t.Fatalf("%d sessions listed, want %d", i, len(ids))
	}
	s, err := db.Session(context.Background(), ids[7])
	if err != nil || s.ID != ids[7] || s.Title != "session "+ids[7] {
		t.Fatalf("Session(%s): %+v %v", ids[7], s, err)
	}
}
