package artifacts_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/storage/artifacts"
)

func newStore(t *testing.T) (*artifacts.Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "artifacts")
	s, err := artifacts.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func TestPutAndRead(t *testing.T) {
	s, dir := newStore(t)
	ctx := context.Background()
	data := []byte("hello artifacts")

	hash, size, err := s.Put(ctx, bytes.NewReader(data), 1024)
	if err != nil {
		t.Fatal(err)
	}
	if hash != sum(data) || size != int64(len(data)) {
		t.Fatalf("Put = %s %d, want %s %d", hash, size, sum(data), len(data))
	}

	path := filepath.Join(dir, "sha256", hash[:2], hash[2:])
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("blob not at the content address: %v", err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("blob mode = %o, want 600", perm)
	}
	for _, d := range []string{dir, filepath.Join(dir, "sha256"), filepath.Dir(path)} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o700 {
			t.Errorf("%s mode = %o, want 700", d, perm)
		}
	}

	got, err := s.Read(hash)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Read = %q, %v", got, err)
	}
	rc, err := s.Open(hash)
	if err != nil {
		t.Fatal(err)
	}
	got, err = io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Open+ReadAll = %q, %v", got, err)
	}
	if !s.Has(hash) {
		t.Error("Has = false after Put")
	}
	assertNoTemp(t, dir)
}

func TestPutSameContentTwice(t *testing.T) {
	s, dir := newStore(t)
	ctx := context.Background()
	data := []byte("same bytes")
	hash, _, err := s.Put(ctx, bytes.NewReader(data), 0)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sha256", hash[:2], hash[2:])
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	hash2, size2, err := s.Put(ctx, bytes.NewReader(data), 0)
	if err != nil {
		t.Fatal(err)
	}
	if hash2 != hash || size2 != int64(len(data)) {
		t.Fatalf("second Put = %s %d", hash2, size2)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Error("second Put of the same bytes replaced the stored file")
	}
	assertNoTemp(t, dir)
}

func TestPutConcurrentSameContent(t *testing.T) {
	s, dir := newStore(t)
	data := bytes.Repeat([]byte("x"), 64<<10)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := s.Put(context.Background(), bytes.NewReader(data), 0); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := s.Read(sum(data))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Read after concurrent Puts: %v", err)
	}
	assertNoTemp(t, dir)
}

func TestPutRepairsDamagedBlob(t *testing.T) {
	s, dir := newStore(t)
	data := []byte("the real bytes")
	hash := sum(data)
	path := filepath.Join(dir, "sha256", hash[:2], hash[2:])
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("trunc"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Put(context.Background(), bytes.NewReader(data), 0); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Read(hash); !bytes.Equal(got, data) {
		t.Fatalf("damaged blob kept: %q", got)
	}
}

func TestPutLimit(t *testing.T) {
	tests := []struct {
		name    string
		size    int
		max     int64
		wantErr bool
	}{
		{"under", 99, 100, false},
		{"at", 100, 100, false},
		{"over", 101, 100, true},
		{"no limit", 1 << 20, 0, false},
		{"empty", 0, 10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, dir := newStore(t)
			data := bytes.Repeat([]byte("a"), tt.size)
			hash, size, err := s.Put(context.Background(), bytes.NewReader(data), tt.max)
			assertNoTemp(t, dir)
			if tt.wantErr {
				if core.ErrorCode(err) != core.CodeBadInput || !strings.Contains(err.Error(), "limit of 100 bytes") {
					t.Fatalf("err = %v, want BAD_INPUT naming the limit", err)
				}
				if s.Has(sum(data)) {
					t.Error("an oversized input was stored")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if hash != sum(data) || size != int64(tt.size) {
				t.Errorf("Put = %s %d", hash, size)
			}
		})
	}
}

type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n > 0 {
		r.n--
		return copy(p, "chunk"), nil
	}
	return 0, errors.New("connection reset")
}

func TestPutReaderErrorAndCancel(t *testing.T) {
	s, dir := newStore(t)
	if _, _, err := s.Put(context.Background(), &failingReader{n: 3}, 0); err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("err = %v, want the reader's error", err)
	}
	assertNoTemp(t, dir)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := s.Put(ctx, strings.NewReader("data"), 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	assertNoTemp(t, dir)
}

func TestMissingAndDelete(t *testing.T) {
	s, _ := newStore(t)
	missing := sum([]byte("never stored"))
	if _, err := s.Read(missing); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("Read missing: %v", err)
	}
	if _, err := s.Open(missing); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("Open missing: %v", err)
	}
	if err := s.Delete(missing); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("Delete missing: %v", err)
	}

	hash, _, err := s.Put(context.Background(), strings.NewReader("to delete"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(hash); err != nil {
		t.Fatal(err)
	}
	if s.Has(hash) {
		t.Error("Has = true after Delete")
	}
}

func TestHashValidation(t *testing.T) {
	s, dir := newStore(t)
	// A file the traversal attempts would reach if hashes became paths.
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "secret"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := []string{
		"",
		"abc",
		strings.Repeat("A", 64),
		strings.Repeat("a", 63),
		strings.Repeat("a", 65),
		strings.Repeat("g", 64),
		"../../secret" + strings.Repeat("a", 52),
		"aa/" + strings.Repeat("a", 61),
		"..",
	}
	for _, h := range bad {
		if artifacts.ValidHash(h) {
			t.Errorf("ValidHash(%q) = true", h)
		}
		if s.Has(h) {
			t.Errorf("Has(%q) = true", h)
		}
		if _, err := s.Read(h); core.ErrorCode(err) != core.CodeBadInput {
			t.Errorf("Read(%q): %v, want BAD_INPUT", h, err)
		}
		if _, err := s.Open(h); core.ErrorCode(err) != core.CodeBadInput {
			t.Errorf("Open(%q): %v, want BAD_INPUT", h, err)
		}
		if err := s.Delete(h); core.ErrorCode(err) != core.CodeBadInput {
			t.Errorf("Delete(%q): %v, want BAD_INPUT", h, err)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "secret")); err != nil {
		t.Fatalf("the file outside the store is gone: %v", err)
	}
}

func TestNewRejectsEmptyDir(t *testing.T) {
	if _, err := artifacts.New(""); err == nil {
		t.Fatal("New(\"\") succeeded")
	}
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("temp file left behind: %s", e.Name())
	}
}
