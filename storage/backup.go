package storage

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/internal/atomicfile"
)

// Backup writes a consistent copy of the SQLite database to dst, an
// absolute path that must not exist, in a directory that does: the
// database as of one moment (VACUUM INTO, in one read transaction), while
// the kernel goes on appending. It is the live backup: the kernel holds
// foya.db exclusively (unix-excl, walvfs.go), so no other process can
// read it while the kernel runs.
//
// The copy is written to a temporary file beside dst (mode 0600: the
// database holds the sessions' content), synced, and only then linked to
// dst; a failure or a cancelled ctx removes the temporary file, so dst is
// either the whole copy or absent. dst is never overwritten, even when a
// file appears there during the copy.
//
// The copy runs on a reader connection, not the writer: appends go on
// beside it (WAL) and the backup never stalls them. A reader is
// query_only, which forbids writing any file, the VACUUM INTO target
// included, so the connection lifts it for the copy and is then closed,
// never returned to the pool writable. While the copy runs the WAL cannot
// be checkpointed past its start: it grows until a checkpoint after it.
//
// On PostgreSQL it returns UNAVAILABLE: pg_dump backs up a PostgreSQL
// database.
func (d *DB) Backup(ctx context.Context, dst string) error {
	if d.pg {
		return core.Errorf(core.CodeUnavailable, "backup: the database is PostgreSQL; back it up with pg_dump (docs/postgresql.md)")
	}
	dst, err := backupTarget(dst)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(dst), ".foya-backup-*.tmp") // 0600
	if err != nil {
		// The directory is the client's choice: one the kernel cannot
		// write to (permissions, a read-only file system) is for it to fix.
		return &core.Error{Code: core.CodeBadInput, Message: fmt.Sprintf("backup: the kernel cannot create a file in %s (%v); choose a directory it can write to", filepath.Dir(dst), unwrapPathError(err)), Err: err}
	}
	tmp := f.Name()
	f.Close()
	done := false
	defer func() {
		if !done {
			removeBackupTemp(tmp)
		}
	}()
	// VACUUM INTO writes into an empty file (the temporary one, created
	// private) and opens it through foya.db's VFS; tmp is absolute, so it
	// is never read as a URI.
	if err := d.vacuumInto(ctx, tmp); err != nil {
		return err
	}
	// VACUUM INTO writes with synchronous=OFF: the copy reaches the disk
	// here, before it gets its name.
	if err := syncFile(tmp); err != nil {
		return fmt.Errorf("backup: sync %s: %w", tmp, err)
	}
	if err := publishBackup(tmp, dst, d.log); err != nil {
		return err
	}
	done = true
	if err := atomicfile.SyncDir(filepath.Dir(dst)); err != nil {
		return fmt.Errorf("backup: sync directory of %s: %w", dst, err)
	}
	return nil
}

// backupTarget checks dst: absolute (the kernel's working directory means
// nothing to a client), in an existing directory, not there yet. It returns
// dst cleaned.
func backupTarget(dst string) (string, error) {
	if dst == "" || !filepath.IsAbs(dst) {
		return "", core.Errorf(core.CodeBadInput, "backup: %q is not an absolute path; give the full path of a new file on the kernel's machine", dst)
	}
	dst = filepath.Clean(dst)
	dir := filepath.Dir(dst)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", core.Errorf(core.CodeBadInput, "backup: directory %s does not exist; create it first", dir)
	case err != nil:
		return "", core.Errorf(core.CodeBadInput, "backup: directory %s: %v", dir, err)
	case !fi.IsDir():
		return "", core.Errorf(core.CodeBadInput, "backup: %s is not a directory", dir)
	}
	if _, err := os.Lstat(dst); err == nil {
		return "", core.Errorf(core.CodeConflict, "backup: %s already exists; a backup never overwrites a file: choose a new name", dst)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", core.Errorf(core.CodeBadInput, "backup: %s: %v", dst, err)
	}
	return dst, nil
}

// vacuumInto copies the database into the empty file tmp on a reader
// connection of its own, which it closes afterwards.
func (d *DB) vacuumInto(ctx context.Context, tmp string) error {
	conn, err := d.r.DB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("backup: reader connection: %w", err)
	}
	defer func() {
		// Closed, not returned to the pool: its query_only is lifted.
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		conn.Close()
	}()
	if _, err := conn.ExecContext(ctx, "PRAGMA query_only = 0"); err != nil {
		return fmt.Errorf("backup: lift query_only: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "VACUUM INTO ?", tmp); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("backup: %w", ctx.Err())
		}
		return fmt.Errorf("backup: vacuum into %s: %w", tmp, err)
	}
	return nil
}

// publishBackup gives the synced copy tmp the name dst, unless dst exists:
// a hard link fails when dst exists; a file system without hard links
// gets a rename after one more check.
func publishBackup(tmp, dst string, log *slog.Logger) error {
	err := os.Link(tmp, dst)
	if err == nil {
		// dst is the backup now: a temporary name left behind is only
		// worth a warning.
		if err := os.Remove(tmp); err != nil {
			log.Warn("backup: remove the temporary name", "path", tmp, "err", err)
		}
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		return core.Errorf(core.CodeConflict, "backup: %s appeared during the copy; a backup never overwrites a file: choose a new name", dst)
	}
	if _, serr := os.Lstat(dst); !errors.Is(serr, fs.ErrNotExist) {
		return core.Errorf(core.CodeConflict, "backup: %s appeared during the copy; a backup never overwrites a file: choose a new name", dst)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("backup: rename %s to %s: %w", tmp, dst, err)
	}
	return nil
}

// unwrapPathError is the cause of a *fs.PathError (its path is said
// otherwise), or err.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// removeBackupTemp removes the temporary copy and any journal SQLite left
// beside it (their names are tmp's, which is unique).
func removeBackupTemp(tmp string) {
	for _, p := range []string{tmp, tmp + "-journal", tmp + "-wal", tmp + "-shm"} {
		_ = os.Remove(p) // best effort: most do not exist
	}
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
