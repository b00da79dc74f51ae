package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/foya-dev/foya/core"
)

// MessagePage implements core.MessagePager. It walks the (session_id, seq)
// index of the messages projection (the primary key on PostgreSQL, the
// unique index messages_session_seq on SQLite) from the requested end, so
// the last 50 messages of a 100,000-event session read about 50 rows.
func (d *DB) MessagePage(ctx context.Context, sessionID string, q core.MessageQuery) ([]core.Message, error) {
	var rows []messageRow
	sel := d.r.NewSelect().Model(&rows).Where("session_id = ?", sessionID)
	if !q.IncludeInactive {
		sel = sel.Where("active = ?", true)
	}
	if q.AfterSeq > 0 {
		sel = sel.Where("seq > ?", q.AfterSeq)
	}
	if q.BeforeSeq > 0 {
		sel = sel.Where("seq < ?", q.BeforeSeq)
	}
	if q.Last {
		sel = sel.OrderExpr("seq DESC")
	} else {
		sel = sel.OrderExpr("seq ASC")
	}
	if q.Limit > 0 {
		sel = sel.Limit(int64(q.Limit))
	}
	if err := sel.Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("read messages of session %s: %w", sessionID, err)
	}
	if q.Last {
		slices.Reverse(rows)
	}
	return mapRows(rows, messageRow.message)
}
