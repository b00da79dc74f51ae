package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/foya-dev/foya/internal/cmdutil"
	"github.com/foya-dev/foya/storage"
)

// openStopped opens the database of a data directory whose kernel is
// stopped, holding its lock (a running kernel makes it fail) until the
// returned close: what the offline commands work on.
func openStopped(ctx context.Context, dir, database string, log *slog.Logger) (*storage.DB, func(), error) {
	release, err := lockDataDir(dir)
	if err != nil {
		return nil, nil, err
	}
	db, err := openDatabase(ctx, database, dir, log)
	if err != nil {
		release()
		return nil, nil, err
	}
	return db, func() { db.Close(); release() }, nil
}

// RebuildProjections is `foya rebuild-projections`: it rebuilds the session
// projections from the event log, with the kernel stopped.
func RebuildProjections(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cmdutil.NewFlagSet(cmdutil.Command{Name: "rebuild-projections", Synopsis: "[--data-dir DIR]",
		Doc: "Rebuilds the session projections from the event log (with the kernel stopped)."}, stdout)
	dataDir := fs.String("data-dir", cmdutil.DefaultDataDir(), "data directory")
	database := fs.String("database", os.Getenv("FOYA_DATABASE"), "PostgreSQL URL (default $FOYA_DATABASE; empty: SQLite in the data directory)")
	rest, err := cmdutil.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return cmdutil.UsageError{Err: errors.New("rebuild-projections takes no arguments")}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	dir, err := cmdutil.PrepareDataDir(*dataDir)
	if err != nil {
		return err
	}
	db, closeDB, err := openStopped(ctx, dir, *database, log)
	if err != nil {
		return err
	}
	defer closeDB()
	n, err := db.RebuildProjections(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "rebuilt projections from %d events\n", n)
	return nil
}
