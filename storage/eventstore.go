package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/foya-dev/foya/core"
)

var _ core.Store = (*DB)(nil)

// Append implements core.EventStore.
func (d *DB) Append(ctx context.Context, sessionID string, expectedHead int64, events []core.Event) ([]core.Event, error) {
	if len(events) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("append to session %s: %w", sessionID, err)
	}
	// Once begun, an append completes: it is one short transaction, and a
	// caller that went away (a client disconnecting from sendMessage)
	// changes nothing about it. Without a cancellable context the drivers
	// also start no goroutine per statement to watch it (the SQLite driver
	// does, and each costs a thread wake-up on the path of every first
	// token: BenchmarkAppendTurnStart).
	ctx = context.WithoutCancel(ctx)
	if d.wsql != nil && fastAppendable(events) {
		out, err := d.appendFast(ctx, sessionID, expectedHead, events)
		if err != nil {
			return nil, fmt.Errorf("append to session %s: %w", sessionID, err)
		}
		d.ckpt.committed()
		return out, nil
	}
	var out []core.Event
	err := d.w.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		out, err = appendTx(ctx, newTxWriter(tx, d.stmts), sessionID, expectedHead, events, false)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("append to session %s: %w", sessionID, err)
	}
	d.ckpt.committed()
	if d.stats != nil {
		created := 0
		for _, ev := range events {
			if ev.Type == core.EventSessionCreated {
				created++
			}
		}
		d.stats.sessionsCreated(created)
	}
	return out, nil
}

// stamped is ev as it is stored: in sessionID at seq, at the time of the
// append unless it carries its own.
func stamped(ev core.Event, sessionID string, seq int64) core.Event {
	ev.SessionID = sessionID
	ev.Seq = seq
	if ev.At.IsZero() {
		ev.At = time.Now().UTC()
	}
	return ev
}

// appendBatch bounds the rows of one INSERT statement.
const appendBatch = 500

// appendTx is Append inside tx; imported marks the ledger rows of usage
// events as imported.
func appendTx(ctx context.Context, w *txWriter, sessionID string, expectedHead int64, events []core.Event, imported bool) ([]core.Event, error) {
	out := make([]core.Event, len(events))
	head, err := lockedHead(ctx, w, sessionID, expectedHead, events)
	if err != nil {
		return nil, err
	}
	rows := make([]eventRow, len(events))
	for i, ev := range events {
		if ev.Type.LiveOnly() {
			return nil, fmt.Errorf("append %s: live-only events are never persisted", ev.Type)
		}
		ev = stamped(ev, sessionID, head+int64(i)+1)
		out[i] = ev
		rows[i] = toEventRow(ev)
	}
	if err := w.insertEvents(ctx, rows); err != nil {
		return nil, err
	}
	phase, err := project(ctx, w, sessionID, out, imported)
	if err != nil {
		return nil, err
	}
	return out, w.touch(ctx, sessionID, out[len(out)-1].Seq, rows[len(rows)-1].At, phase)
}

// lockedHead locks the session's row of tx and returns its head: a
// deleted session is NOT_FOUND, a head other than expectedHead (unless
// core.AnyHead) a CONFLICT, and the events of a new session must start
// with session_created.
func lockedHead(ctx context.Context, w *txWriter, sessionID string, expectedHead int64, events []core.Event) (int64, error) {
	if err := lockSession(ctx, w.tx, sessionID); err != nil {
		return 0, err
	}
	// The head and the tombstone in one round trip.
	head, dead, err := w.head(ctx, sessionID)
	if err != nil {
		return 0, err
	}
	return head, checkHead(sessionID, head, dead, expectedHead, events[0].Type)
}

// checkHead is what an append requires of the session's head and
// tombstone: a deleted session is NOT_FOUND, a head other than
// expectedHead (unless core.AnyHead) a CONFLICT, and a session without
// events NOT_FOUND unless the append starts with session_created.
func checkHead(sessionID string, head int64, dead bool, expectedHead int64, first core.EventType) error {
	if dead {
		return core.Errorf(core.CodeNotFound, "session %s was deleted", sessionID)
	}
	if expectedHead != core.AnyHead && head != expectedHead {
		return &core.Error{Code: core.CodeConflict,
			Message: fmt.Sprintf("session %s moved on: head is %d, expected %d; reload and try again", sessionID, head, expectedHead)}
	}
	if head == 0 && first != core.EventSessionCreated {
		return core.Errorf(core.CodeNotFound, "session %s not found", sessionID)
	}
	return nil
}

