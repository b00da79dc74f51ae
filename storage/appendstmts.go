package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
)

// The append path on SQLite runs the same five statements for every batch
// of events. bun writes values into the query text, so each statement was
// new to SQLite and parsed and compiled again at every append: with the
// parser a third of an append's CPU, and a multi-row insert a statement of
// its own for every batch size. appendStmts prepares them once, with bound
// parameters, on the writer connection (SQLite has one writer: the pool
// holds exactly one connection, kept open); a transaction picks them up
// with (*sql.Tx).StmtContext, which reuses the statement already prepared
// on its connection, and steps them once per row.
//
// PostgreSQL keeps bun's multi-row inserts: there every statement is a
// round trip, and fewer statements matter more than parsing.
const (
	sqlHead       = "SELECT (SELECT MAX(seq) FROM events WHERE session_id = ?1), EXISTS (SELECT 1 FROM tombstones WHERE session_id = ?1)"
	sqlTouch      = "UPDATE sessions SET head_seq = ?, updated_at = ? WHERE id = ?"
	sqlTouchPhase = "UPDATE sessions SET head_seq = ?, updated_at = ?, phase = ? WHERE id = ?"
	// The fast path's head also reads whether the session's row is live
	// (see rawTx.append), and makes it live with its last write of it.
	sqlHeadLive  = "SELECT (SELECT MAX(seq) FROM events WHERE session_id = ?1), EXISTS (SELECT 1 FROM tombstones WHERE session_id = ?1), (SELECT head_live FROM sessions WHERE id = ?1)"
	sqlTouchLive = "UPDATE sessions SET head_seq = ?, updated_at = ?, head_live = 1 WHERE id = ?"
	// A turn's usage event writes its ledger row (recordUsage; no
	// RETURNING of the new id, which nothing reads), then adds it to the
	// session's totals (sqlAddSessionUsage).
	// A session's row, as its session_created event projects it (the
	// usage totals start at their columns' defaults). OR ROLLBACK: see
	// insertRows.
	sqlCreateSession = "INSERT OR ROLLBACK INTO sessions (id, parent_id, project_id, connection_id, phase, head_seq, meta, created_at, updated_at, head_live) " +
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)"
	sqlUsage = "INSERT INTO usage_ledger (session_id, event_seq, route, connection_id, model, purpose, input_tokens, output_tokens, " +
		"total_tokens, cached_tokens, cache_write_tokens, estimated, at, cost, imported) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

// chunks are the row counts of the prepared multi-row inserts, largest
// first: a batch is cut greedily into them (100 rows: 64, 4 × 8, 4 × 1), so
// a batch of n rows steps about n/64 + 14 statements instead of n.
var chunks = [...]int{16, 4, 1}

// The statements of appendStmts, by index.
const (
	stHead = iota
	stTouch
	stTouchPhase
	stHeadLive
	stTouchLive
	stUsage
	stSessionUsage
	stCreateSession
	stEvents                            // + the index of a chunk size
	stMessages = stEvents + len(chunks) // + the index of a chunk size
	stCount    = stMessages + len(chunks)
)

// appendSQL is the text of each statement of appendStmts.
func appendSQL() [stCount]string {
	var q [stCount]string
	q[stHead], q[stTouch], q[stTouchPhase] = sqlHead, sqlTouch, sqlTouchPhase
	q[stHeadLive], q[stTouchLive], q[stUsage], q[stSessionUsage] = sqlHeadLive, sqlTouchLive, sqlUsage, sqlAddSessionUsage
	q[stCreateSession] = sqlCreateSession
	for i, n := range chunks {
		q[stEvents+i] = insertRows("events (session_id, seq, type, payload, at)", 5, n)
		q[stMessages+i] = insertRows("messages (session_id, seq, role, payload, active)", 5, n)
	}
	return q
}

