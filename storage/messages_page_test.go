package storage_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/storage/pgtest"
)

// fillMessages appends n message events to session s (batches of 1000,
// one transaction each) and returns their seqs.
func fillMessages(t testing.TB, db *storage.DB, s string, n int) []int64 {
	t.Helper()
	ctx := context.Background()
	var seqs []int64
	for done := 0; done < n; {
		batch := make([]core.Event, min(1000, n-done))
		for i := range batch {
			batch[i] = coretest.MessageEvent(t, s, core.RoleUser, fmt.Sprintf("message %d", done+i))
		}
		got, err := db.Append(ctx, s, core.AnyHead, batch)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range got {
			seqs = append(seqs, ev.Seq)
		}
		done += len(batch)
	}
	return seqs
}

func testMessagePage(t *testing.T, db *storage.DB) {
	ctx := context.Background()
	coretest.CreateSession(t, db, "s")
	seqs := fillMessages(t, db, "s", 25)
	// Rewind the last 5: inactive unless asked for.
	rew, err := core.NewEvent("s", core.EventHistoryRewound, core.RewindPayload{FromSeq: seqs[20]})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append(ctx, "s", core.AnyHead, []core.Event{rew}); err != nil {
		t.Fatal(err)
	}
	page := func(q core.MessageQuery) []int64 {
		t.Helper()
		msgs, err := db.MessagePage(ctx, "s", q)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int64, len(msgs))
		for i, m := range msgs {
			out[i] = m.Seq
		}
		return out
	}
	eq := func(got, want []int64) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	eq(page(core.MessageQuery{}), seqs[:20])
	eq(page(core.MessageQuery{IncludeInactive: true}), seqs)
	eq(page(core.MessageQuery{Limit: 3}), seqs[:3])
	eq(page(core.MessageQuery{Limit: 3, Last: true}), seqs[17:20])
	eq(page(core.MessageQuery{Limit: 3, Last: true, IncludeInactive: true}), seqs[22:])
	eq(page(core.MessageQuery{Limit: 4, AfterSeq: seqs[5]}), seqs[6:10])
	eq(page(core.MessageQuery{Limit: 4, Last: true, BeforeSeq: seqs[5]}), seqs[1:5])
	eq(page(core.MessageQuery{AfterSeq: seqs[2], BeforeSeq: seqs[6]}), seqs[3:6])
	eq(page(core.MessageQuery{Limit: 2, Last: true, AfterSeq: seqs[2], BeforeSeq: seqs[6]}), seqs[4:6])
	// Forward and backward walks see every active message exactly once.
	var fwd, back []int64
	for after := int64(0); ; {
		p := page(core.MessageQuery{Limit: 7, AfterSeq: after})
		if len(p) == 0 {
			break
		}
		fwd, after = append(fwd, p...), p[len(p)-1]
	}
	eq(fwd, seqs[:20])
	for before := int64(0); ; {
		p := page(core.MessageQuery{Limit: 7, Last: true, BeforeSeq: before})
		if len(p) == 0 {
			break
		}
		back, before = append(p, back...), p[0]
	}
	eq(back, seqs[:20])
	if msgs, err := db.MessagePage(ctx, "s", core.MessageQuery{Limit: 1}); err != nil || msgs[0].Text != "message 0" || !msgs[0].Active {
		t.Fatalf("first message: %+v %v", msgs, err)
	}
}

func TestMessagePage(t *testing.T) { testMessagePage(t, openTestDB(t)) }

// TestMessagePageReadsAPage checks that the last 50 messages of a
// 20,000-event session are the newest 50, in order. That they come from
// the index and not a scan is TestQueryPlans' check (the query plan), and
// BenchmarkMessagePageLast50 measures it on 100,000 events.
func TestMessagePageReadsAPage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 20,000-event session")
	}
	db := openTestDB(t)
	coretest.CreateSession(t, db, "s")
	fillMessages(t, db, "s", 20_000)
	ctx := context.Background()
	all, err := db.Messages(ctx, "s", false)
	if err != nil || len(all) != 20_000 {
		t.Fatal(len(all), err)
	}
	last, err := db.MessagePage(ctx, "s", core.MessageQuery{Limit: 50, Last: true})
	if err != nil || len(last) != 50 {
		t.Fatal(len(last), err)
	}
	for i, m := range last {
		if want := all[len(all)-50+i]; m.Seq != want.Seq {
			t.Fatalf("last[%d] is seq %d, want %d", i, m.Seq, want.Seq)
		}
	}
}

// BenchmarkMessagePageLast50 measures Session.messages(last: 50) on a
// 100,000-event session (the storage half of it).
func BenchmarkMessagePageLast50(b *testing.B) {
	benchDialects(b, func(b *testing.B, open func(testing.TB) *storage.DB) {
		db := open(b)
		coretest.CreateSession(b, db, "s")
		fillMessages(b, db, "s", 99_999)
		ctx := context.Background()
		b.ResetTimer()
		cpu := startCPU()
		for b.Loop() {
			msgs, err := db.MessagePage(ctx, "s", core.MessageQuery{Limit: 50, Last: true})
			if err != nil || len(msgs) != 50 {
				b.Fatal(len(msgs), err)
			}
		}
		cpu.report(b)
	})
}

func TestMessagePagePostgres(t *testing.T) {
	pgtest.Require(t)
	testMessagePage(t, openPGTestDB(t))
}