// project updates the projections of the appended events out in tx (runs
// of messages in one statement each) and returns the last phase they set.
func project(ctx context.Context, w *txWriter, sessionID string, out []core.Event, imported bool) (string, error) {
	tx := w.tx
	// Runs of message events go into the messages projection in one
	// statement (one round trip to PostgreSQL instead of one each).
	var msgs []messageRow
	phase := "" // the last phase_changed of the batch, set with the head
	flush := func() error {
		if err := w.insertMessages(ctx, msgs); err != nil {
			return err
		}
		msgs = msgs[:0]
		return nil
	}
	for _, ev := range out {
		if isMessage(ev) {
			row, err := messageRowOf(ev)
			if err != nil {
				return "", err
			}
			if msgs = append(msgs, row); len(msgs) >= appendBatch {
				if err := flush(); err != nil {
					return "", err
				}
			}
			continue
		}
		if ev.Type == core.EventPhaseChanged {
			// The session row is updated once, with the head (touch).
			var p core.PhasePayload
			if err := ev.Decode(&p); err != nil {
				return "", err
			}
			phase = string(p.Phase)
			continue
		}
		if err := flush(); err != nil {
			return "", err
		}
		if ev.Type == core.EventSessionCreated {
			// (apply's projection, through the statement prepared once)
			row, err := sessionRowOf(ev)
			if err != nil {
				return "", err
			}
			if err := w.insertSession(ctx, row); err != nil {
				return "", err
			}
			continue
		}
		if err := apply(ctx, tx, ev); err != nil {
			return "", err
		}
		if ev.Type == core.EventUsage {
			if err := recordUsage(ctx, w, ev, imported); err != nil {
				return "", err
			}
		}
	}
	if err := flush(); err != nil {
		return "", err
	}
	return phase, nil
}

func headSeq(ctx context.Context, db bun.IDB, sessionID string) (int64, error) {
	var head sql.NullInt64
	if err := db.NewSelect().Table("events").ColumnExpr("MAX(seq)").
		Where("session_id = ?", sessionID).Scan(ctx, &head); err != nil {
		return 0, fmt.Errorf("read head of session %s: %w", sessionID, err)
	}
	return head.Int64, nil
}

// HeadSeq implements core.EventStore.
func (d *DB) HeadSeq(ctx context.Context, sessionID string) (int64, error) {
	return headSeq(ctx, d.r, sessionID)
}

// Events implements core.EventStore.
func (d *DB) Events(ctx context.Context, sessionID string, afterSeq int64, limit int) ([]core.Event, error) {
	if limit <= 0 {
		limit = 500
	}
	if d.pg {
		// bun sends the values in the text: with parameters, PostgreSQL's
		// generic plan read a replay's pages slower (BenchmarkReplay10k
		// 42-51 → 54-70 ms).
		var rows []eventRow
		if err := d.r.NewSelect().Model(&rows).Where("session_id = ? AND seq > ?", sessionID, afterSeq).
			Order("seq").Limit(int64(limit)).Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("read events of session %s: %w", sessionID, err)
		}
		return mapRows(rows, eventRow.event)
	}
	// On SQLite a statement prepared once on the readers (listQuery),
	// scanned by hand: every subscription with afterSeq and every events
	// page reads here, and bun's query building and SQLite's parsing of it
	// were most of a short page's cost. The unary + as in sessionSelect.
	rows, err := d.listQuery(ctx, "SELECT +type, +payload, seq, +at FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
		noNUL(sessionID), afterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("read events of session %s: %w", sessionID, err)
	}
	defer rows.Close()
	var out []core.Event
	for rows.Next() {
		r := eventRow{SessionID: sessionID}
		if err := rows.Scan(&r.Type, &r.Payload, &r.Seq, &r.At); err != nil {
			return nil, fmt.Errorf("read events of session %s: %w", sessionID, err)
		}
		ev, err := r.event()
		if err != nil {
			return nil, fmt.Errorf("read events of session %s: %w", sessionID, err)
		}
		out = append(out, ev)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("read events of session %s: %w", sessionID, err)
	}
	return out, nil
}
