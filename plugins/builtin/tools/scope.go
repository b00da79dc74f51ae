package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// scope is the one directory a call may touch (SES-3). Every path argument is
// resolved against it with symlinks evaluated, so neither "..", an absolute
// path elsewhere nor a symlink in any component can leave it.
type scope struct {
	dir  string // as the kernel gave it, cleaned
	real string // dir with symlinks resolved
	// hidden are real paths no tool may touch inside the scope: the
	// kernel's data directory when the scope contains it.
	hidden []string
	// root is the scope directory opened for the call (rootfs.go): every
	// file is opened through it.
	root *os.Root
}

// newScope checks dir. dataDir (may be empty) is the kernel's data
// directory, invisible to tools; a scope inside it is allowed only under
// scratchDir, the sessions' scratch directories.
func newScope(dir, dataDir, scratchDir string, hidden []string) (*scope, error) {
	if dir == "" {
		return nil, errors.New("no scope directory: this session has neither a project directory nor a scratch directory")
	}
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("scope directory %q is not an absolute path", dir)
	}
	dir = filepath.Clean(dir)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("scope directory %s: %w", dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("scope directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("scope directory %s is not a directory", dir)
	}
	sc := &scope{dir: dir, real: real}
	for _, h := range hidden {
		h = realOrClean(h)
		if within(h, real) {
			return nil, fmt.Errorf("scope directory %s is inside %s, which tools cannot access", dir, h)
		}
		sc.hidden = append(sc.hidden, h)
	}
	if dataDir == "" {
		return sc, nil
	}
	data := realOrClean(dataDir)
	if within(data, real) {
		if scratchDir == "" || !within(realOrClean(scratchDir), real) || real == realOrClean(scratchDir) {
			return nil, fmt.Errorf("scope directory %s is inside the kernel's data directory, which tools cannot access", dir)
		}
		return sc, nil // a session's own scratch directory
	}
	sc.hidden = append(sc.hidden, data)
	return sc, nil
}

// realOrClean is p with symlinks resolved, or just cleaned when that fails.
func realOrClean(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// within reports whether p is dir or lies beneath it (both clean, absolute).
func within(dir, p string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// hiddenAt returns the hidden directory real lies in, if any.
func (s *scope) hiddenAt(real string) (string, bool) {
	for _, h := range s.hidden {
		if within(h, real) {
			return h, true
		}
	}
	return "", false
}

// resolve returns the real absolute path p names and its slash-separated
// path relative to the scope ("." for the scope itself). The file need not
// exist; its existing prefix is resolved with filepath.EvalSymlinks and a
// dangling symlink on the way is refused, since writing through it would
// create its target wherever it points.
func (s *scope) resolve(p string) (abs, rel string, err error) {
	if strings.TrimSpace(p) == "" {
		return "", "", errors.New("path is empty")
	}
	lex := p
	if !filepath.IsAbs(lex) {
		lex = filepath.Join(s.real, lex)
	}
	lex = filepath.Clean(lex)
	real, err := evalExisting(lex)
	if err != nil {
		return "", "", fmt.Errorf("path %s: %w", p, err)
	}
	rel, ok := s.rel(real)
	if !ok {
		if real != lex {
			return "", "", fmt.Errorf("path %s resolves to %s, outside the scope %s", p, real, s.dir)
		}
		return "", "", fmt.Errorf("path %s is outside the scope %s", p, s.dir)
	}
	if h, ok := s.hiddenAt(real); ok {
		return "", "", fmt.Errorf("path %s is inside the kernel's data directory or secrets (%s), which tools cannot access", p, h)
	}
	return real, rel, nil
}

// rel returns real relative to the scope, and whether it lies inside.
func (s *scope) rel(real string) (string, bool) {
	r, err := filepath.Rel(s.real, real)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// evalExisting resolves the symlinks of the longest existing prefix of the
// clean absolute path p and appends the missing rest.
func evalExisting(p string) (string, error) {
	var rest []string // missing components, last first
	cur := p
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			if len(rest) == 0 {
				return real, nil
			}
			first := filepath.Join(real, rest[len(rest)-1])
			if _, err := os.Lstat(first); err == nil {
				return "", fmt.Errorf("%s is a dangling symlink", first)
			}
			parts := []string{real}
			for i := len(rest) - 1; i >= 0; i-- {
				parts = append(parts, rest[i])
			}
			return filepath.Join(parts...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", err
		}
		rest = append(rest, filepath.Base(cur))
		cur = parent
	}
}
