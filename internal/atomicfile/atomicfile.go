// Package atomicfile writes the kernel's small private files (the catalog,
// the MCP and hooks documents, their backups) so that a crash leaves either
// the old file or the new one: write a temp file, fsync, rename, fsync the
// directory. It imports only the standard library.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Mode is the permission of every file written here: the owner's only.
const Mode fs.FileMode = 0o600

// TempPattern is the suffix of the temp files (name+TempPattern) a crash
// may leave behind; RemoveStale deletes them.
const TempPattern = ".tmp-*"

// Write writes data to dir/name (mode 0600) through a temp file. rename is
// os.Rename but for tests that inject a failing one; nil means os.Rename.
func Write(dir, name string, data []byte, rename func(oldpath, newpath string) error) (err error) {
	if rename == nil {
		rename = os.Rename
	}
	tmp, err := os.CreateTemp(dir, name+TempPattern)
	if err != nil {
		return fmt.Errorf("create temp file: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(Mode); err != nil {
		return fmt.Errorf("chmod temp file: %w", err)
	}
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("write temp file: %w", err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("sync temp file: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("close temp file: %w", err)
	}
	if err = rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("rename temp file: %w", err)
	}
	return SyncDir(dir)
}

// RemoveStale deletes the temp files of names that a crashed write left
// behind in dir; they may hold secrets. Errors are ignored: a leftover temp
// file is harmless to correctness and is retried next time.
func RemoveStale(dir string, names ...string) {
	for _, name := range names {
		matches, _ := filepath.Glob(filepath.Join(dir, name+TempPattern))
		for _, m := range matches {
			_ = os.Remove(m)
		}
	}
}

// SyncDir fsyncs a directory, tolerating file systems that cannot.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory for sync: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("sync directory: %w", err)
	}
	return nil
}
