package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ReleaseMemory frees what SQLite holds that it can read again: each
// connection's page cache (PRAGMA shrink_memory), on the writer and on
// every idle reader. The kernel calls it when it has gone idle (no turn for a
// few seconds), with its other memory hand-backs.
//
// Each of the writer and the readers keeps a page cache of up to 2 MiB
// (SQLite's default), which fills as the database grows and stays full:
// BenchmarkLongRun's kernel grew by 5-6 MB of memory outside Go's heap over
// its first 4,000 sessions and then no more. The pages are copies of the
// file, which the operating system's page cache holds too: reading one
// again after an idle period is a pread, microseconds. A no-op on
// PostgreSQL.
func (d *DB) ReleaseMemory(ctx context.Context) error {
	if d.pg {
		return nil
	}
	// Take every idle reader at once, so that each is a different one; a
	// reader a request is using keeps its cache, and a request that comes
	// meanwhile waits at most the short timeout (an idle kernel has none).
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	take, cancelTake := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelTake()
	var errs []error
	idle := d.r.DB.Stats().Idle
	conns := make([]*sql.Conn, 0, idle)
	for range idle {
		c, err := d.r.DB.Conn(take)
		if err != nil {
			errs = append(errs, err)
			break
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		if _, err := c.ExecContext(ctx, "PRAGMA shrink_memory"); err != nil {
			errs = append(errs, err)
		}
		errs = append(errs, c.Close())
	}
	if _, err := d.wsql.ExecContext(ctx, "PRAGMA shrink_memory"); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("release SQLite's page caches: %w", err)
	}
	return nil
}
