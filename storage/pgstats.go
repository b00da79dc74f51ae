package storage

import (
	"context"
	"errors"
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

// sqlStatsLook lists the kernel's history tables (as sqlNeverAnalyzed,
// by name, in its schema) with their statistics' row count, and whether
// they hold data.
const sqlStatsLook = `SELECT c.relname, c.reltuples, pg_relation_size(c.oid) > 0 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind = 'r'
AND c.relname IN ('attachments', 'events', 'messages', 'sessions', 'usage_ledger')
ORDER BY c.relname`

// look reads the statistics' row counts and analyzes the tables that
// need it (see pgStats).
func (s *pgStats) look(ctx context.Context) error {
	created := s.created.Load()
	rows, err := s.db.QueryContext(ctx, sqlStatsLook)
	if err != nil {
		return err
	}
	var stale []string
	sessions := false
	for rows.Next() {
		var name string
		var reltuples float64
		var data bool
		if err = rows.Scan(&name, &reltuples, &data); err != nil {
			break
		}
		switch {
		case name == "sessions" && float64(created) > reltuples:
			sessions = true
			stale = append(stale, name)
		case reltuples < 0 && data:
			stale = append(stale, name)
		}
	}
	if err = errors.Join(err, rows.Err(), rows.Close()); err != nil {
		return err
	}
	for _, t := range stale {
		start := time.Now()
		if _, err := s.db.ExecContext(ctx, "ANALYZE "+pgx.Identifier{t}.Sanitize()); err != nil {
			return err
		}
		s.log.Info("planner statistics taken after a bulk load", "table", t, "took", time.Since(start).Round(time.Millisecond))
	}
	if sessions {
		s.created.Add(-created)
	}
	return nil
}

// close stops a look that runs and waits for it.
func (s *pgStats) close() {
	if s == nil {
		return
	}
	s.cancel()
	s.wg.Wait()
}
