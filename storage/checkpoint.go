package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// writerAutoCheckpoint is the WAL size (in pages of 4 KiB) at which the
// SQLite writer checkpoints by itself, in the middle of a commit. The
// checkpointer below runs checkpoints on its own connection after
// appends and has the log restarted at checkpointRestart pages, so the
// writer reaches this only when that one lags behind: it bounds the WAL
// (40 MB), it is not the usual path.
const writerAutoCheckpoint = 10000

// checkpointDelay is how long the writer must have been quiet (no commit)
// before the checkpointer runs; checkpointMaxWait bounds that wait from
// the first commit it covers, so that a steady trickle of commits (one
// every 40 ms, say) still has its log copied about once a second. From
// checkpointStream commits on, the wait is checkpointDelay from its start
// (a stream of appends: the log grows by thousands of pages a second).
const (
	checkpointDelay   = 50 * time.Millisecond
	checkpointMaxWait = time.Second
	checkpointStream  = 16
)

// checkpointBehind: a checkpoint of a log this long (pages) that could not
// copy all of it (the writer committed meanwhile) makes the checkpointer
// stop waiting checkpointDelay.
const checkpointBehind = 1000

// checkpointRestart is the WAL size (pages) from which the checkpointer
// has the log restarted: it holds the writer for a last, short checkpoint
// of what was committed since its previous one, so that the log is copied
// whole and the writer's next commit starts it over. Under a steady
// stream of appends a checkpoint that runs beside the writer never gets
// to the end of the log, and the writer restarted it itself at
// writerAutoCheckpoint pages, syncing in the middle of a commit all that
// the log had gathered since the last sync (a stall of 19 ms on average,
// a third of the wall time of single-event appends).
const checkpointRestart = 4000

// checkpointer runs SQLite's WAL checkpoints off the writer's path: with
// synchronous=NORMAL a checkpoint is where SQLite waits for the disk
// (fsync of the WAL, then of the database file), and SQLite runs it
// inside the commit that crossed the WAL's size limit, so one append in
// a few hundred waited for two fsyncs (BenchmarkAppendBatch: 40% of the
// wall time of single-event appends). Here a goroutine with a connection
// of its own runs a PASSIVE checkpoint (it never blocks the writer or the
// readers) once no append was committed for 50 ms (at most a second after
// the first it covers), for all of them. What a
// crash or power loss can lose is unchanged: commits are not synced
// either way (docs/history.md), and checkpoints run at least as often.
type checkpointer struct {
	db *sql.DB
	// writer is the writer's pool: the checkpoint that has the log
	// restarted holds its connection, so that nothing commits meanwhile.
	writer *sql.DB
	log    *slog.Logger
	kick   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	// live is set when an append may have made a session's row live since
	// the last settle (and at start: a crash leaves rows live), so that a
	// round with nothing to settle runs no statement on the writer.
	live atomic.Bool
	// settle is sqlSettle prepared on the writer at the first settle (by
	// the loop's goroutine, or a test's with the loop stopped): SQLite
	// parsed the statement again at every round, most of its cost.
	settle *sql.Stmt
	// last is when the writer last committed, as time since epoch.
	last    atomic.Int64
	epoch   time.Time
	commits atomic.Int64
	// delay and maxWait are checkpointDelay and checkpointMaxWait (tests
	// lengthen them); rounds counts the checkpoint rounds run.
	delay, maxWait time.Duration
	rounds         atomic.Int64
}

func startCheckpointer(path string, writer *sql.DB, log *slog.Logger) *checkpointer {
	db := openSQLite(dsn(path, false))
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	c := &checkpointer{db: db, writer: writer, log: log, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), epoch: time.Now(), delay: checkpointDelay, maxWait: checkpointMaxWait}
	c.live.Store(true)
	go c.loop()
	return c
}

// madeLive records that an append made a session's row live.
func (c *checkpointer) madeLive() {
	if c != nil {
		c.live.Store(true)
	}
}

// committed tells the checkpointer that the writer committed; it never
// blocks. Nil-safe (PostgreSQL has none).
func (c *checkpointer) committed() {
	if c == nil {
		return
	}
	c.last.Store(int64(time.Since(c.epoch)))
	c.commits.Add(1)
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) loop() {
	defer close(c.done)
	ctx := context.Background()
	behind := false
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		}
		// Commits of the next moments join this checkpoint, and it runs
		// once the writer is quiet, after the work that follows a commit
		// (a turn's first request to its provider, after sendMessage's
		// commit) instead of competing with it for the CPU and disk. A
		// checkpointer behind a steady stream of appends does not wait.
		if !behind && !c.quiet() {
			return
		}
		c.rounds.Add(1)
		if err := c.settleHeads(ctx); err != nil {
			c.log.Debug("settle session heads", "err", err)
		}
		logged, copied, err := c.checkpoint(ctx)
		if err != nil {
			c.log.Debug("WAL checkpoint", "err", err)
			behind = false
			continue
		}
		if logged >= checkpointRestart {
			// Caught up once more beside the writer, then without it.
			if logged, copied, err = c.checkpoint(ctx); err == nil {
				logged, copied, err = c.restart(ctx)
			}
			if err != nil {
				c.log.Debug("WAL checkpoint", "err", err)
			}
		}
		if err == nil && logged > 0 && copied == logged {
			if err := c.startLog(ctx); err != nil {
				c.log.Debug("start the WAL over", "err", err)
			}
		}
		behind = logged >= checkpointBehind && copied < logged
	}
}

