// Package storage maps the kernel's event log and projections onto SQLite
// (the default, one file in the data directory) or PostgreSQL (shared by
// many kernels) with bun. It implements core.Store.
package storage

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"runtime"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

// Each dialect has its own migrations, with the same names (a test checks
// that they stay in step).
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFS embed.FS

// DB is the kernel's SQLite database: one writer connection (SQLite allows one
// writer at a time; serialising in the pool avoids busy retries) and a pool
// of readers that WAL lets run beside it.
//
// On PostgreSQL w and r are the same pool.
type DB struct {
	w   *bun.DB
	r   *bun.DB
	pg  bool
	log *slog.Logger
	// stmts are the append path's statements prepared on the SQLite
	// writer (nil on PostgreSQL); see appendStmts.
	stmts *appendStmts
	// wsql is the writer's pool (one connection) on SQLite, and raw the
	// statements of the fast append path on its driver connection; see
	// rawappend.go.
	wsql *sql.DB
	raw  rawAppender
	// list are the session list's statements prepared on the SQLite
	// readers (unused on PostgreSQL); see Sessions.
	list listStmts
	// ckpt runs the WAL checkpoints on SQLite (nil on PostgreSQL); see
	// checkpoint.go.
	ckpt *checkpointer
	// stats keeps PostgreSQL's planner statistics abreast of bulk loads
	// (nil on SQLite); see pgstats.go.
	stats *pgStats
}

func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "foreign_keys(1)")
	// Statement journals (a statement inside a transaction that may fail
	// half-way, such as an insert checked by a foreign key) in memory, in
	// small chunks: with the default they are 64 KiB buffers that the
	// SQLite driver's allocator maps and unmaps with the operating system
	// on every append (BenchmarkAppendTurnStart: 0.48 → 0.31 ms).
	q.Add("_pragma", "temp_store(MEMORY)")
	if registerWALVFS() == nil { // else SQLite's default VFS (no unix-excl: not a unix system)
		q.Set("vfs", walVFSName) // the kernel's alone, one write per commit: see walvfs.go
	}
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
		q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", writerAutoCheckpoint)) // see checkpoint.go
	}
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating if needed) the database file at path and runs the
// embedded migrations.
func Open(ctx context.Context, path string, log *slog.Logger) (*DB, error) {
	if log == nil {
		log = slog.Default()
	}
	// Create the file private before SQLite does (its -wal and -shm files
	// inherit the mode).
	pinAllocator() // see mempin.go
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	f.Close()
	wsql := openSQLite(dsn(path, false))
	wsql.SetMaxOpenConns(1)
	wsql.SetMaxIdleConns(1)
	wsql.SetConnMaxLifetime(0)
	w := bun.NewDB(wsql, newDialect())

	if err := migrateUp(ctx, w, "sqlite", log); err != nil {
		w.Close()
		return nil, err
	}

	rsql := openSQLite(dsn(path, true))
	n := max(4, runtime.NumCPU()*2)
	rsql.SetMaxOpenConns(n)
	rsql.SetMaxIdleConns(n)
	r := bun.NewDB(rsql, newDialect())
	stmts, err := prepareAppend(ctx, wsql)
	if err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	return &DB{w: w, r: r, log: log, stmts: stmts, wsql: wsql, ckpt: startCheckpointer(path, wsql, log)}, nil
}

func migrateUp(ctx context.Context, db *bun.DB, dialect string, log *slog.Logger) error {
	sub, err := fs.Sub(migrationFS, "migrations/"+dialect)
	if err != nil {
		return fmt.Errorf("migrations of %s: %w", dialect, err)
	}
	migrations := migrate.NewMigrations()
	if err := migrations.Discover(sub); err != nil {
		return fmt.Errorf("discover migrations: %w", err)
	}
	m := migrate.NewMigrator(db, migrations, migrate.WithMarkAppliedOnSuccess(true))
	if err := m.Init(ctx); err != nil {
		return fmt.Errorf("init migrations: %w", err)
	}
	if err := m.Lock(ctx); err != nil {
		return fmt.Errorf("lock migrations: %w", err)
	}
	defer m.Unlock(ctx) //nolint:errcheck // best effort; the lock row is ours
	if ms, err := m.MigrationsWithStatus(ctx); err == nil && len(ms.Applied()) > 0 {
		if todo := ms.Unapplied(); len(todo) > 0 {
			// An existing database: an upgrade may copy tables (about
			// 30 MB of events a second on a small machine).
			log.Info("upgrading the database layout; this runs once", "dialect", dialect, "migrations", len(todo), "last", todo[len(todo)-1].String())
		}
	}
	if _, err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("run migrations: %w", err)
	}
	return nil
}

// Pragma reads a PRAGMA value through the writer connection (for tests and
// diagnostics).
func (d *DB) Pragma(ctx context.Context, name string) (string, error) {
	if d.pg {
		return "", errors.New("pragma: the database is PostgreSQL, not SQLite")
	}
	var v string
	if err := d.w.NewRaw("PRAGMA "+name).Scan(ctx, &v); err != nil {
		return "", fmt.Errorf("pragma %s: %w", name, err)
	}
	return v, nil
}

// Close closes both pools.
func (d *DB) Close() error {
	if d.pg {
		d.stats.close()
		if err := d.w.Close(); err != nil {
			return fmt.Errorf("close database: %w", err)
		}
		return nil
	}
	rerr := errors.Join(d.ckpt.close(), d.list.close(), d.r.Close())
	rerr = errors.Join(rerr, d.closeRaw())
	if d.stmts != nil {
		rerr = errors.Join(rerr, d.stmts.close())
	}
	if err := d.w.Close(); err != nil {
		return fmt.Errorf("close writer: %w", err)
	}
	if rerr != nil {
		return fmt.Errorf("close readers: %w", rerr)
	}
	return nil
}

// closeRaw closes the fast append path's statements on the writer's
// connection (taken before the statements' mutex, in the order an append
// takes them).
func (d *DB) closeRaw() error {
	ctx := context.Background()
	conn, err := d.wsql.Conn(ctx)
	if err != nil {
		return fmt.Errorf("writer connection: %w", err)
	}
	defer conn.Close()
	d.raw.mu.Lock()
	defer d.raw.mu.Unlock()
	if d.raw.st == nil {
		return nil
	}
	return conn.Raw(func(dc any) error {
		st := d.raw.st
		d.raw.st = nil
		if st.conn != dc {
			return nil // went with the connection they were prepared on
		}
		return st.close()
	})
}
