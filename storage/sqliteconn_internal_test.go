package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
)

// TestConnectionsHaveNoMutex: every connection to foya.db (the writer's,
// the readers', the checkpointer's) is in SQLite's multi-thread mode,
// without a mutex of its own (openSQLite).
func TestConnectionsHaveNoMutex(t *testing.T) {
	ctx := context.Background()
	db := openTempDB(t)
	for _, p := range []struct {
		name string
		pool *sql.DB
	}{{"writer", db.wsql}, {"reader", db.r.DB}, {"checkpointer", db.ckpt.db}} {
		conn, err := p.pool.Conn(ctx)
		if err != nil {
			t.Fatal(p.name, err)
		}
		err = conn.Raw(func(dc any) error {
			h, tls, ok := connHandle(dc)
			if !ok {
				return fmt.Errorf("%T is not the SQLite driver's connection this was written against", dc)
			}
			if m := sqlite3.Xsqlite3_db_mutex(tls, h); m != 0 {
				return fmt.Errorf("the connection has its mutex %#x", m)
			}
			return nil
		})
		conn.Close()
		if err != nil {
			t.Errorf("%s: %v", p.name, err)
		}
	}
	if dropConnMutex(nil) {
		t.Error("dropConnMutex(nil) reported a connection without a mutex")
	}
}

// TestConnectionsWithoutMutexUnderLoad: with no mutex of their own, the
// connections still serve a writer, readers and cancelled queries at once
// (run under -race): every append lands, every list reads a whole
// prefix, and a query cancelled mid-way (sqlite3_interrupt from the
// driver's goroutine) fails with the context's error and leaves its
// connection usable.
func TestConnectionsWithoutMutexUnderLoad(t *testing.T) {
	ctx := context.Background()
	db := openTempDB(t)
	const sessions, perSession = 8, 40
	for i := range sessions {
		coretest.CreateSession(t, db, fmt.Sprintf("s%d", i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // the writer
		defer wg.Done()
		defer close(stop)
		for n := range perSession {
			for i := range sessions {
				ev := coretest.MessageEvent(t, fmt.Sprintf("s%d", i), core.RoleUser, fmt.Sprintf("message %d", n))
				if _, err := db.Append(ctx, ev.SessionID, core.AnyHead, []core.Event{ev}); err != nil {
					errs <- fmt.Errorf("append: %w", err)
					return
				}
			}
		}
	}()
	// repeat runs body until the writer is done or body fails.
	repeat := func(body func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := body(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range 3 { // readers
		repeat(func() error {
			list, err := db.Sessions(ctx, core.SessionFilter{First: 100})
			if err != nil || len(list) != sessions {
				return fmt.Errorf("list: %d sessions, %v", len(list), err)
			}
			return nil
		})
	}
	// A count that takes a tenth of a second or more (a second under
	// -race), cancelled after 1 ms. SQLite ignores an interrupt that comes
	// before the statement runs (the deadline may pass while it is
	// prepared, on a loaded machine); the count then completes, which is
	// allowed, but most are interrupted. (A count to 100,000,000 ran for
	// minutes under -race when that happened.)
	const count = 300_000
	var interrupted atomic.Int64
	repeat(func() error {
		qctx, cancel := context.WithTimeout(ctx, time.Millisecond)
		defer cancel()
		var n int64
		err := db.r.QueryRowContext(qctx, fmt.Sprintf("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < %d) SELECT count(*) FROM c", count)).Scan(&n)
		switch {
		case err == nil && n != count:
			return fmt.Errorf("the count came to %d, want %d", n, count)
		case err != nil && !errors.Is(err, context.DeadlineExceeded) && !isInterrupted(err):
			return fmt.Errorf("cancelled query: %w", err)
		case err != nil:
			interrupted.Add(1)
		}
		return nil
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if interrupted.Load() == 0 {
		t.Error("no query was interrupted")
	}
	for i := range sessions {
		head, err := db.HeadSeq(ctx, fmt.Sprintf("s%d", i))
		if err != nil {
			t.Fatal(err)
		}
		events, err := db.Events(ctx, fmt.Sprintf("s%d", i), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(events); int64(got) != head || got < perSession {
			t.Errorf("s%d: %d events, head %d, want %d messages and more", i, got, head, perSession)
		}
	}
	// Every reader connection answers after the interrupts: as many held
	// at once as the pool opens.
	conns := make([]*sql.Conn, db.r.Stats().MaxOpenConnections)
	for i := range conns {
		c, err := db.r.DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	for i, c := range conns {
		var one int
		if err := c.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("reader %d after the interrupts: %d, %v", i, one, err)
		}
	}
}

// isInterrupted reports whether err is SQLite's SQLITE_INTERRUPT.
func isInterrupted(err error) bool {
	var se interface{ Code() int }
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_INTERRUPT
}
