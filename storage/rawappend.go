package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/foya-dev/foya/core"
)

// The common append on SQLite — events that touch no projection but the
// messages and the session's head and phase, which is what a turn writes —
// runs on the SQLite driver's own connection (sql.Conn.Raw), with driver
// statements prepared once, BEGIN and COMMIT among them. Through
// database/sql every transaction started a goroutine that waits for the
// end of its context (and was woken at the commit), every statement took
// the pool's locks, and the driver parsed BEGIN and COMMIT again each time:
// with the statements themselves, a fifth of a single-event append's CPU.
// Appends that create or update a session, rewind it or record usage take
// the general path (appendTx in a database/sql transaction).

// rawStmts are the fast append path's driver statements, prepared on one
// driver connection (conn).
type rawStmts struct {
	conn                    any
	begin, commit, rollback driver.Stmt
	all                     [stCount]driver.Stmt // appendSQL's statements
}

// rawAppender holds the statements of the fast path; its mutex is taken by
// the append that owns the writer connection, so it is never contended.
type rawAppender struct {
	mu   sync.Mutex
	st   *rawStmts
	args []driver.NamedValue
}

// rawConn is what the fast path needs of the driver's connection.
type rawConn interface {
	driver.ConnPrepareContext
}

// prepare returns the statements prepared on dc, preparing them when dc is
// not the connection they were prepared on (the first append, or the pool
// replaced a broken connection; the old statements went with it).
func (a *rawAppender) prepare(ctx context.Context, dc any) (*rawStmts, error) {
	if a.st != nil && a.st.conn == dc {
		return a.st, nil
	}
	c, ok := dc.(rawConn)
	if !ok {
		return nil, fmt.Errorf("sqlite driver connection %T cannot prepare statements", dc)
	}
	s := &rawStmts{conn: dc}
	prep := func(q string) (driver.Stmt, error) {
		st, err := c.PrepareContext(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("prepare %.60q: %w", q, err)
		}
		if _, ok := st.(driver.StmtExecContext); !ok {
			return nil, fmt.Errorf("sqlite driver statement %T cannot execute with a context", st)
		}
		if _, ok := st.(driver.StmtQueryContext); !ok {
			return nil, fmt.Errorf("sqlite driver statement %T cannot query with a context", st)
		}
		return st, nil
	}
	var err error
	if s.begin, err = prep("BEGIN IMMEDIATE"); err == nil {
		if s.commit, err = prep("COMMIT"); err == nil {
			s.rollback, err = prep("ROLLBACK")
		}
	}
	for i, q := range appendSQL() {
		if err == nil {
			s.all[i], err = prep(q)
		}
	}
	if err != nil {
		s.close()
		return nil, err
	}
	a.st = s
	return s, nil
}

