package storage

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
)

// TestCheckpointerRestartsTheLog: a checkpoint taken while the
// checkpointer holds the writer copies the whole log, and the next commit
// starts the log over (the log then holds that commit's pages alone).
func TestCheckpointerRestartsTheLog(t *testing.T) {
	ctx := context.Background()
	db := openTempDB(t)
	appendOne := func(i int) {
		t.Helper()
		if _, err := db.Append(ctx, "s", core.AnyHead, []core.Event{coretest.MessageEvent(t, "s", core.RoleUser, fmt.Sprintf("message %d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	coretest.CreateSession(t, db, "s")
	for i := range 300 {
		appendOne(i)
	}
	logged, copied, err := db.ckpt.restart(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if logged < 300 || copied != logged {
		t.Fatalf("holding the writer, the checkpoint copied %d of %d pages; want all of 300 or more", copied, logged)
	}
	appendOne(300)
	if logged, _, err = db.ckpt.checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if logged > 10 {
		t.Fatalf("after the restart and one commit the log holds %d pages; want that commit's few", logged)
	}
	if head, err := db.HeadSeq(ctx, "s"); err != nil || head != 302 {
		t.Fatalf("head %d %v, want 302", head, err)
	}
}

// TestAppendsLeaveTheSessionRowLive: single-event appends make the
// session's row live once and then leave it alone (a message event's
// commit writes four pages, not five); Session and Sessions read the head
// and time of a live row from its last event; the checkpointer's settle
// writes them back and clears the flag.
func TestAppendsLeaveTheSessionRowLive(t *testing.T) {
	ctx := context.Background()
	db := openTempDB(t)
	// The background loop would settle the row at its own moments.
	stopCheckpointLoop(db)
	coretest.CreateSession(t, db, "s")
	var last core.Event
	appendOne := func(i int) {
		t.Helper()
		out, err := db.Append(ctx, "s", core.AnyHead, []core.Event{coretest.MessageEvent(t, "s", core.RoleUser, fmt.Sprintf("message %d", i))})
		if err != nil {
			t.Fatal(err)
		}
		last = out[0]
	}
	row := func() (head int64, live int64) {
		t.Helper()
		if err := db.w.NewRaw("SELECT head_seq, head_live FROM sessions WHERE id = 's'").Scan(ctx, &head, &live); err != nil {
			t.Fatal(err)
		}
		return head, live
	}
	check := func(wantSeq int64) {
		t.Helper()
		s, err := db.Session(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if s.HeadSeq != wantSeq || !s.UpdatedAt.Equal(last.At) {
			t.Errorf("Session: head %d updated %v, want %d %v", s.HeadSeq, s.UpdatedAt, wantSeq, last.At)
		}
		list, err := db.Sessions(ctx, core.SessionFilter{IncludeChildren: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].HeadSeq != wantSeq || !list[0].UpdatedAt.Equal(last.At) {
			t.Errorf("Sessions: %+v, want head %d updated %v", list, wantSeq, last.At)
		}
	}
	for i := range 3 {
		appendOne(i)
	}
	if head, live := row(); head != 2 || live != 1 {
		t.Fatalf("after 3 appends the row has head %d live %d; want the first append's head 2, live", head, live)
	}
	check(4)
	if err := db.ckpt.settleHeads(ctx); err != nil {
		t.Fatal(err)
	}
	if head, live := row(); head != 4 || live != 0 {
		t.Fatalf("after the settle the row has head %d live %d; want 4, settled", head, live)
	}
	check(4)
	appendOne(3) // live again
	if _, _, err := db.ckpt.restart(ctx); err != nil {
		t.Fatal(err)
	}
	appendOne(4)
	logged, _, err := db.ckpt.checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if logged != 4 {
		t.Errorf("a message event on a live row wrote %d pages; want 4 (events, its index, messages, its index)", logged)
	}
	check(6)
}

// stopCheckpointLoop stops db's checkpointer goroutine, so that a test runs
// its steps at its own moments; Close then finds it stopped.
func stopCheckpointLoop(db *DB) {
	close(db.ckpt.stop)
	<-db.ckpt.done
	db.ckpt.stop = make(chan struct{})
}

// openTempDB opens a new SQLite store in a temporary directory, closed
// when the test ends.
func openTempDB(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "foya.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestAppendAfterCheckpointDoesNotSync: once a checkpoint copied the whole
// log, the checkpointer starts the log over itself (the header's sync), and
// the next append — sendMessage's, after a pause — syncs nothing.
func TestAppendAfterCheckpointDoesNotSync(t *testing.T) {
	ctx := context.Background()
	db := openTempDB(t)
	stopCheckpointLoop(db) // this test runs the checkpointer's steps itself
	coretest.CreateSession(t, db, "s")
	appendOne := func(i int) {
		t.Helper()
		if _, err := db.Append(ctx, "s", core.AnyHead, []core.Event{coretest.MessageEvent(t, "s", core.RoleUser, fmt.Sprintf("message %d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 3 {
		appendOne(round)
		logged, copied, err := db.ckpt.checkpoint(ctx)
		if err != nil || logged == 0 || copied != logged {
			t.Fatalf("checkpoint copied %d of %d pages (%v)", copied, logged, err)
		}
		syncs := walVFS.walSyncs.Load()
		if err := db.ckpt.startLog(ctx); err != nil {
			t.Fatal(err)
		}
		if n := walVFS.walSyncs.Load() - syncs; n != 1 {
			t.Fatalf("round %d: starting the log over synced %d times, want 1 (the header)", round, n)
		}
		syncs = walVFS.walSyncs.Load()
		appendOne(100 + round)
		if n := walVFS.walSyncs.Load() - syncs; n != 0 {
			t.Fatalf("round %d: the append after the checkpoint synced %d times, want 0", round, n)
		}
	}
	if head, err := db.HeadSeq(ctx, "s"); err != nil || head != 7 {
		t.Fatalf("head %d %v, want 7", head, err)
	}
}

// TestCheckpointWaitsForAQuietWriter: the checkpointer runs once commits
// stop coming for its delay (not at a fixed time after the first, which
// put a checkpoint inside one turn's first request in seven), no later
// than its longest wait from the first commit, and after its delay from
// the first under a stream of commits.
func TestCheckpointWaitsForAQuietWriter(t *testing.T) {
	ctx := context.Background()
	db := openTempDB(t)
	coretest.CreateSession(t, db, "s")
	c := db.ckpt
	restart := func(delay, maxWait time.Duration) {
		stopCheckpointLoop(db)
		c.delay, c.maxWait, c.done = delay, maxWait, make(chan struct{})
		select { // a kick of an earlier append
		case <-c.kick:
		default:
		}
		c.rounds.Store(0)
		go c.loop()
	}
	appendEvery := func(n int, gap time.Duration) {
		t.Helper()
		for i := range n {
			if i > 0 {
				time.Sleep(gap)
			}
			if _, err := db.Append(ctx, "s", core.AnyHead, []core.Event{coretest.MessageEvent(t, "s", core.RoleUser, "m")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitRounds := func(want int64) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); c.rounds.Load() < want; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d checkpoint rounds; want %d", c.rounds.Load(), want)
			}
		}
	}

	// A few commits 40 ms apart for 0.4 s, a delay of 0.25 s: no round
	// meanwhile, one once they stop.
	restart(250*time.Millisecond, time.Minute)
	appendEvery(10, 40*time.Millisecond)
	if n := c.rounds.Load(); n != 0 {
		t.Fatalf("%d checkpoint rounds while the writer committed every 40 ms; want 0 (delay 250 ms)", n)
	}
	waitRounds(1)
	time.Sleep(400 * time.Millisecond)
	if n := c.rounds.Load(); n != 1 {
		t.Fatalf("%d checkpoint rounds for one burst of commits; want 1", n)
	}

	// A commit every 100 ms for 1.2 s with a longest wait of 0.3 s:
	// rounds run meanwhile.
	restart(250*time.Millisecond, 300*time.Millisecond)
	appendEvery(13, 100*time.Millisecond)
	if n := c.rounds.Load(); n < 2 {
		t.Fatalf("%d checkpoint rounds during 1.2 s of commits with a longest wait of 0.3 s; want 2 or more", n)
	}

	// A stream (a commit every 2 ms for about a second): rounds run
	// meanwhile, each the delay after the first commit it covers.
	restart(250*time.Millisecond, time.Minute)
	appendEvery(400, 2*time.Millisecond)
	if n := c.rounds.Load(); n < 2 {
		t.Fatalf("%d checkpoint rounds during a stream of commits; want 2 or more", n)
	}
}

// BenchmarkSettleHeads measures the checkpointer's settle of one live
// session row among 1,000 sessions: an append makes the row live, the
// settle writes its head back (append+settle less append).
func BenchmarkSettleHeads(b *testing.B) {
	ctx := context.Background()
	db := openTempDB(b)
	stopCheckpointLoop(db)
	for i := range 1000 {
		coretest.CreateSession(b, db, fmt.Sprintf("s%04d", i))
	}
	if err := db.ckpt.settleHeads(ctx); err != nil {
		b.Fatal(err)
	}
	ev := coretest.MessageEvent(b, "s0500", core.RoleUser, "hello")
	for _, settle := range []bool{false, true} {
		name := "append"
		if settle {
			name = "append+settle"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := db.Append(ctx, "s0500", core.AnyHead, []core.Event{ev}); err != nil {
					b.Fatal(err)
				}
				if !settle {
					continue
				}
				db.ckpt.live.Store(true)
				if err := db.ckpt.settleHeads(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
