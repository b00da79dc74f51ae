package storage

import "context"

// Analyze updates the planner's statistics. PostgreSQL's autovacuum does
// it about a minute after a bulk load; a benchmark that loads and reads at
// once runs it itself, or it measures plans made for an empty table.
func (d *DB) Analyze(ctx context.Context) error {
	_, err := d.w.ExecContext(ctx, "ANALYZE")
	return err
}
