package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/foya-dev/foya/core"
)

var _ core.SessionImporter = (*DB)(nil)

// ImportSession implements core.SessionImporter: the attachment records,
// the events with their projections and the ledger rows (marked imported)
// of a new session, in one transaction.
func (d *DB) ImportSession(ctx context.Context, sessionID string, events []core.Event, attachments []core.Attachment) ([]core.Event, error) {
	if len(events) == 0 || events[0].Type != core.EventSessionCreated {
		return nil, core.Errorf(core.CodeBadInput, "an imported session starts with session_created")
	}
	var out []core.Event
	err := d.w.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if head, err := headSeq(ctx, tx, sessionID); err != nil {
			return err
		} else if head != 0 {
			return core.Errorf(core.CodeConflict, "session %s already exists", sessionID)
		}
		now := fmtTime(time.Now())
		for _, a := range attachments {
			row := attachmentRow{
				ID: a.ID, Name: a.Name, Kind: a.Kind, MediaType: a.MediaType,
				Size: a.Size, Width: a.Width, Height: a.Height, SHA256: a.SHA256, CreatedAt: now,
			}
			if _, err := tx.NewInsert().Model(&row).Exec(ctx); err != nil {
				return fmt.Errorf("insert attachment %s: %w", a.ID, err)
			}
		}
		var err error
		out, err = appendTx(ctx, newTxWriter(tx, d.stmts), sessionID, 0, events, true)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("import session %s: %w", sessionID, err)
	}
	d.ckpt.committed()
	d.stats.sessionsCreated(1)
	return out, nil
}
