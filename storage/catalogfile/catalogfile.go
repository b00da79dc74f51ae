// Package catalogfile stores the model catalog in connections.json in the
// kernel's private data directory (PRV-14).
//
// The file holds API keys, so it is written with mode 0600 in a directory
// with mode 0700 (looser permissions found on an existing directory or file
// are tightened). Every save is atomic: the new content goes to a temp file
// in the same directory, which is fsynced, renamed over connections.json,
// and the directory is fsynced; a crash leaves either the old or the new
// file. Before each overwrite the current file, if it parses, is copied to
// connections.json.bak (same permissions, same atomic write), with every API
// key that the new file no longer holds for the same connection removed: the
// backup never keeps a deleted or replaced key. It may still hold the current
// keys; treat it as sensitive too. A file that does not parse is never overwritten:
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

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/internal/atomicfile"
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
)

// Store implements core.CatalogStore on connections.json. It is safe for
// concurrent use within one process; one kernel owns a data directory.
type Store struct {
	fileStore
}

// fileStore is what the stores of this package share: their private data
// directory and the lock of their file.
type fileStore struct {
	dir string

	mu sync.Mutex
	// rename is os.Rename; tests replace it to simulate a crash before the
	// rename.
	rename func(oldpath, newpath string) error
}

// open checks and prepares dir for the store named what: it creates the
// directory with mode 0700 (and tightens an existing one).
func (f *fileStore) open(dir, what string) error {
	if dir == "" {
		return errors.New(what + ": data directory is required")
	}
	if err := ensurePrivateDir(dir); err != nil {
		return err
	}
	f.dir, f.rename = dir, os.Rename
	return nil
}

var _ core.CatalogStore = (*Store)(nil)

// New returns a store for dir, creating the directory with mode 0700 (and
// tightening an existing one to 0700).
func New(dir string) (*Store, error) {
	s := &Store{}
	if err := s.open(dir, "catalog file store"); err != nil {
		return nil, err
	}
	return s, nil
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
	atomicfile.RemoveStale(s.dir, FileName, BackupName)
	raw, found, err := readStoreFile(s.Path())
	if !found || err != nil {
		return core.CatalogData{}, err
	}
	f, err := s.parse(raw)
	if err != nil {
		return core.CatalogData{}, err
	}
	if err := s.scrubBackup(f); err != nil {
		return core.CatalogData{}, fmt.Errorf("scrub %s: %w", s.BackupPath(), err)
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
	return replaceFile(s.dir, FileName, BackupName, next, s.rename, func(cur []byte) ([]byte, error) {
		prev, err := s.parse(cur)
		if err != nil {
			return nil, fmt.Errorf("refusing to overwrite: %w", err)
		}
		bak, err := json.MarshalIndent(withoutStaleKeys(prev, fromCore(data)), "", "  ")
		if err != nil {
			return nil, fmt.Errorf("marshal backup: %w", err)
		}
		return append(bak, '\n'), nil
	})
}

// withoutStaleKeys returns prev with the API key removed from every
// connection whose key cur does not hold under the same id (deleted
// connections and replaced or cleared keys).
func withoutStaleKeys(prev, cur fileV1) fileV1 {
	keys := make(map[string]string, len(cur.Connections))
	for _, c := range cur.Connections {
		keys[c.ID] = c.APIKey
	}
	out := prev
	out.Connections = make([]connectionRow, len(prev.Connections))
	for i, c := range prev.Connections {
		if k, ok := keys[c.ID]; !ok || k != c.APIKey {
			c.APIKey = ""
		}
		out.Connections[i] = c
	}
	return out
}

// scrubBackup rewrites an existing connections.json.bak without the keys
// current no longer holds (a backup written by an older kernel may keep
// them). A backup that does not parse is removed: it can only hold stale
// secrets, never the last good copy of a file that parses.
func (s *Store) scrubBackup(current fileV1) error {
	raw, err := os.ReadFile(s.BackupPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", s.BackupPath(), err)
	}
	var bak fileV1
	if err := json.Unmarshal(raw, &bak); err != nil {
		return os.Remove(s.BackupPath())
	}
	clean := withoutStaleKeys(bak, current)
	for i := range bak.Connections {
		if bak.Connections[i].APIKey != clean.Connections[i].APIKey {
			out, err := json.MarshalIndent(clean, "", "  ")
			if err != nil {
				return fmt.Errorf("marshal backup: %w", err)
			}
			return s.writeAtomic(BackupName, append(out, '\n'))
		}
	}
	return nil
}

func (s *Store) parse(raw []byte) (fileV1, error) {
	return parseFile(raw, func(f *fileV1) int { return f.Version }, "catalog file", s.Path(), s.BackupPath())
}

// parseFile decodes a store file of type F. A file that does not decode,
// or whose format version (read by version) is newer than this kernel
// understands, is an unavailable error naming the file and its backup.
func parseFile[F any](raw []byte, version func(*F) int, what, path, backupPath string) (F, error) {
	var f F
	err := json.Unmarshal(raw, &f)
	if err == nil && version(&f) > formatVersion {
		err = fmt.Errorf("format version %d is newer than this kernel understands (%d)", version(&f), formatVersion)
	}
	if err != nil {
		var zero F
		return zero, &core.Error{
			Code: core.CodeUnavailable,
			Message: fmt.Sprintf("%s %s is corrupt (%s); fix or remove it (the last good copy, if any, is %s)",
				what, path, err, backupPath),
			Err: err,
		}
	}
	return f, nil
}

// readStoreFile reads a store file and tightens its mode to 0600. A
// missing file is found false and no error.
func readStoreFile(path string) (raw []byte, found bool, err error) {
	raw, err = os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	if err := tightenFile(path); err != nil {
		return nil, false, err
	}
	return raw, true, nil
}

// replaceFile writes next as name in dir atomically. An existing file is
// first handed to backup, whose result is written atomically as backupName
// (its error, e.g. for a file that does not parse, aborts the save and
// leaves both files untouched).
func replaceFile(dir, name, backupName string, next []byte, rename func(oldpath, newpath string) error, backup func(cur []byte) ([]byte, error)) error {
	path := filepath.Join(dir, name)
	cur, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("read %s: %w", path, err)
	default:
		bak, err := backup(cur)
		if err != nil {
			return err
		}
		if err := atomicfile.Write(dir, backupName, bak, rename); err != nil {
			return fmt.Errorf("back up %s: %w", path, err)
		}
	}
	if err := atomicfile.Write(dir, name, next, rename); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeAtomic writes data to name in the store's directory through a temp
// file: write, fsync, rename, fsync the directory.
func (s *Store) writeAtomic(name string, data []byte) error {
	return atomicfile.Write(s.dir, name, data, s.rename)
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
