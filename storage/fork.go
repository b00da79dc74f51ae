package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/foya-dev/foya/core"
)

var _ core.HistoryForker = (*DB)(nil)

// ForkHistory implements core.HistoryForker. The messages are copied by
// the database itself, two INSERT … SELECT statements over the source's
// (session_id, seq) index: a message_imported payload is the message's
// JSON wrapped as {"message": …} (core.MessagePayload), and the projection
// row keeps the source row's message JSON and role, as appending the
// events would (messageRowOf). Nothing is decoded or re-encoded.
func (d *DB) ForkHistory(ctx context.Context, created core.Event, sourceID string, throughSeq int64) (int64, error) {
	if created.Type != core.EventSessionCreated {
		return 0, core.Errorf(core.CodeBadInput, "a fork starts with session_created, not %s", created.Type)
	}
	id := created.SessionID
	var head int64
	err := d.w.RunInTx(context.WithoutCancel(ctx), nil, func(ctx context.Context, tx bun.Tx) error {
		w := newTxWriter(tx, d.stmts)
		out, err := appendTx(ctx, w, id, 0, []core.Event{created}, false)
		if err != nil {
			return err
		}
		at := fmtTime(time.Now())
		// The projection rows first (the new seqs are numbered there),
		// then the events from them: the second statement reads the
		// fork's own rows, in seq order, and numbers nothing.
		res, err := tx.ExecContext(ctx, d.insertAll()+` messages (session_id, seq, role, payload, active)
			SELECT ?, ? + ROW_NUMBER() OVER (ORDER BY seq), role, payload, ?
			FROM messages WHERE session_id = ? AND active = ? AND seq <= ? ORDER BY seq`,
			id, out[0].Seq, true, sourceID, true, throughSeq)
		if err != nil {
			return fmt.Errorf("copy the messages of %s: %w", sourceID, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("copy the messages of %s: %w", sourceID, err)
		}
		if _, err := tx.ExecContext(ctx, d.insertAll()+` events (session_id, seq, type, payload, at)
			SELECT session_id, seq, ?, '{"message":' || payload || '}', ?
			FROM messages WHERE session_id = ? ORDER BY seq`,
			string(core.EventMessageImported), at, id); err != nil {
			return fmt.Errorf("copy the history of %s: %w", sourceID, err)
		}
		head = out[0].Seq + n
		if n == 0 {
			return nil
		}
		return w.touch(ctx, id, head, at, "")
	})
	if err != nil {
		return 0, fmt.Errorf("fork session %s: %w", sourceID, err)
	}
	d.ckpt.committed()
	d.stats.sessionsCreated(1)
	return head, nil
}

// insertAll starts an INSERT … SELECT of many rows. On SQLite it is INSERT
// OR ROLLBACK (see insertRows): the rows are new, a conflict would be a
// bug, and without a statement journal SQLite does not copy every page the
// statement changes before changing it.
func (d *DB) insertAll() string {
	if d.pg {
		return "INSERT INTO"
	}
	return "INSERT OR ROLLBACK INTO"
}
