package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/foya-dev/foya/plugins/sdk"
)

// A racer keeps swapping a file and a directory of the project for
// symlinks into the data directory (inside the project, as with a project
// at $HOME) and into a directory outside it, while read, write, edit, grep
// and glob run 1,000 times: nothing of either leaks and nothing is planted
// or changed there.
func TestPathRaceSymlinkSwap(t *testing.T) {
	const secret = "SECRET-7f3a"
	base := realTemp(t)
	proj := filepath.Join(base, "home")
	data := filepath.Join(proj, ".local", "share", "foya")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{data, outside, filepath.Join(proj, "d"), filepath.Join(proj, "e")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{data, outside} {
		files(t, d, map[string]string{"connections.json": secret + " key\n", "x.txt": secret + " x\n"})
	}
	files(t, proj, map[string]string{"f.txt": "harmless f\n", "g.txt": "harmless g\n", "d/x.txt": "harmless x\n", "e/x.txt": "harmless x\n"})
	// The swap partners: symlinks (relative: os.Root refuses absolute ones
	// anyway) into the data directory and out of the project.
	links := map[string]string{
		"f.lnk": ".local/share/foya/connections.json",
		"d.lnk": ".local/share/foya",
		"g.lnk": "../outside/connections.json",
		"e.lnk": "../outside",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(proj, name)); err != nil {
			t.Fatal(err)
		}
	}
	snapshotDir := func(dir string) string {
		var b strings.Builder
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				c, _ := os.ReadFile(p)
				fmt.Fprintf(&b, "%s=%q\n", p, c)
			}
			return nil
		})
		return b.String()
	}
	beforeData, beforeOutside := snapshotDir(data), snapshotDir(outside)

	s := New(Config{DataDir: data})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var swaps atomic.Int64
	for _, pair := range [][2]string{{"f.txt", "f.lnk"}, {"d", "d.lnk"}, {"g.txt", "g.lnk"}, {"e", "e.lnk"}} {
		wg.Go(func() {
			a, b := filepath.Join(proj, pair[0]), filepath.Join(proj, pair[1])
			for ctx.Err() == nil {
				if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
					t.Errorf("swap %s: %v", pair[0], err)
					return
				}
				swaps.Add(1)
			}
		})
	}
	calls := []struct {
		name  string
		input map[string]any
	}{
		{"read", map[string]any{"path": "f.txt"}},
		{"read", map[string]any{"path": "d/x.txt"}},
		{"read", map[string]any{"path": "g.txt"}},
		{"read", map[string]any{"path": "e/x.txt"}},
		{"write", map[string]any{"path": "f.txt", "content": "planted\n"}},
		{"write", map[string]any{"path": "d/planted.txt", "content": "planted\n"}},
		{"write", map[string]any{"path": "d/new/deeper/planted.txt", "content": "planted\n"}},
		{"write", map[string]any{"path": "e/planted.txt", "content": "planted\n"}},
		{"write", map[string]any{"path": "g.txt", "content": "planted\n"}},
		{"edit", map[string]any{"path": "d/x.txt", "old_string": "x", "new_string": "y", "replace_all": true}},
		{"grep", map[string]any{"pattern": "SECRET"}},
		{"grep", map[string]any{"pattern": "SECRET", "path": "d"}},
		{"glob", map[string]any{"pattern": "**/*"}},
	}
	var leaks []string
	const n = 1000
	for i := range n {
		c := calls[i%len(calls)]
		in, _ := json.Marshal(c.input)
		res, err := s.Call(context.Background(), sdk.ToolCallRequest{SessionID: "ses_r", Name: c.name, Input: in, ScopeDir: proj})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		text := res.Text
		for _, fc := range res.FileChanges {
			text += string(fc.Before) + string(fc.After)
		}
		if strings.Contains(text, secret) || strings.Contains(text, "connections.json") && c.name == "glob" {
			leaks = append(leaks, c.name+": "+res.Text)
		}
	}
	cancel()
	wg.Wait()
	t.Logf("%d calls while %d swaps", n, swaps.Load())
	if len(leaks) > 0 {
		t.Errorf("%d calls leaked, e.g. %q", len(leaks), leaks[0])
	}
	if got := snapshotDir(data); got != beforeData {
		t.Errorf("data directory changed:\n%s\nwas:\n%s", got, beforeData)
	}
	if got := snapshotDir(outside); got != beforeOutside {
		t.Errorf("outside directory changed:\n%s\nwas:\n%s", got, beforeOutside)
	}
	for _, d := range []string{data, outside} {
		entries, _ := os.ReadDir(d)
		if len(entries) != 2 {
			t.Errorf("%s holds %d entries (planted?)", d, len(entries))
		}
	}
}
