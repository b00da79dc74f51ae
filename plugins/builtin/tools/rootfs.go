package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Every file the path tools touch is opened through the scope's os.Root
// (openat2-style resolution: "..", absolute symlinks and symlinks leading
// out of the scope are refused by each call itself, not by an earlier
// check), and every directory and file opened is checked by its open
// descriptor, not its name, against the hidden directories: a component
// swapped for a symlink between resolve and use can reach neither a path
// outside the scope nor the data directory when the project contains it.
// New files are created by name in a directory descriptor that was checked
// first, so nothing is planted through a swapped directory either.

// open opens the scope directory as an os.Root; the caller closes it.
func (s *scope) open() error {
	r, err := os.OpenRoot(s.real)
	if err != nil {
		return fmt.Errorf("scope directory %s: %w", s.dir, err)
	}
	d, err := r.Open(".")
	if err == nil {
		err = s.checkOpened(d, true)
		d.Close()
	}
	if err != nil {
		r.Close()
		return fmt.Errorf("scope directory %s: %w", s.dir, err)
	}
	s.root = r
	return nil
}

func (s *scope) close() {
	if s.root != nil {
		_ = s.root.Close()
	}
}

// errHidden is a file that turned out to lie in a hidden directory.
var errHidden = errors.New("inside the kernel's data directory or secrets, which tools cannot access")

// checkOpened checks where the open file f really is: inside the scope
// (self allows the scope directory itself) and in no hidden directory.
// Where /proc is unavailable it relies on os.Root alone.
func (s *scope) checkOpened(f *os.File, self bool) error {
	where, ok := fdPath(f)
	if !ok {
		return nil
	}
	if _, hidden := s.hiddenAt(where); hidden {
		return errHidden
	}
	if !within(s.real, where) || (!self && where == s.real) {
		return fmt.Errorf("%s is outside the scope %s", where, s.dir)
	}
	return nil
}

// openRead opens rel (slash path relative to the scope) for reading,
// without blocking on a FIFO, and checks it.
func (s *scope) openRead(rel string) (*os.File, error) {
	f, err := s.root.OpenFile(filepath.FromSlash(rel), os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	if err := s.checkOpened(f, rel == "."); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// openDir opens the directory rel as a root of its own after checking it;
// with create, missing directories on the way are made one by one, each
// inside a directory already checked.
func (s *scope) openDir(rel string, create bool) (*os.Root, error) {
	cur, err := s.root.OpenRoot(".")
	if err != nil {
		return nil, err
	}
	if rel == "." || rel == "" {
		return cur, nil
	}
	for _, name := range strings.Split(rel, "/") {
		next, err := cur.OpenRoot(name)
		if errors.Is(err, fs.ErrNotExist) && create {
			if err = cur.Mkdir(name, 0o755); err == nil || errors.Is(err, fs.ErrExist) {
				next, err = cur.OpenRoot(name)
			}
		}
		cur.Close()
		if err != nil {
			return nil, err
		}
		d, err := next.Open(".")
		if err == nil {
			err = s.checkOpened(d, false)
			d.Close()
		}
		if err != nil {
			next.Close()
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

// writeAt replaces the contents of the regular file rel with data,
// creating it (mode 0644) and its missing parent directories, and keeping
// an existing file's mode.
func (s *scope) writeAt(rel string, data []byte) error {
	dir, base := path.Split(rel)
	d, err := s.openDir(strings.TrimSuffix(dir, "/"), true)
	if err != nil {
		return fmt.Errorf("create parent directories: %w", err)
	}
	defer d.Close()
	f, err := d.OpenFile(base, os.O_WRONLY|os.O_CREATE|nonBlock, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := s.checkOpened(f, false); err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Close()
}

// readStateAt is the state of the regular file rel: its bytes up to
// maxBytes (larger files are hashed as a stream), or a state that does
// not exist.
func (s *scope) readStateAt(rel string, maxBytes int64) (fileState, error) {
	f, err := s.openRead(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return fileState{}, nil
	}
	if err != nil {
		return fileState{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fileState{}, err
	}
	if fi.IsDir() {
		return fileState{}, fmt.Errorf("%s is a directory", rel)
	}
	if !fi.Mode().IsRegular() {
		return fileState{}, fmt.Errorf("%s is not a regular file", rel)
	}
	st, err := stateFrom(f, maxBytes)
	st.mode = uint32(fi.Mode().Perm())
	return st, err
}

// stateFrom reads f whole: its bytes when at most maxBytes, else only its
// hash and size.
func stateFrom(f io.Reader, maxBytes int64) (fileState, error) {
	data, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return fileState{}, err
	}
	if int64(len(data)) <= maxBytes {
		return stateOf(data), nil
	}
	h := sha256.New()
	h.Write(data)
	n, err := io.Copy(h, f)
	if err != nil {
		return fileState{}, err
	}
	return fileState{exists: true, hash: hex.EncodeToString(h.Sum(nil)), size: int64(len(data)) + n}, nil
}

// walkEntry is one regular file found by walk.
type walkEntry struct {
	rel  string // slash path relative to the scope
	info fs.FileInfo
}

// walk calls fn for each regular file under the directory baseRel of the
// scope (skipping skipDirs, the hidden directories and symlinks), in
// lexical order, reading every directory through a checked descriptor. It
// stops after limit entries (0: no limit) and says so.
func (s *scope) walk(ctx context.Context, baseRel string, limit int, fn func(e walkEntry) error) (stopped bool, err error) {
	n := 0
	errStop := errors.New("stop")
	var visit func(rel string, top bool) error
	visit = func(rel string, top bool) error {
		d, err := s.openRead(rel)
		if err != nil {
			if top {
				return err
			}
			return nil // unreadable or swapped: not listed
		}
		entries, err := d.ReadDir(-1)
		d.Close()
		if err != nil && top {
			return err
		}
		slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		for _, e := range entries {
			if n++; limit > 0 && n > limit {
				stopped = true
				return errStop
			}
			if n%256 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			child := e.Name()
			if rel != "." {
				child = rel + "/" + e.Name()
			}
			switch {
			case e.IsDir():
				if skipDirs[e.Name()] {
					continue
				}
				if _, hidden := s.hiddenAt(filepath.Join(s.real, filepath.FromSlash(child))); hidden {
					continue
				}
				if err := visit(child, false); err != nil {
					return err
				}
			case e.Type().IsRegular():
				fi, err := s.root.Lstat(filepath.FromSlash(child))
				if err != nil || !fi.Mode().IsRegular() {
					continue
				}
				if err := fn(walkEntry{rel: child, info: fi}); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err = visit(baseRel, true)
	if errors.Is(err, errStop) || errors.Is(err, fs.SkipAll) {
		err = nil
	}
	return stopped, err
}
