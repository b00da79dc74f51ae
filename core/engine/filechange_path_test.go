package engine

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The confirm-time half of a rewind: whatever the preview saw, restoreRoot
// writes only through real directories of the working directory, never
// into the data directory (inside the project at a "$HOME"), never through
// a symlink, and with the recorded mode.
func TestRestoreRootRefusesPlantedSymlinks(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".local", "share", "foya")
	outside := t.TempDir()
	for _, d := range []string{data, filepath.Join(home, "real")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Planted: a directory link out of the project, one into the data
	// directory (inside the project, so os.Root alone would follow it) and
	// a file link at the restored name.
	for link, target := range map[string]string{"out": outside, "in": ".local/share/foya", "real/f.txt": filepath.Join(outside, "f.txt")} {
		if err := os.Symlink(target, filepath.Join(home, link)); err != nil {
			t.Fatal(err)
		}
	}
	e := &Engine{cfg: Config{DataDir: data}}
	rr := e.cfg.openRestoreRoot(home)
	defer rr.Close()

	for rel, want := range map[string]string{
		"out/x.txt":                  "symlink",
		"in/mcp.json":                "symlink",
		".local/share/foya/mcp.json": "data directory",
		".git/hooks/pre-commit":      ".git",
		"../escape":                  "escapes",
	} {
		err := rr.write(rel, []byte("planted"), 0o644)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("write %s: %v, want %q", rel, err, want)
		}
		if _, err := rr.hash(rel); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("hash %s: %v, want %q", rel, err, want)
		}
		if err := rr.remove(rel); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("remove %s: %v, want %q", rel, err, want)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("a restore wrote outside the project: %d entries", len(ents))
	}
	if ents, _ := os.ReadDir(data); len(ents) != 0 {
		t.Fatalf("a restore wrote into the data directory: %d entries", len(ents))
	}
	if _, err := os.Stat(filepath.Join(home, ".git")); err == nil {
		t.Fatal("a restore created .git")
	}

	// The symlink at the file's own name is replaced, not followed.
	if err := rr.write("real/f.txt", []byte("restored\n"), 0o750); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(home, "real", "f.txt"))
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o750 {
		t.Fatalf("restored file %v %v, want a regular file with mode 0750", fi, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "f.txt")); err == nil {
		t.Fatal("the restore followed the symlink at the file's name")
	}
	// New directories and files: 0755 and 0644 when no mode is recorded;
	// an existing file keeps its mode when none is recorded.
	if err := rr.write("new/dir/g.txt", []byte("g"), 0); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(home, "new", "dir", "g.txt")); fi == nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("new file mode %v", fi)
	}
	if err := os.Chmod(filepath.Join(home, "new", "dir", "g.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := rr.write("new/dir/g.txt", []byte("g2"), restoreMode(0)); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(home, "new", "dir", "g.txt")); fi == nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("existing file mode %v, want 0600 kept", fi)
	}
	if h, err := rr.hash("new/dir/g.txt"); err != nil || h == "" {
		t.Fatalf("hash: %q %v", h, err)
	}
	if err := rr.remove("new/dir/g.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(home, "new", "dir", "g.txt")); !os.IsNotExist(err) {
		t.Fatal("not removed")
	}
	// No temporary file is left behind.
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if d != nil && strings.HasPrefix(d.Name(), ".foya-rewind-") {
			t.Errorf("left %s", p)
		}
		return nil
	})
}
