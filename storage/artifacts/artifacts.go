// Package artifacts is the kernel's content-addressed blob store (MSG-3):
// attachment bytes and file snapshots live here, addressed by their SHA-256,
// never inside message JSON.
//
// Layout under the store directory:
//
//	sha256/ab/cdef…   one file per blob; "ab" is the first two hex digits
//	                  of the hash, the file name the other 62
//	tmp/              temp files of writes in progress
//
// Files are 0600 and directories 0700. A blob is written to tmp/, synced and
// renamed into place, so a reader never sees a partial blob; writing bytes
// that are already stored leaves the stored file alone. Temp files left by a
// crash are not collected yet.
package artifacts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/foya-dev/foya/core"
)

// Store is a content-addressed blob store in one directory. It is safe for
// concurrent use, also by several processes sharing the directory.
type Store struct {
	dir string
}

// New opens the store in dir, creating it (0700) if needed.
func New(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("artifact store: empty directory")
	}
	for _, d := range []string{dir, filepath.Join(dir, "sha256"), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("create artifact directory: %w", err)
		}
	}
	return &Store{dir: dir}, nil
}

// ValidHash reports whether h is a SHA-256 in the store's form: 64 lowercase
// hex digits.
func ValidHash(h string) bool {
	if len(h) != sha256.Size*2 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func checkHash(h string) error {
	if !ValidHash(h) {
		return core.Errorf(core.CodeBadInput, "artifact hash %q is not a SHA-256 (64 lowercase hex digits)", h)
	}
	return nil
}

// path is the blob file of a valid hash. Only checked hashes reach it, so a
// hash can never name a path outside the store.
func (s *Store) path(hash string) string {
	return filepath.Join(s.dir, "sha256", hash[:2], hash[2:])
}

func notFound(hash string) error {
	return core.Errorf(core.CodeNotFound, "artifact %s not found", hash)
}

// Put streams r into the store and returns the SHA-256 (lowercase hex) and
// size of its bytes. maxSize > 0 limits the size: a larger input fails with
// a BAD_INPUT error naming the limit and leaves nothing behind; maxSize <= 0
// means no limit. Cancelling ctx stops the copy.
func (s *Store) Put(ctx context.Context, r io.Reader, maxSize int64) (hash string, size int64, err error) {
	tmp, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "put-*")
	if err != nil {
		return "", 0, fmt.Errorf("create artifact temp file: %w", err)
	}
	tmpName := tmp.Name()
	closed := false
	defer func() {
		if err == nil {
			return
		}
		if !closed {
			tmp.Close()
		}
		if rmErr := os.Remove(tmpName); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("remove artifact temp file: %w", rmErr))
		}
	}()

	src := r
	if maxSize > 0 {
		src = io.LimitReader(r, maxSize+1)
	}
	h := sha256.New()
	size, err = io.Copy(io.MultiWriter(tmp, h), ctxReader{ctx: ctx, r: src})
	if err != nil {
		return "", 0, fmt.Errorf("write artifact: %w", err)
	}
	if maxSize > 0 && size > maxSize {
		return "", 0, core.Errorf(core.CodeBadInput, "file is larger than the limit of %d bytes", maxSize)
	}
	if err := tmp.Sync(); err != nil {
		return "", 0, fmt.Errorf("sync artifact temp file: %w", err)
	}
	closed = true
	if err := tmp.Close(); err != nil {
		return "", 0, fmt.Errorf("close artifact temp file: %w", err)
	}
	hash = hex.EncodeToString(h.Sum(nil))
	final := s.path(hash)

	// Same bytes already stored: keep that file. A file of another size can
	// only be damage; the new bytes replace it.
	if fi, statErr := os.Stat(final); statErr == nil && fi.Mode().IsRegular() && fi.Size() == size {
		if err := os.Remove(tmpName); err != nil {
			return "", 0, fmt.Errorf("remove artifact temp file: %w", err)
		}
		return hash, size, nil
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o700); err != nil {
		return "", 0, fmt.Errorf("create artifact directory: %w", err)
	}
	if err := os.Rename(tmpName, final); err != nil {
		return "", 0, fmt.Errorf("store artifact %s: %w", hash, err)
	}
	if err := syncDir(filepath.Dir(final)); err != nil {
		return "", 0, fmt.Errorf("store artifact %s: %w", hash, err)
	}
	return hash, size, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory: %w", err)
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return fmt.Errorf("sync directory: %w", err)
	}
	if err := d.Close(); err != nil {
		return fmt.Errorf("close directory: %w", err)
	}
	return nil
}

// ctxReader stops a copy once its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Open returns a reader of the blob with the given hash; NOT_FOUND when it
// is not stored, BAD_INPUT for a malformed hash.
func (s *Store) Open(hash string) (io.ReadCloser, error) {
	if err := checkHash(hash); err != nil {
		return nil, err
	}
	f, err := os.Open(s.path(hash))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notFound(hash)
	}
	if err != nil {
		return nil, fmt.Errorf("open artifact %s: %w", hash, err)
	}
	return f, nil
}

// Read returns the bytes of the blob with the given hash; errors as Open.
func (s *Store) Read(hash string) ([]byte, error) {
	if err := checkHash(hash); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(s.path(hash))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notFound(hash)
	}
	if err != nil {
		return nil, fmt.Errorf("read artifact %s: %w", hash, err)
	}
	return data, nil
}

// Has reports whether a blob with the given hash is stored; false for a
// malformed hash.
func (s *Store) Has(hash string) bool {
	if !ValidHash(hash) {
		return false
	}
	fi, err := os.Stat(s.path(hash))
	return err == nil && fi.Mode().IsRegular()
}

// Delete removes the blob with the given hash; NOT_FOUND when it is not
// stored. Callers decide whether anything still references it.
func (s *Store) Delete(hash string) error {
	if err := checkHash(hash); err != nil {
		return err
	}
	err := os.Remove(s.path(hash))
	if errors.Is(err, fs.ErrNotExist) {
		return notFound(hash)
	}
	if err != nil {
		return fmt.Errorf("delete artifact %s: %w", hash, err)
	}
	return nil
}
