package access

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// The token file: 0600, 43 characters, the same for racing creators;
// rotation replaces it; short or binary tokens are refused.
func TestTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d", TokenFileName)
	var wg sync.WaitGroup
	toks := make([]string, 8)
	for i := range toks {
		wg.Go(func() {
			tok, _, err := LoadOrCreateToken(path)
			if err != nil {
				t.Error(err)
			}
			toks[i] = tok
		})
	}
	wg.Wait()
	for _, tok := range toks {
		if tok != toks[0] || len(tok) != 43 {
			t.Fatalf("racing creators: %q", toks)
		}
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
	newTok, err := RotateToken(path)
	if err != nil || newTok == toks[0] {
		t.Fatalf("rotate: %v", err)
	}
	if got, _ := ReadToken(path); got != newTok {
		t.Fatal("rotation not stored")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
	os.WriteFile(path, []byte("short\n"), 0o600)
	if _, err := ReadToken(path); err == nil {
		t.Fatal("short token accepted")
	}
}
