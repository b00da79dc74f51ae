package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// IsPostgresURL reports whether s names a PostgreSQL database
// (postgres:// or postgresql://).
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// migrationLockKey is the advisory lock id that serialises migrations of
// kernels starting at the same time on one database ("foyamigr").
const migrationLockKey = 0x666f79616d696772

// OpenPostgres connects to the PostgreSQL database named by dsn (a
// postgres:// URL, as libpq and pgx read it) and runs the embedded
// migrations. Kernels sharing the database may start together: migrations
// run under an advisory lock.
func OpenPostgres(ctx context.Context, dsn string, log *slog.Logger) (*DB, error) {
	if log == nil {
		log = slog.Default()
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("database URL %s: %w", RedactURL(dsn), err)
	}
	// bun writes values into the query text, so every statement is new:
	// the simple protocol saves the prepare round trip and the statement
	// cache churn. An explicit default_query_exec_mode in the URL wins.
	if !strings.Contains(dsn, "default_query_exec_mode") {
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	}
	sqldb := stdlib.OpenDB(*cfg)
	sqldb.SetMaxOpenConns(16)
	sqldb.SetMaxIdleConns(16)
	db := bun.NewDB(sqldb, newPGDialect())
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to %s: %w", RedactURL(dsn), err)
	}
	if err := migratePostgres(ctx, db, log); err != nil {
		db.Close()
		return nil, err
	}
	return &DB{w: db, r: db, pg: true, log: log, stats: newPGStats(db, log)}, nil
}

func migratePostgres(ctx context.Context, db *bun.DB, log *slog.Logger) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("SELECT pg_advisory_lock(%d)", int64(migrationLockKey))); err != nil {
		return fmt.Errorf("lock migrations: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("SELECT pg_advisory_unlock(%d)", int64(migrationLockKey))) //nolint:errcheck // released with the session anyway
	if err := migrateUp(ctx, db, "postgres", log); err != nil {
		return err
	}
	analyzeNeverAnalyzed(ctx, conn, log)
	return nil
}

// analyzeNeverAnalyzed takes the statistics of the kernel's history tables
// that hold data but have none (never vacuumed nor analyzed, reltuples -1,
// as after a pg_restore), at start (under the migration lock: one kernel
// of several does it). Without them the planner takes a table for a few
// dozen rows and, for instance, sorts every session for each page of the
// session list (3.8-7.4 ms a page of 100 among 10,000 instead of
// 0.05-0.13 ms) until autovacuum analyzes it, about a minute later. A
// failure (a role that may not analyze) is logged: the kernel starts all
// the same.
func analyzeNeverAnalyzed(ctx context.Context, conn bun.Conn, log *slog.Logger) {
	if _, err := analyzeStale(ctx, conn, log, 0, "planner statistics taken (the table had none)"); err != nil {
		log.Warn("take the planner statistics of the tables without any", "err", err)
	}
}

// RedactURL hides the password of a database URL for messages and logs.
func RedactURL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable database URL)"
	}
	return u.Redacted()
}

// lockSession serialises appends to one session on PostgreSQL (SQLite has
// one writer): a transaction-scoped advisory lock on the session id's hash,
// so that reading the head and inserting the next seqs is atomic.
func lockSession(ctx context.Context, tx bun.Tx, sessionID string) error {
	if tx.Dialect().Name() != dialect.PG {
		return nil
	}
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", sessionID); err != nil {
		return fmt.Errorf("lock session %s: %w", sessionID, err)
	}
	return nil
}

// isUniqueViolation reports whether err is PostgreSQL's unique_violation or
// SQLite's UNIQUE constraint failure.
func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// containsExpr is a condition that column contains the ? argument as a
// substring, in the dialect of db.
func containsExpr(db bun.IDB, column string) string {
	if db.Dialect().Name() == dialect.PG {
		return "strpos(" + column + ", ?) > 0"
	}
	return "instr(" + column + ", ?) > 0"
}
