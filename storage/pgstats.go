package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
)

// statsLookEvery is how many sessions a PostgreSQL kernel creates between
// two looks at the session table's planner statistics.
const statsLookEvery = 1000

// statsLookTimeout bounds one look and the ANALYZE it runs.
const statsLookTimeout = time.Minute

// pgStats keeps PostgreSQL's planner statistics of the session table
// abreast of a bulk load the kernel itself writes (a script importing
// thousands of archives, or creating sessions in a loop), without waiting
// for autovacuum (about a minute, and never when it is off).
//
// Without fresh statistics the planner takes the table for the size it
// had at its last ANALYZE and, for instance, sorts every session for each
// page of the session list instead of walking its index (3.8-7.4 ms a page
// of 100 among 10,000 instead of 0.05-0.13 ms). The start takes tables
// that never had statistics (analyzeNeverAnalyzed); this takes the growth
// after it: every statsLookEvery sessions the kernel creates, one query of
// pg_class, and an ANALYZE of sessions when the kernel alone has created
// more sessions since its last ANALYZE than the statistics count (the
// table more than doubled), and of the other history tables that still
// have none. One look at a time, in the background: the writes that
// crossed the mark do not wait for it. A failure is logged.
type pgStats struct {
	db  *bun.DB
	log *slog.Logger
	// created counts the sessions this kernel created since its last
	// ANALYZE of sessions.
	created atomic.Int64
	looking atomic.Bool
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func newPGStats(db *bun.DB, log *slog.Logger) *pgStats {
	ctx, cancel := context.WithCancel(context.Background())
	return &pgStats{db: db, log: log, ctx: ctx, cancel: cancel}
}

// sessionsCreated counts n sessions committed; crossing a multiple of
// statsLookEvery starts a look unless one runs. Nil-safe (SQLite has none).
func (s *pgStats) sessionsCreated(n int) {
	if s == nil || n <= 0 {
		return
	}
	c := s.created.Add(int64(n))
	if c/statsLookEvery == (c-int64(n))/statsLookEvery || s.ctx.Err() != nil {
		return
	}
	if !s.looking.CompareAndSwap(false, true) {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.looking.Store(false)
		ctx, cancel := context.WithTimeout(s.ctx, statsLookTimeout)
		defer cancel()
		if err := s.look(ctx); err != nil && s.ctx.Err() == nil {
			s.log.Warn("keep the planner statistics of the history tables", "err", err)
		}
	}()
}

// sqlStatsLook lists the kernel's tables that grow with history with
// their statistics' row count (reltuples, -1 when they have none), and
// whether they hold data. Only these, by name, in the kernel's schema:
// another application's tables there are not its to analyze.
const sqlStatsLook = `SELECT c.relname, c.reltuples, pg_relation_size(c.oid) > 0 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind = 'r'
AND c.relname IN ('attachments', 'events', 'messages', 'sessions', 'usage_ledger')
ORDER BY c.relname`

// analyzeStale runs ANALYZE on the history tables that hold data but have
// no statistics, and on sessions when created (the sessions a kernel
// created since its last ANALYZE of it) outnumbers its statistics' count.
// It logs each table it analyzed with msg, goes on past a table that
// fails, and reports whether sessions was analyzed.
func analyzeStale(ctx context.Context, db bun.IConn, log *slog.Logger, created int64, msg string) (sessions bool, err error) {
	rows, err := db.QueryContext(ctx, sqlStatsLook)
	if err != nil {
		return false, err
	}
	var stale []string
	for rows.Next() {
		var name string
		var reltuples float64
		var data bool
		if err = rows.Scan(&name, &reltuples, &data); err != nil {
			break
		}
		if reltuples < 0 && data || name == "sessions" && created > 0 && float64(created) > reltuples {
			stale = append(stale, name)
		}
	}
	if err = errors.Join(err, rows.Err(), rows.Close()); err != nil {
		return false, err
	}
	var errs []error
	for _, t := range stale {
		start := time.Now()
		if _, err := db.ExecContext(ctx, "ANALYZE "+pgx.Identifier{t}.Sanitize()); err != nil {
			errs = append(errs, fmt.Errorf("analyze %s: %w", t, err))
			continue
		}
		sessions = sessions || t == "sessions"
		log.Info(msg, "table", t, "took", time.Since(start).Round(time.Millisecond))
	}
	return sessions, errors.Join(errs...)
}

// look analyzes the tables that need it (see pgStats).
func (s *pgStats) look(ctx context.Context) error {
	created := s.created.Load()
	sessions, err := analyzeStale(ctx, s.db, s.log, created, "planner statistics taken after a bulk load")
	if sessions {
		s.created.Add(-created)
	}
	return err
}

// close stops a look that runs and waits for it.
func (s *pgStats) close() {
	if s == nil {
		return
	}
	s.cancel()
	s.wg.Wait()
}