// close closes the statements (on the connection they were prepared on,
// which the caller holds).
func (s *rawStmts) close() error {
	var errs []error
	for _, st := range append([]driver.Stmt{s.begin, s.commit, s.rollback}, s.all[:]...) {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// fastAppendable reports whether events take the fast path: none of them
// has a projection other than messages and the session's head and phase.
func fastAppendable(events []core.Event) bool {
	for _, ev := range events {
		switch {
		case ev.Type.LiveOnly(),
			ev.Type == core.EventSessionCreated, ev.Type == core.EventSessionUpdated,
			ev.Type == core.EventHistoryRewound, ev.Type == core.EventUsage:
			return false
		}
	}
	return true
}

// appendFast is Append on SQLite for events that fastAppendable accepts:
// one transaction on the writer's driver connection.
func (d *DB) appendFast(ctx context.Context, sessionID string, expectedHead int64, events []core.Event) ([]core.Event, error) {
	conn, err := d.wsql.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("writer connection: %w", err)
	}
	defer conn.Close()
	a := &d.raw
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []core.Event
	madeLive := false
	err = conn.Raw(func(dc any) error {
		s, err := a.prepare(ctx, dc)
		if err != nil {
			return err
		}
		w := &rawTx{a: a, s: s}
		if err := w.exec(ctx, s.begin); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		out, err = w.append(ctx, sessionID, expectedHead, events)
		if err == nil {
			if err = w.exec(ctx, s.commit); err != nil {
				err = fmt.Errorf("commit: %w", err)
			}
		}
		if err != nil {
			// An INSERT OR ROLLBACK that failed has ended the
			// transaction already; ROLLBACK then fails, harmlessly.
			_ = w.exec(ctx, s.rollback)
			return err
		}
		madeLive = w.madeLive
		return nil
	})
	if err != nil {
		return nil, err
	}
	if madeLive {
		d.ckpt.madeLive()
	}
	return out, nil
}

// rawTx is a transaction of the fast path.
type rawTx struct {
	a *rawAppender
	s *rawStmts
	// madeLive: the transaction made the session's row live.
	madeLive bool
}

// exec runs st with args (the statements take no cancellable context: an
// append, once begun, completes).
func (w *rawTx) exec(ctx context.Context, st driver.Stmt, args ...driver.NamedValue) error {
	_, err := st.(driver.StmtExecContext).ExecContext(ctx, args)
	return err
}

// append is appendTx on the fast path (events as fastAppendable accepts).
func (w *rawTx) append(ctx context.Context, sessionID string, expectedHead int64, events []core.Event) ([]core.Event, error) {
	sid := noNUL(sessionID)
	head, dead, live, err := w.head(ctx, sid)
	if err != nil {
		return nil, fmt.Errorf("read head of session %s: %w", sessionID, err)
	}
	// (fastAppendable sends session_created to the general path: a
	// session without events is NOT_FOUND here.)
	if err := checkHead(sessionID, head, dead, expectedHead, events[0].Type); err != nil {
		return nil, err
	}
	out := make([]core.Event, len(events))
	rows := make([]eventRow, len(events))
	var msgs []messageRow
	phase := ""
	for i, ev := range events {
		ev = stamped(ev, sessionID, head+int64(i)+1)
		out[i] = ev
		rows[i] = toEventRow(ev)
		switch {
		case isMessage(ev):
			row, err := messageRowOf(ev)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, row)
		case ev.Type == core.EventPhaseChanged:
			var p core.PhasePayload
			if err := ev.Decode(&p); err != nil {
				return nil, err
			}
			phase = string(p.Phase)
		}
	}
	if err := rawChunks(ctx, w, stEvents, rows, func(args []driver.NamedValue, r eventRow) []driver.NamedValue {
		return appendValues(args, sid, r.Seq, noNUL(r.Type), noNUL(r.Payload), r.At)
	}); err != nil {
		return nil, fmt.Errorf("insert events: %w", err)
	}
	if err := rawChunks(ctx, w, stMessages, msgs, func(args []driver.NamedValue, r messageRow) []driver.NamedValue {
		return appendValues(args, sid, r.Seq, r.Role, noNUL(r.Payload), r.Active)
	}); err != nil {
		return nil, fmt.Errorf("insert messages of session %s: %w", sessionID, err)
	}
	last := out[len(out)-1]
	at := rows[len(rows)-1].At
	// A live row's head is read from the events (Session, Sessions): the
	// commit leaves the row alone unless the phase changed, one page and
	// one statement of a message event's five. The first such append
	// makes the row live; the checkpointer settles it (settleHeads).
	switch {
	case phase != "":
		err = w.exec(ctx, w.s.all[stTouchPhase], values(last.Seq, at, phase, sid)...)
	case !live:
		err = w.exec(ctx, w.s.all[stTouchLive], values(last.Seq, at, sid)...)
		w.madeLive = true
	}
	if err != nil {
		return nil, fmt.Errorf("update head of session %s: %w", sessionID, err)
	}
	return out, nil
}

// head reads the session's head seq, whether it has a tombstone and
// whether its row is live (sessions.head_live).
func (w *rawTx) head(ctx context.Context, sid string) (head int64, dead, live bool, err error) {
	rows, err := w.s.all[stHeadLive].(driver.StmtQueryContext).QueryContext(ctx, values(sid))
	if err != nil {
		return 0, false, false, err
	}
	defer rows.Close()
	dest := make([]driver.Value, 3)
	if err := rows.Next(dest); err != nil {
		if errors.Is(err, io.EOF) {
			return 0, false, false, sql.ErrNoRows
		}
		return 0, false, false, err
	}
	switch v := dest[0].(type) {
	case int64:
		head = v
	case nil:
	default:
		return 0, false, false, fmt.Errorf("head is %T", v)
	}
	d, ok := dest[1].(int64)
	if !ok {
		return 0, false, false, fmt.Errorf("tombstone flag is %T", dest[1])
	}
	switch v := dest[2].(type) {
	case int64:
		live = v != 0
	case nil: // no row (the append fails on the head check)
	default:
		return 0, false, false, fmt.Errorf("head_live is %T", v)
	}
	return head, d != 0, live, nil
}

// rawChunks inserts rows through the multi-row inserts from statement
// first on (one per chunk size), bind adding a row's values.
func rawChunks[R any](ctx context.Context, w *rawTx, first int, rows []R, bind func([]driver.NamedValue, R) []driver.NamedValue) error {
	for i, n := range chunks {
		for len(rows) >= n {
			args := w.a.args[:0]
			for _, r := range rows[:n] {
				args = bind(args, r)
			}
			w.a.args = args
			if err := w.exec(ctx, w.s.all[first+i], args...); err != nil {
				return fmt.Errorf("insert %d rows: %w", n, err)
			}
			rows = rows[n:]
		}
	}
	return nil
}

// appendValues adds vs to args as the next positional parameters.
func appendValues(args []driver.NamedValue, vs ...driver.Value) []driver.NamedValue {
	for _, v := range vs {
		args = append(args, driver.NamedValue{Ordinal: len(args) + 1, Value: v})
	}
	return args
}

func values(vs ...driver.Value) []driver.NamedValue { return appendValues(nil, vs...) }
