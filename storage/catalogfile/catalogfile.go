// Package catalogfile stores the model catalog in connections.json in the
// kernel's private data directory (PRV-14).
//
// The file holds API keys, so it is written with mode 0600 in a directory
// with mode 0700 (looser permissions found on an existing directory or file
// are tightened). Every save is atomic: the new content goes to a temp file
// in the same directory, which is fsynced, renamed over connections.json,
// and the directory is fsynced; a crash leaves either the old or the new
// file. Before each overwrite the current file, if it parses, is copied to
// connections.json.bak (same permissions, same atomic write); treat that
// backup as sensitive too. A file that does not parse is never overwritten:
// Load and Save report it with its path until the user fixes or removes it.
// Temp files left by a crash are removed at Load, since they may hold keys.
package catalogfile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/foya-dev/foya/core"
)

// File names inside the data directory.
const (
	FileName   = "connections.json"
	BackupName = FileName + ".bak"
)

const (
	fileMode      fs.FileMode = 0o600
	dirMode       fs.FileMode = 0o700
	formatVersion             = 1
	tempPattern               = ".tmp-*"
)

// Store implements core.CatalogStore on connections.json. It is safe for
// concurrent use within one process; one kernel owns a data directory.
type Store struct {
	dir string

	mu sync.Mutex
	// rename is os.Rename; tests replace it to simulate a crash before the
	// rename.
	rename func(oldpath, newpath string) error
}

var _ core.CatalogStore = (*Store)(nil)

// New returns a store for dir, creating the directory with mode 0700 (and
// tightening an existing one to 0700).
func New(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("catalog file store: data directory is required")
	}
	if err := ensurePrivateDir(dir); err != nil {
		return nil, err
	}
	return &Store{dir: dir, rename: os.Rename}, nil
}

// Path returns the path of connections.json.
func (s *Store) Path() string { return filepath.Join(s.dir, FileName) }

// BackupPath returns the path of connections.json.bak.
func (s *Store) BackupPath() string { return filepath.Join(s.dir, BackupName) }

// Load reads the catalog. A missing file is an empty catalog; a file that
// does not parse is an error naming the file (it matches core.ErrUnavailable)
// and the file is left untouched.
func (s *Store) Load(ctx context.Context) (core.CatalogData, error) {
	if err := ctx.Err(); err != nil {
		return core.CatalogData{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeStaleTemps()
	raw, err := os.ReadFile(s.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return core.CatalogData{}, nil
	}
	if err != nil {
		return core.CatalogData{}, fmt.Errorf("read %s: %w", s.Path(), err)
	}
	if err := tightenFile(s.Path()); err != nil {
		return core.CatalogData{}, err
	}
	f, err := s.parse(raw)
	if err != nil {
		return core.CatalogData{}, err
	}
	return f.toCore(), nil
}

// Save replaces the catalog atomically, keeping the previous good file as
// connections.json.bak. It refuses to overwrite a file that does not parse.
func (s *Store) Save(ctx context.Context, data core.CatalogData) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := ensurePrivateDir(s.dir); err != nil {
		return err
	}
	next, err := json.MarshalIndent(fromCore(data), "", "  ")
	if err != nil {
		return fmt.Errorf("marshal catalog: %w", err)
	}
	next = append(next, '\n')
	cur, err := os.ReadFile(s.Path())
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("read %s: %w", s.Path(), err)
	default:
		if _, err := s.parse(cur); err != nil {
			return fmt.Errorf("refusing to overwrite: %w", err)
		}
		if err := s.writeAtomic(BackupName, cur); err != nil {
			return fmt.Errorf("back up %s: %w", s.Path(), err)
		}
	}
	if err := s.writeAtomic(FileName, next); err != nil {
		return fmt.Errorf("write %s: %w", s.Path(), err)
	}
	return nil
}

func (s *Store) parse(raw []byte) (fileV1, error) {
	var f fileV1
	err := json.Unmarshal(raw, &f)
	if err == nil && f.Version > formatVersion {
		err = fmt.Errorf("format version %d is newer than this kernel understands (%d)", f.Version, formatVersion)
	}
	if err != nil {
		return fileV1{}, &core.Error{
			Code: core.CodeUnavailable,
			Message: fmt.Sprintf("catalog file %s is corrupt (%s); fix or remove it (the last good copy, if any, is %s)",
				s.Path(), err, s.BackupPath()),
			Err: err,
		}
	}
	return f, nil
}

// writeAtomic writes data to name in the store's directory through a temp
// file: write, fsync, rename, fsync the directory.
func (s *Store) writeAtomic(name string, data []byte) error {
	return writeFileAtomic(s.dir, name, data, s.rename)
}

// writeFileAtomic writes data to name in dir (mode 0600) through a temp
// file: write, fsync, rename, fsync the directory. A crash leaves either
// the old or the new file, plus at most a temp file matching
// name+tempPattern.
func writeFileAtomic(dir, name string, data []byte, rename func(oldpath, newpath string) error) (err error) {
	tmp, err := os.CreateTemp(dir, name+tempPattern)
	if err != nil {
		return fmt.Errorf("create temp file: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(fileMode); err != nil {
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
	return syncDir(dir)
}

// removeStaleTemps deletes temp files a crashed save left behind; they may
// hold API keys. Errors are ignored: a leftover temp file is harmless to
// correctness and is retried at the next Load.
func (s *Store) removeStaleTemps() {
	for _, name := range []string{FileName, BackupName} {
		matches, _ := filepath.Glob(filepath.Join(s.dir, name+tempPattern))
		for _, m := range matches {
			_ = os.Remove(m)
		}
	}
}

func ensurePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return fmt.Errorf("create data directory %s: %w", dir, err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("stat data directory %s: %w", dir, err)
	}
	if !info.IsDir() {
		return fmt.Errorf("data directory %s is not a directory", dir)
	}
	if info.Mode().Perm()&^dirMode != 0 {
		if err := os.Chmod(dir, dirMode); err != nil {
			return fmt.Errorf("restrict data directory %s to 0700: %w", dir, err)
		}
	}
	return nil
}

func tightenFile(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if info.Mode().Perm()&^fileMode != 0 {
		if err := os.Chmod(path, fileMode); err != nil {
			return fmt.Errorf("restrict %s to 0600: %w", path, err)
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory for sync: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !isSyncUnsupported(err) {
		return fmt.Errorf("sync directory: %w", err)
	}
	return nil
}

// isSyncUnsupported tolerates file systems that cannot fsync a directory.
func isSyncUnsupported(err error) bool {
	return errors.Is(err, errors.ErrUnsupported) || errors.Is(err, syscall.EINVAL)
}
