package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkSnapshot measures bash's change detection on a 2000-file tree of
// 4 KiB files: a full snapshot (before the command) and a rescan that reuses
// unchanged entries (after it).
func BenchmarkSnapshot(b *testing.B) {
	root := b.TempDir()
	content := []byte(strings.Repeat("x", 4<<10))
	for i := 0; i < 2000; i++ {
		p := filepath.Join(root, fmt.Sprintf("d%02d", i%40), fmt.Sprintf("f%04d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	sc, err := newScope(root, "", "", nil)
	if err == nil {
		err = sc.open()
	}
	if err != nil {
		b.Fatal(err)
	}
	defer sc.close()
	snap := func(prev snapshot) snapshot {
		s, err := takeSnapshot(ctx, sc, prev, DefaultSnapshotMaxFiles, DefaultSnapshotMaxBytes, DefaultMaxFileBytes)
		if err != nil || len(s) != 2000 {
			b.Fatalf("snapshot: %d files, %v", len(s), err)
		}
		return s
	}
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			snap(nil)
		}
	})
	b.Run("rescan", func(b *testing.B) {
		prev := snap(nil)
		for b.Loop() {
			snap(prev)
		}
	})
}
