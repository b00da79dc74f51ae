package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/storage"
)

// checkBackup opens the backup at path as a database and checks that it
// holds every session of ids with its title.
func checkBackup(t *testing.T, path string, ids, titles []string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("backup mode %v, want 0600", fi.Mode().Perm())
	}
	ctx := context.Background()
	db, err := storage.Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("open the backup: %v", err)
	}
	defer db.Close()
	for i, id := range ids {
		s, err := db.Session(ctx, id)
		if err != nil {
			t.Fatalf("session %s in the backup: %v", id, err)
		}
		if s.Title != titles[i] {
			t.Errorf("session %s: title %q in the backup, want %q", id, s.Title, titles[i])
		}
	}
}

// foya backup FILE against a running kernel, with sessions created beside
// it: the kernel writes a copy that opens as a database and holds the
// sessions; FILE is relative to the command's directory; an existing FILE
// is refused, and the kernel goes on. With no kernel running, the command
// starts one on --data-dir as the other client commands do.
func TestBackupCommand(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	k := startKernel(t, data)
	var ids, titles []string
	for i := range 3 {
		title := fmt.Sprint("backed up ", i)
		ids = append(ids, k.createSession(t, client.CreateSessionInput{Title: ptr(title)}))
		titles = append(titles, title)
	}

	// Sessions are created while the backup runs.
	stop := make(chan struct{})
	busy := make(chan error, 1)
	go func() {
		defer close(busy)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := client.CreateSession(context.Background(), k.client(), client.CreateSessionInput{Title: ptr(fmt.Sprint("beside ", i))}); err != nil {
				busy <- err
				return
			}
		}
	}()
	out := t.TempDir()
	var o outputs
	r := o.runIn(t, out, nil, "backup", "--addr", k.addr, "copy.db", "--json")
	close(stop)
	if err := <-busy; err != nil {
		t.Fatalf("createSession beside the backup: %v", err)
	}
	if r.code != 0 {
		t.Fatalf("foya backup: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	want := filepath.Join(out, "copy.db")
	var res struct{ Path string }
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Path != want {
		t.Fatalf("foya backup --json printed %q (%v), want the path %s", r.stdout, err, want)
	}
	checkBackup(t, want, ids, titles)

	// An existing file is refused, with what to do.
	r = o.runIn(t, out, nil, "backup", "--addr", k.addr, "copy.db")
	if r.code != 1 || !strings.Contains(r.stderr, "already exists") || !strings.Contains(r.stderr, "choose a new name") {
		t.Fatalf("backup over an existing file: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	// The plain output names the file.
	r = o.runIn(t, out, nil, "backup", "--addr", k.addr, filepath.Join(out, "second.db"))
	if r.code != 0 || !strings.Contains(r.stdout, filepath.Join(out, "second.db")) {
		t.Fatalf("foya backup: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(k.Logs(), "database backed up") {
		t.Errorf("the kernel did not log the backup:\n%s", k.Logs())
	}
	k.stop(t)

	// No kernel: foya backup starts one on the data directory.
	r = o.runIn(t, out, nil, "backup", "--addr", freeAddr(t), "--data-dir", data, "spawned.db")
	if r.code != 0 || !strings.Contains(r.stderr, "started a kernel for this command") {
		t.Fatalf("foya backup with no kernel: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	checkBackup(t, filepath.Join(out, "spawned.db"), ids, titles)
}
