package engine

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/archive"
)

// fileChangeRefusal checks a valid file change path against the directory
// dir it would be restored in, as the files are now: the path must not
// resolve outside dir (through a symlink) nor lie in the kernel's data
// directory or one of its secret paths. It returns "" when the path is
// acceptable.
func (c *Config) fileChangeRefusal(dir, rel string) string {
	root := realPath(filepath.Clean(dir))
	lex := filepath.Join(root, filepath.FromSlash(rel))
	real := realPath(lex)
	if !pathWithin(root, real) {
		return "resolves outside the project through a symlink"
	}
	for i, d := range append([]string{c.DataDir}, c.HiddenPaths...) {
		if d == "" {
			continue
		}
		for _, dd := range []string{filepath.Clean(d), realPath(filepath.Clean(d))} {
			if pathWithin(dd, root) {
				continue // the directory itself lies in d (a scratch directory)
			}
			if pathWithin(dd, lex) || pathWithin(dd, real) {
				if i == 0 {
					return "lies in the kernel's data directory"
				}
				return "is one of the kernel's secrets"
			}
		}
	}
	return ""
}

// checkImportFileChanges refuses, naming the line, a document whose file
// changes would lie in the kernel's data directory or a secret path, or
// resolve outside dir, the directory the imported session works in ("" for
// a session without a project: its new scratch directory is empty, so the
// lexical checks of the parser suffice).
func (ar *Archiver) checkImportFileChanges(dir string, a *archive.SessionArchive) error {
	if dir == "" {
		return nil
	}
	for _, fc := range a.FileChanges {
		if why := ar.cfg.fileChangeRefusal(dir, fc.Path); why != "" {
			return archive.ArchiveError(fc.Line, "fileChanges[%d].path %q %s", fc.Index, core.Clip(fc.Path, 80), why)
		}
	}
	return nil
}

// restoreRoot is a session's working directory opened for a rewind. Every
// file is reached through os.Root, one directory at a time, without
// following a symlink on the way and checking that each directory opened is
// the one looked at: a symlink planted between a preview and its confirm
// cannot redirect a restore, not even to a place inside the directory such
// as the kernel's data directory in a project at $HOME.
type restoreRoot struct {
	root *os.Root
	err  error // why the directory could not be opened
	// refused are the directories (and files) a rewind never enters or
	// writes: the kernel's data directory and secret paths.
	refused []fs.FileInfo
}

func (c *Config) openRestoreRoot(dir string) *restoreRoot {
	rr := &restoreRoot{}
	rr.root, rr.err = os.OpenRoot(dir)
	for _, d := range append([]string{c.DataDir}, c.HiddenPaths...) {
		if d == "" {
			continue
		}
		if fi, err := os.Stat(d); err == nil {
			rr.refused = append(rr.refused, fi)
		}
	}
	return rr
}

func (rr *restoreRoot) Close() {
	if rr.root != nil {
		rr.root.Close()
	}
}

var errNoParent = errors.New("a directory on the way does not exist")

func (rr *restoreRoot) isRefused(fi fs.FileInfo) bool {
	for _, r := range rr.refused {
		if os.SameFile(r, fi) {
			return true
		}
	}
	return false
}

