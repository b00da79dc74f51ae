package storage_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
	"github.com/foya-dev/foya/storage"
)

// benchDialects runs b on a fresh SQLite file and, when a PostgreSQL server
// answers (FOYA_TEST_DATABASE or 127.0.0.1:5432), on a fresh PostgreSQL
// database.
func benchDialects(b *testing.B, f func(b *testing.B, open func(testing.TB) *storage.DB)) {
	b.Run("sqlite", func(b *testing.B) { f(b, openTestDB) })
	b.Run("postgres", func(b *testing.B) { f(b, openPGTestDB) })
}

// BenchmarkAppendBatch measures appending batches of message events (each
// batch one transaction with its projections).
func BenchmarkAppendBatch(b *testing.B) {
	benchDialects(b, func(b *testing.B, open func(testing.TB) *storage.DB) {
		for _, size := range []int{1, 10, 100} {
			b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
				db := open(b)
				coretest.CreateSession(b, db, "s")
				batch := make([]core.Event, size)
				for i := range batch {
					batch[i] = coretest.MessageEvent(b, "s", core.RoleUser, "hello, this is a typical short user message")
				}
				ctx := context.Background()
				b.ResetTimer()
				cpu := startCPU()
				for b.Loop() {
					if _, err := db.Append(ctx, "s", core.AnyHead, batch); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "events/s")
				cpu.report(b)
			})
		}
	})
}

// BenchmarkReplay10k measures reading back a 10k-event session in pages of
// 500, as a subscriber's replay does.
func BenchmarkReplay10k(b *testing.B) {
	benchDialects(b, func(b *testing.B, open func(testing.TB) *storage.DB) {
		db := open(b)
		coretest.CreateSession(b, db, "s")
		ctx := context.Background()
		batch := make([]core.Event, 1000)
		for i := range batch {
			batch[i] = coretest.MessageEvent(b, "s", core.RoleAssistant, "a reply of moderate length that stands in for model output")
		}
		for range 10 {
			if _, err := db.Append(ctx, "s", core.AnyHead, batch); err != nil {
				b.Fatal(err)
			}
		}
		b.ResetTimer()
		for b.Loop() {
			var after int64
			n := 0
			for {
				evs, err := db.Events(ctx, "s", after, 500)
				if err != nil {
					b.Fatal(err)
				}
				if len(evs) == 0 {
					break
				}
				n += len(evs)
				after = evs[len(evs)-1].Seq
			}
			if n != 10001 {
				b.Fatalf("replayed %d", n)
			}
		}
		b.ReportMetric(float64(b.N*10001)/b.Elapsed().Seconds(), "events/s")
	})
}

// BenchmarkAppendTurnStart measures the transaction that starts a turn, on
// the path of every first token: turn_started, phase_changed and the user's
// message_end (with the session and messages projections).
func BenchmarkAppendTurnStart(b *testing.B) {
	benchRequest(b, func(ctx context.Context, db *storage.DB) error {
		_, err := db.Append(ctx, "s", core.AnyHead, turnStart(b, "s", "hello, this is a typical short user message"))
		return err
	})
}

