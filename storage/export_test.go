package storage

import (
	"context"
	"math"

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

// RowTotals reads session id's usage totals as Session returns them with
// the session and as the ledger sums them; same reports whether they agree
// (SameUsage).
func (d *DB) RowTotals(ctx context.Context, id string) (row *core.Usage, ledger core.Usage, same bool, err error) {
	if ledger, err = d.UsageTotals(ctx, id); err != nil {
		return nil, ledger, false, err
	}
	s, err := d.Session(ctx, id)
	if err != nil {
		return nil, ledger, false, err
	}
	return s.UsageTotals, ledger, s.UsageTotals != nil && SameUsage(*s.UsageTotals, ledger), nil
}

// SameUsage reports whether two usage totals are the same, the cost within
// a float rounding: a session's row adds one figure at a time, the
// ledger's SUM may add them in another order.
func SameUsage(a, b core.Usage) bool {
	if (a.Cost == nil) != (b.Cost == nil) || a.Cost != nil && math.Abs(*a.Cost-*b.Cost) > 1e-9 {
		return false
	}
	a.Cost, b.Cost = nil, nil
	return a == b
}

// SpendOnEverySession sets every session's usage totals as a turn of a few
// thousand tokens would (for the benchmarks of the list with usage: the
// totals of a new session are zeros, which the driver reads without
// allocating).
func (d *DB) SpendOnEverySession(ctx context.Context) error {
	_, err := d.w.ExecContext(ctx, "UPDATE sessions SET usage_input = 12345, usage_output = 678, usage_total = 13023, "+
		"usage_cached = 4096, usage_cache_writes = 512, usage_cost = 0.0123456789, usage_unpriced = 300")
	return err
}