// parent opens the directory of rel (creating missing directories with
// 0755 when create is set) and returns it with rel's last component; the
// caller closes it. errNoParent when a directory is missing and create is
// not set.
func (rr *restoreRoot) parent(rel string, create bool) (*os.Root, string, error) {
	if rr.root == nil {
		return nil, "", fmt.Errorf("cannot open the working directory: %w", rr.err)
	}
	if err := archive.ValidFileChangePath(rel); err != nil {
		return nil, "", fmt.Errorf("path %s: %s", rel, err)
	}
	parts := strings.Split(rel, "/")
	cur, err := rr.root.OpenRoot(".")
	if err != nil {
		return nil, "", err
	}
	for i, c := range parts[:len(parts)-1] {
		where := strings.Join(parts[:i+1], "/")
		fi, err := cur.Lstat(c)
		if errors.Is(err, fs.ErrNotExist) {
			if !create {
				cur.Close()
				return nil, "", errNoParent
			}
			if err := cur.Mkdir(c, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				cur.Close()
				return nil, "", fmt.Errorf("create %s: %w", where, err)
			}
			fi, err = cur.Lstat(c)
		}
		if err != nil {
			cur.Close()
			return nil, "", fmt.Errorf("%s: %w", where, err)
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			cur.Close()
			return nil, "", fmt.Errorf("%s is a symlink; a rewind does not follow symlinks", where)
		case !fi.IsDir():
			cur.Close()
			return nil, "", fmt.Errorf("%s is not a directory", where)
		}
		next, err := cur.OpenRoot(c)
		cur.Close()
		if err != nil {
			return nil, "", fmt.Errorf("open %s: %w", where, err)
		}
		got, err := next.Stat(".")
		switch {
		case err != nil:
			next.Close()
			return nil, "", fmt.Errorf("%s: %w", where, err)
		case !os.SameFile(fi, got):
			next.Close()
			return nil, "", fmt.Errorf("%s was replaced while the rewind opened it", where)
		case rr.isRefused(got):
			next.Close()
			return nil, "", fmt.Errorf("%s is the kernel's data directory or a secret path, which a rewind never writes", where)
		}
		cur = next
	}
	return cur, parts[len(parts)-1], nil
}

// hash is the SHA-256 of rel's content, "" when it does not exist.
func (rr *restoreRoot) hash(rel string) (string, error) {
	dir, name, err := rr.parent(rel, false)
	if errors.Is(err, errNoParent) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer dir.Close()
	fi, err := dir.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("cannot read: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", errors.New("is no longer a regular file")
	}
	if rr.isRefused(fi) {
		return "", errors.New("is one of the kernel's secrets")
	}
	f, err := dir.Open(name)
	if err != nil {
		return "", fmt.Errorf("cannot read: %w", err)
	}
	defer f.Close()
	if got, err := f.Stat(); err != nil || !os.SameFile(fi, got) {
		return "", errors.New("was replaced while the rewind read it")
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("cannot read: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// remove deletes rel (a file the rewound part created).
func (rr *restoreRoot) remove(rel string) error {
	dir, name, err := rr.parent(rel, false)
	if errors.Is(err, errNoParent) {
		return nil
	}
	if err != nil {
		return err
	}
	defer dir.Close()
	fi, err := dir.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory", rel)
	}
	if err := dir.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// write puts data at rel with permission bits mode (0: the mode of the
// file it replaces, or 0644 for a new file): a temporary file in the same
// directory, synced, then renamed over rel (a symlink at rel is replaced,
// never followed).
func (rr *restoreRoot) write(rel string, data []byte, mode fs.FileMode) error {
	dir, name, err := rr.parent(rel, true)
	if err != nil {
		return err
	}
	defer dir.Close()
	if fi, err := dir.Lstat(name); err == nil {
		switch {
		case fi.IsDir():
			return fmt.Errorf("%s is a directory", rel)
		case rr.isRefused(fi):
			return fmt.Errorf("%s is one of the kernel's secrets", rel)
		case mode == 0 && fi.Mode().IsRegular():
			mode = fi.Mode().Perm()
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if mode == 0 {
		mode = 0o644
	}
	tmpName := ".foya-rewind-" + rand.Text()
	tmp, err := dir.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			dir.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	// Chmod on the open file (not by name): neither the umask nor a
	// swapped name can change what gets the mode.
	if err := tmp.Chmod(mode.Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := dir.Rename(tmpName, name); err != nil {
		return err
	}
	done = true
	return nil
}

// restoreMode is the mode a rewind gives a restored file.
func restoreMode(recorded uint32) fs.FileMode { return fs.FileMode(recorded & 0o777) }