// benchRequest runs op in a loop on each dialect, against a database
// holding session "s", with a request's context, as sendMessage passes it:
// cancellable.
func benchRequest(b *testing.B, op func(context.Context, *storage.DB) error) {
	benchDialects(b, func(b *testing.B, open func(testing.TB) *storage.DB) {
		db := open(b)
		coretest.CreateSession(b, db, "s")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for b.Loop() {
			if err := op(ctx, db); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// turnStart is what starts a turn in session sid: turn_started,
// phase_changed and the user's message_end.
func turnStart(b *testing.B, sid, text string) []core.Event {
	evs := make([]core.Event, 3)
	var err error
	if evs[0], err = core.NewEvent(sid, core.EventTurnStarted, core.TurnPayload{TurnID: "t"}); err != nil {
		b.Fatal(err)
	}
	if evs[1], err = core.NewEvent(sid, core.EventPhaseChanged, core.PhasePayload{Phase: core.PhaseTurn}); err != nil {
		b.Fatal(err)
	}
	evs[2] = coretest.MessageEvent(b, sid, core.RoleUser, text)
	return evs
}

// BenchmarkAppendLongReplies measures the writes of one turn in a session
// whose replies are long (8 KB each, as in BenchmarkDeltaPath): the turn's
// start, then its reply, each one transaction, with 50 earlier turns'
// rows in the tables.
func BenchmarkAppendLongReplies(b *testing.B) {
	benchDialects(b, func(b *testing.B, open func(testing.TB) *storage.DB) {
		db := open(b)
		coretest.CreateSession(b, db, "s")
		ctx := context.Background()
		reply := strings.Repeat("tok ", 2000)
		turn := func() {
			if _, err := db.Append(ctx, "s", core.AnyHead, turnStart(b, "s", "go")); err != nil {
				b.Fatal(err)
			}
			if _, err := db.Append(ctx, "s", core.AnyHead, []core.Event{coretest.MessageEvent(b, "s", core.RoleAssistant, reply)}); err != nil {
				b.Fatal(err)
			}
		}
		for range 50 {
			turn()
		}
		for b.Loop() {
			turn()
		}
	})
}

// BenchmarkReadSession measures reading one session, which every
// sendMessage does before its turn starts, with a request's (cancellable)
// context.
func BenchmarkReadSession(b *testing.B) {
	benchRequest(b, func(ctx context.Context, db *storage.DB) error {
		_, err := db.Session(ctx, "s")
		return err
	})
}

// BenchmarkUsageTotals measures a session's usage totals, which
// createSession and session(id:) { usage } read (the CLI asks for them).
func BenchmarkUsageTotals(b *testing.B) {
	benchRequest(b, func(ctx context.Context, db *storage.DB) error {
		_, err := db.UsageTotals(ctx, "s")
		return err
	})
}

// BenchmarkEventsShortPage measures a page of the few events a new
// session holds, as a subscription that replays from afterSeq 0 reads
// before its live events.
func BenchmarkEventsShortPage(b *testing.B) {
	benchRequest(b, func(ctx context.Context, db *storage.DB) error {
		_, err := db.Events(ctx, "s", 0, 500)
		return err
	})
}

// BenchmarkAppendUsage measures the append of a turn's usage event, which
// writes its ledger row in the same transaction.
func BenchmarkAppendUsage(b *testing.B) {
	cost := 0.25
	benchRequest(b, func(ctx context.Context, db *storage.DB) error {
		ev, err := core.NewEvent("s", core.EventUsage, core.UsagePayload{Route: "r", ConnectionID: "c", Purpose: "turn",
			Usage: core.Usage{Model: "m", InputTokens: 10, OutputTokens: 5, TotalTokens: 15, Cost: &cost}})
		if err != nil {
			return err
		}
		_, err = db.Append(ctx, "s", core.AnyHead, []core.Event{ev})
		return err
	})
}

// BenchmarkCreateSession measures creating a session as createSession,
// fork and a sub-agent's child do: one append of its session_created
// event, a transaction of its own, into a database of 1,000 sessions.
func BenchmarkCreateSession(b *testing.B) {
	benchDialects(b, func(b *testing.B, open func(testing.TB) *storage.DB) {
		db := open(b)
		for i := range 1000 {
			coretest.CreateSession(b, db, fmt.Sprintf("old_%04d", i))
		}
		ctx := context.Background()
		i := 0
		cpu := startCPU()
		for b.Loop() {
			i++
			id := fmt.Sprintf("ses_%08d", i)
			ev, err := core.NewEvent(id, core.EventSessionCreated, core.SessionPayload{Session: core.SessionMeta{
				ID: id, Title: "a new session", ConnectionID: "conn_1", Model: "m", ProjectID: "prj_1", CreatedAt: time.Now()}})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := db.Append(ctx, id, 0, []core.Event{ev}); err != nil {
				b.Fatal(err)
			}
		}
		cpu.report(b)
	})
}