// insertRows is an INSERT of rows rows of cols parameters each into into.
//
// It is INSERT OR ROLLBACK: a row that breaks a constraint (a bug: seqs
// are numbered from the head read in the same transaction) ends the whole
// transaction, which the append would roll back anyway. With the default
// (ABORT) SQLite must be able to undo one statement of a multi-row insert
// alone, and copies every page the statement changes to a statement
// journal first: most of the pages an append writes.
func insertRows(into string, cols, rows int) string {
	var b strings.Builder
	b.WriteString("INSERT OR ROLLBACK INTO " + into + " VALUES ")
	row := "(?" + strings.Repeat(", ?", cols-1) + ")"
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	return b.String()
}

// appendStmts are the prepared statements of the append path on SQLite.
type appendStmts [stCount]*sql.Stmt

// prepareAppend prepares the append path's statements on db (the writer).
func prepareAppend(ctx context.Context, db *sql.DB) (*appendStmts, error) {
	s := &appendStmts{}
	for i, q := range appendSQL() {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("prepare %.60q: %w", q, err)
		}
		s[i] = st
	}
	return s, nil
}

func (s *appendStmts) close() error {
	var errs []error
	for _, st := range s {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// txWriter writes an append's rows in tx: through the prepared statements
// on SQLite (st set), through bun's multi-row inserts on PostgreSQL.
type txWriter struct {
	tx    bun.Tx
	st    *appendStmts
	bound [stCount]*sql.Stmt // st's statements bound to tx, on first use
	args  []any
}

func newTxWriter(tx bun.Tx, st *appendStmts) *txWriter {
	return &txWriter{tx: tx, st: st}
}

// stmt is statement i bound to the transaction.
func (w *txWriter) stmt(ctx context.Context, i int) *sql.Stmt {
	if w.bound[i] == nil {
		w.bound[i] = w.tx.Tx.StmtContext(ctx, w.st[i])
	}
	return w.bound[i]
}

// head reads the session's head seq and whether it has a tombstone.
func (w *txWriter) head(ctx context.Context, sessionID string) (int64, bool, error) {
	var head sql.NullInt64
	var dead bool
	var err error
	if w.st != nil {
		err = w.stmt(ctx, stHead).QueryRowContext(ctx, noNUL(sessionID)).Scan(&head, &dead)
	} else {
		err = w.tx.NewRaw("SELECT (SELECT MAX(seq) FROM events WHERE session_id = ?), EXISTS (SELECT 1 FROM tombstones WHERE session_id = ?)",
			sessionID, sessionID).Scan(ctx, &head, &dead)
	}
	if err != nil {
		return 0, false, fmt.Errorf("read head of session %s: %w", sessionID, err)
	}
	return head.Int64, dead, nil
}

// insertEvents inserts rows into the event log.
func (w *txWriter) insertEvents(ctx context.Context, rows []eventRow) error {
	if w.st == nil {
		for i := 0; i < len(rows); i += appendBatch {
			batch := rows[i:min(i+appendBatch, len(rows))]
			if _, err := w.tx.NewInsert().Model(&batch).Exec(ctx); err != nil {
				return fmt.Errorf("insert events: %w", err)
			}
		}
		return nil
	}
	if err := insertChunks(ctx, w, stEvents, rows, func(args []any, r eventRow) []any {
		return append(args, noNUL(r.SessionID), r.Seq, noNUL(r.Type), noNUL(r.Payload), r.At)
	}); err != nil {
		return fmt.Errorf("insert events: %w", err)
	}
	return nil
}

// insertMessages inserts rows into the messages projection.
func (w *txWriter) insertMessages(ctx context.Context, rows []messageRow) error {
	if len(rows) == 0 {
		return nil
	}
	if w.st == nil {
		if _, err := w.tx.NewInsert().Model(&rows).Exec(ctx); err != nil {
			return fmt.Errorf("insert messages of session %s: %w", rows[0].SessionID, err)
		}
		return nil
	}
	if err := insertChunks(ctx, w, stMessages, rows, func(args []any, r messageRow) []any {
		return append(args, noNUL(r.SessionID), r.Seq, r.Role, noNUL(r.Payload), r.Active)
	}); err != nil {
		return fmt.Errorf("insert messages of session %s: %w", rows[0].SessionID, err)
	}
	return nil
}

// insertUsage writes a ledger row.
func (w *txWriter) insertUsage(ctx context.Context, r usageRow) error {
	var err error
	if w.st == nil {
		_, err = w.tx.NewInsert().Model(&r).Returning("NULL").Exec(ctx)
	} else {
		_, err = w.stmt(ctx, stUsage).ExecContext(ctx, noNUL(r.SessionID), r.EventSeq, noNUL(r.Route), noNUL(r.ConnectionID), noNUL(r.Model),
			noNUL(r.Purpose), r.InputTokens, r.OutputTokens, r.TotalTokens, r.CachedTokens, r.CacheWrites, r.Estimated, r.At, r.Cost, r.Imported)
	}
	if err != nil {
		return fmt.Errorf("record usage of session %s: %w", r.SessionID, err)
	}
	// The session's totals (sessions.usage_*), in the same transaction.
	var unpriced int64
	if r.Cost == nil {
		unpriced = r.TotalTokens
	}
	args := []any{r.InputTokens, r.OutputTokens, r.TotalTokens, r.CachedTokens, r.CacheWrites, r.Estimated, r.Cost, r.Cost, unpriced, noNUL(r.SessionID)}
	if w.st == nil {
		_, err = w.tx.NewRaw(sqlAddSessionUsage, args...).Exec(ctx)
	} else {
		_, err = w.stmt(ctx, stSessionUsage).ExecContext(ctx, args...)
	}
	if err != nil {
		return fmt.Errorf("add to the usage totals of session %s: %w", r.SessionID, err)
	}
	return nil
}

// insertSession adds a new session's row to the sessions projection.
func (w *txWriter) insertSession(ctx context.Context, r sessionRow) error {
	var err error
	if w.st == nil {
		_, err = w.tx.NewInsert().Model(&r).Exec(ctx)
	} else {
		_, err = w.stmt(ctx, stCreateSession).ExecContext(ctx, noNUL(r.ID), nullable(noNUL(r.ParentID)), nullable(noNUL(r.ProjectID)),
			nullable(noNUL(r.ConnectionID)), r.Phase, r.HeadSeq, noNUL(r.Meta), r.CreatedAt, r.UpdatedAt)
	}
	if err != nil {
		return fmt.Errorf("insert session %s: %w", r.ID, err)
	}
	return nil
}

// touch records the session's new head, and its phase when not empty.
func (w *txWriter) touch(ctx context.Context, sessionID string, seq int64, at, phase string) error {
	if w.st == nil {
		q := w.tx.NewUpdate().Table("sessions").Set("head_seq = ?", seq).Set("updated_at = ?", at)
		if phase != "" {
			q = q.Set("phase = ?", phase)
		}
		if _, err := q.Where("id = ?", sessionID).Exec(ctx); err != nil {
			return fmt.Errorf("update head of session %s: %w", sessionID, err)
		}
		return nil
	}
	var err error
	if phase != "" {
		_, err = w.stmt(ctx, stTouchPhase).ExecContext(ctx, seq, at, phase, noNUL(sessionID))
	} else {
		_, err = w.stmt(ctx, stTouch).ExecContext(ctx, seq, at, noNUL(sessionID))
	}
	if err != nil {
		return fmt.Errorf("update head of session %s: %w", sessionID, err)
	}
	return nil
}

// insertChunks inserts rows through the prepared multi-row inserts from
// statement first on (one per chunk size), bind adding a row's parameters.
func insertChunks[R any](ctx context.Context, w *txWriter, first int, rows []R, bind func([]any, R) []any) error {
	for i, n := range chunks {
		for len(rows) >= n {
			args := w.args[:0]
			for _, r := range rows[:n] {
				args = bind(args, r)
			}
			w.args = args
			if _, err := w.stmt(ctx, first+i).ExecContext(ctx, args...); err != nil {
				return fmt.Errorf("insert %d rows: %w", n, err)
			}
			rows = rows[n:]
		}
	}
	return nil
}
