package storage

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/foya-dev/foya/core"
)

// Analyze updates the planner's statistics. PostgreSQL's autovacuum does
// it about a minute after a bulk load; a benchmark that loads and reads at
// once runs it itself, or it measures plans made for an empty table.
func (d *DB) Analyze(ctx context.Context) error {
	_, err := d.w.ExecContext(ctx, "ANALYZE")
	return err
}

// AppendEach appends each batch, the first events of a new session, in
// one transaction through Append's projections: a test's fill of
// thousands of sessions without a commit (and, under -race, a slow WAL
// write) for each.
func (d *DB) AppendEach(ctx context.Context, batches [][]core.Event) error {
	err := d.w.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		w := newTxWriter(tx, d.stmts)
		for _, evs := range batches {
			if _, err := appendTx(ctx, w, evs[0].SessionID, 0, evs, false); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		d.ckpt.committed()
	}
	return err
}