// quiet waits until no commit came for c.delay, or c.maxWait has passed;
// false when the checkpointer stops. A stream of commits
// (checkpointStream or more since the wait began) waits c.delay only, as
// a fixed delay did before: the log of steady appends is copied as often.
// It reads the time of the last commit rather than receiving the commits'
// kicks: a kick would wake this goroutine, and perhaps an idle CPU, at
// every commit, sendMessage's included.
func (c *checkpointer) quiet() bool {
	start, n0 := time.Now(), c.commits.Load()
	for {
		elapsed := time.Since(start)
		wait := c.delay - (time.Since(c.epoch) - time.Duration(c.last.Load()))
		if c.commits.Load()-n0 >= checkpointStream {
			wait = min(wait, c.delay-elapsed)
		}
		wait = min(wait, c.maxWait-elapsed)
		if wait <= 0 {
			// The commits until now are this checkpoint's: their kicks
			// need no other round.
			select {
			case <-c.kick:
			default:
			}
			return true
		}
		t := time.NewTimer(wait)
		select {
		case <-c.stop:
			t.Stop()
			return false
		case <-t.C:
		}
	}
}

// sqlStartLog is the checkpointer's write after a checkpoint that copied
// the whole log: it changes nothing (user_version is not used) but
// writes a frame, page 1.
const sqlStartLog = "PRAGMA user_version = 0"

// startLog starts the log over right after a checkpoint copied all of it,
// on the writer's connection. The first commit into a log that was copied
// whole writes the log's header anew and, with synchronous=NORMAL, syncs
// it (SQLite needs the new header on disk before frames overwrite the
// old ones). Without this write that commit was the next append's, which
// after a pause is the append of sendMessage: an fdatasync of 0.5 ms on
// this project's machine (more on slower disks) before the turn could
// start. Now the checkpointer pays it, 50 ms after the last commit; the
// next append continues the log (TestAppendAfterCheckpointDoesNotSync).
// When a reader still reads an older snapshot the log is not started over
// and the frame is simply appended; the next checkpoint copies it.
func (c *checkpointer) startLog(ctx context.Context) error {
	if _, err := c.writer.ExecContext(ctx, sqlStartLog); err != nil {
		return fmt.Errorf("start the WAL over: %w", err)
	}
	return nil
}

// sqlSettle writes the true head and time of the live sessions' rows
// (rawTx.append) into them and clears head_live.
const sqlSettle = "UPDATE sessions SET head_seq = (SELECT MAX(seq) FROM events WHERE session_id = sessions.id), " +
	"updated_at = (SELECT at FROM events WHERE session_id = sessions.id ORDER BY seq DESC LIMIT 1), head_live = 0 " +
	"WHERE head_live <> 0 AND EXISTS (SELECT 1 FROM events WHERE session_id = sessions.id)"

// settleHeads settles the rows that appends made live since the last
// round, on the writer's connection (a short transaction between two
// appends; none when no row is live): the session list reads a live row's
// head from the events, a lookup per row, so live rows are kept to the
// sessions appended to in the last moments.
func (c *checkpointer) settleHeads(ctx context.Context) error {
	if !c.live.Swap(false) {
		return nil
	}
	if c.settle == nil {
		st, err := c.writer.PrepareContext(ctx, sqlSettle)
		if err != nil {
			c.live.Store(true)
			return fmt.Errorf("prepare the settle of live session heads: %w", err)
		}
		c.settle = st
	}
	if _, err := c.settle.ExecContext(ctx); err != nil {
		c.live.Store(true)
		return fmt.Errorf("settle live session heads: %w", err)
	}
	return nil
}

// checkpoint runs a PASSIVE checkpoint: it returns the pages in the log
// and the pages of it now copied to the database file.
func (c *checkpointer) checkpoint(ctx context.Context) (logged, copied int, err error) {
	var busy int
	if err := c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logged, &copied); err != nil {
		return 0, 0, err
	}
	return logged, copied, nil
}

// restart checkpoints while it holds the writer's connection (waiting at
// most a second for it): the log is then copied whole, unless a reader
// still reads an older snapshot, and the writer's next commit starts it
// over.
func (c *checkpointer) restart(ctx context.Context) (logged, copied int, err error) {
	hctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	conn, err := c.writer.Conn(hctx)
	if err != nil {
		return 0, 0, fmt.Errorf("hold the writer: %w", err)
	}
	defer conn.Close()
	return c.checkpoint(ctx)
}

// close stops the goroutine and closes its connection.
func (c *checkpointer) close() error {
	if c == nil {
		return nil
	}
	close(c.stop)
	<-c.done
	var errs []error
	if c.settle != nil {
		if err := c.settle.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close the settle statement: %w", err))
		}
	}
	if err := c.db.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close the checkpoint connection: %w", err))
	}
	return errors.Join(errs...)
}
