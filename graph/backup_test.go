package graph_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/edge"
	"github.com/foya-dev/foya/storage"
)

const backupMutation = `mutation($p: String!) { backupDatabase(path: $p) }`

// backupDatabase writes a copy that opens and holds the sessions; a path
// it cannot use is refused with a code and a message that says what to
// do; on PostgreSQL it points to pg_dump.
func TestBackupDatabase(t *testing.T) {
	k := newTestKernel(t)
	dir := t.TempDir()
	if k.pgURL != "" {
		msg := k.mustFail(t, "UNAVAILABLE", backupMutation, map[string]any{"p": filepath.Join(dir, "copy.db")})
		if !strings.Contains(msg, "pg_dump") {
			t.Fatalf("PostgreSQL backup message %q does not name pg_dump", msg)
		}
		return
	}
	var ids []string
	for _, title := range []string{"first", "second", "third"} {
		var c struct{ CreateSession struct{ ID string } }
		k.mustDo(t, `mutation($t: String) { createSession(input: {title: $t}) { id } }`, map[string]any{"t": title}, &c)
		ids = append(ids, c.CreateSession.ID)
	}

	dst := filepath.Join(dir, "copy.db")
	var out struct{ BackupDatabase string }
	k.mustDo(t, backupMutation, map[string]any{"p": dir + "/./copy.db"}, &out)
	if out.BackupDatabase != dst {
		t.Fatalf("backupDatabase returned %q, want %q", out.BackupDatabase, dst)
	}
	if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v, %v (want mode 0600)", fi, err)
	}
	for _, tc := range []struct {
		name, path, code, hint string
	}{
		{"relative", "copy2.db", "BAD_INPUT", "absolute path"},
		{"no directory", filepath.Join(dir, "missing", "copy.db"), "BAD_INPUT", "does not exist"},
		{"exists", dst, "CONFLICT", "never overwrites"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := k.mustFail(t, tc.code, backupMutation, map[string]any{"p": tc.path})
			if !strings.Contains(msg, tc.hint) {
				t.Fatalf("message %q lacks %q", msg, tc.hint)
			}
		})
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("backup directory holds %v (%v), want only copy.db", entries, err)
	}
	ctx := context.Background()
	cp, err := storage.Open(ctx, dst, nil)
	if err != nil {
		t.Fatalf("open the backup: %v", err)
	}
	defer cp.Close()
	for _, id := range ids {
		if _, err := cp.Session(ctx, id); err != nil {
			t.Errorf("session %s in the backup: %v", id, err)
		}
	}
}

// A kernel wired without a backup answers UNAVAILABLE.
func TestBackupDatabaseUnwired(t *testing.T) {
	k := newTestKernel(t, func(c *edge.Config) { c.Backup = nil })
	msg := k.mustFail(t, string(core.CodeUnavailable), backupMutation, map[string]any{"p": filepath.Join(t.TempDir(), "copy.db")})
	if !strings.Contains(msg, "backup") {
		t.Fatalf("message %q", msg)
	}
}
