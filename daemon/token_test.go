package daemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/internal/cmdutil"
)

func TestTokenShowAndRotate(t *testing.T) {
	dir := t.TempDir()
	show := func() (tok, file string) {
		t.Helper()
		var out bytes.Buffer
		if err := Token([]string{"show", "--json", "--data-dir", dir}, &out, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		var v struct{ Token, File string }
		if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Token == "" {
			t.Fatalf("show --json: %q %v", out.String(), err)
		}
		return v.Token, v.File
	}
	tok, file := show()
	if file != filepath.Join(dir, "auth-token") {
		t.Errorf("file %s", file)
	}
	if raw, err := os.ReadFile(file); err != nil || strings.TrimSpace(string(raw)) != tok {
		t.Fatalf("token file %q %v, shown %q", raw, err, tok)
	}
	if again, _ := show(); again != tok {
		t.Errorf("show changed the token")
	}
	var stderr bytes.Buffer
	if err := Token([]string{"rotate", "--data-dir", dir}, &bytes.Buffer{}, &stderr); err != nil || !strings.Contains(stderr.String(), "wrote a new token") {
		t.Fatalf("rotate: %v %s", err, stderr.String())
	}
	if rotated, _ := show(); rotated == tok {
		t.Errorf("rotate kept the token")
	}
	for _, args := range [][]string{{}, {"frob"}, {"show", "extra"}} {
		var ue cmdutil.UsageError
		if err := Token(append(args, "--data-dir", dir), &bytes.Buffer{}, &bytes.Buffer{}); !errors.As(err, &ue) {
			t.Errorf("token %q: %v, want a usage error", args, err)
		}
	}
}

func TestRebuildProjections(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := RebuildProjections(t.Context(), []string{"--data-dir", dir}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "rebuilt projections from 0 events") {
		t.Errorf("output %q", out.String())
	}
	var ue cmdutil.UsageError
	if err := RebuildProjections(t.Context(), []string{"--data-dir", dir, "extra"}, &out, &bytes.Buffer{}); !errors.As(err, &ue) {
		t.Errorf("an argument: %v, want a usage error", err)
	}
}
