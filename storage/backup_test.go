package storage_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/storage/pgtest"
)

// allEvents is every persisted event of session id.
func allEvents(t testing.TB, db *storage.DB, id string) []core.Event {
	t.Helper()
	evs, err := db.Events(context.Background(), id, 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// dirNames lists the names in dir.
func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestBackupWhileAppending backs up a database while other sessions are
// appended to: the copy opens with Open, is private, and holds every
// session and event the source had before the backup began, byte for
// byte, and no partial transaction of the appends beside it.
func TestBackupWhileAppending(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	const sessions, messages = 5, 200
	for i := range sessions {
		id := fmt.Sprint("s", i)
		coretest.CreateSession(t, db, id)
		batch := make([]core.Event, messages)
		for j := range batch {
			batch[j] = coretest.MessageEvent(t, id, core.RoleUser, fmt.Sprintf("message %d of %s", j, id))
		}
		if _, err := db.Append(ctx, id, core.AnyHead, batch); err != nil {
			t.Fatal(err)
		}
	}

	// Appends beside the backup: two more sessions, written in
	// transactions of three events until the backup is done.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := range 2 {
		id := fmt.Sprint("live", w)
		coretest.CreateSession(t, db, id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				batch := make([]core.Event, 3)
				for k, text := range []string{"q", "a", "r"} {
					ev, err := core.NewEvent(id, core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: core.RoleUser, Text: text}})
					if err != nil {
						errs <- err
						return
					}
					batch[k] = ev
				}
				if _, err := db.Append(ctx, id, core.AnyHead, batch); err != nil {
					errs <- err
					return
				}
			}
		}()
	}

	// Both writers are under way before the backup starts.
	for w := range 2 {
		for {
			head, err := db.HeadSeq(ctx, fmt.Sprint("live", w))
			if err != nil {
				t.Fatal(err)
			}
			if head >= 4 {
				break
			}
			if len(errs) > 0 {
				t.Fatalf("append: %v", <-errs)
			}
			runtime.Gosched()
		}
	}

	dir := t.TempDir()
	dst := filepath.Join(dir, "copy.db")
	err := db.Backup(ctx, dst)
	close(stop)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatalf("append beside the backup: %v", e)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, dir); !reflect.DeepEqual(got, []string{"copy.db"}) {
		t.Errorf("backup directory holds %v, want only copy.db", got)
	}
	fi, err := os.Stat(dst)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("backup mode %v, want 0600", fi.Mode().Perm())
	}

	cp, err := storage.Open(ctx, dst, nil)
	if err != nil {
		t.Fatalf("open the backup: %v", err)
	}
	defer cp.Close()
	for i := range sessions {
		id := fmt.Sprint("s", i)
		want, got := allEvents(t, db, id), allEvents(t, cp, id)
		if len(got) != messages+1 {
			t.Fatalf("session %s: %d events in the backup, want %d", id, len(got), messages+1)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("session %s: the backup's events differ from the source's", id)
		}
		msgs, err := cp.Messages(ctx, id, false)
		if err != nil || len(msgs) != messages {
			t.Fatalf("session %s: %d messages in the backup (%v), want %d", id, len(msgs), err, messages)
		}
	}
	for w := range 2 {
		// A consistent snapshot: whole transactions only, the source's
		// events up to the copy's head.
		id := fmt.Sprint("live", w)
		got := allEvents(t, cp, id)
		if len(got) < 4 {
			t.Errorf("session %s: %d events in the backup, want the 4 or more appended before it", id, len(got))
		}
		if (len(got)-1)%3 != 0 {
			t.Errorf("session %s: %d events in the backup, not whole transactions of 3 after session_created", id, len(got))
		}
		if want := allEvents(t, db, id)[:len(got)]; !reflect.DeepEqual(got, want) {
			t.Errorf("session %s: the backup's events differ from the source's", id)
		}
	}
	list, err := cp.Sessions(ctx, core.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != sessions+2 {
		t.Errorf("%d sessions in the backup, want %d", len(list), sessions+2)
	}

	// The connection that made the copy is gone: the readers are still
	// read-only, and the source goes on.
	coretest.CreateSession(t, db, "after")
	if _, err := db.Session(ctx, "after"); err != nil {
		t.Fatal(err)
	}
}

// TestBackupRefuses checks the target (absolute, in an existing
// directory, new) and that a refused or failed backup leaves nothing
// behind.
func TestBackupRefuses(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	coretest.CreateSession(t, db, "s")
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.db")
	if err := os.WriteFile(existing, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	type target struct {
		name, dst string
		code      core.Code
	}
	targets := []target{
		{"relative", "copy.db", core.CodeBadInput},
		{"empty", "", core.CodeBadInput},
		{"no directory", filepath.Join(dir, "missing", "copy.db"), core.CodeBadInput},
		{"directory is a file", filepath.Join(existing, "copy.db"), core.CodeBadInput},
		{"exists", existing, core.CodeConflict},
		{"is a directory", dir, core.CodeConflict},
	}
	if runtime.GOOS == "linux" {
		// A directory nobody, root included, can create a file in.
		targets = append(targets, target{"unwritable directory", "/proc/foya-backup-test.db", core.CodeBadInput})
	}
	for _, tc := range targets {
		t.Run(tc.name, func(t *testing.T) {
			err := db.Backup(ctx, tc.dst)
			if core.ErrorCode(err) != tc.code {
				t.Fatalf("Backup(%q) = %v, want %s", tc.dst, err, tc.code)
			}
		})
	}
	if b, err := os.ReadFile(existing); err != nil || string(b) != "keep me" {
		t.Errorf("the existing file changed: %q, %v", b, err)
	}

	// A failure after the temporary file was made (a cancelled request)
	// removes it.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := db.Backup(cctx, filepath.Join(dir, "cancelled.db")); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled backup: %v, want context.Canceled", err)
	}
	if got := dirNames(t, dir); !reflect.DeepEqual(got, []string{"existing.db"}) {
		t.Errorf("after failed backups the directory holds %v, want only existing.db", got)
	}
}

func TestBackupPostgresSaysPgDump(t *testing.T) {
	pgtest.Require(t)
	db := openPGTestDB(t)
	dst := filepath.Join(t.TempDir(), "copy.db")
	err := db.Backup(context.Background(), dst)
	if core.ErrorCode(err) != core.CodeUnavailable || !containsPgDump(err) {
		t.Fatalf("Backup on PostgreSQL = %v, want UNAVAILABLE naming pg_dump", err)
	}
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was written on PostgreSQL: %v", err)
	}
}

func containsPgDump(err error) bool {
	var ce *core.Error
	return errors.As(err, &ce) && strings.Contains(ce.Message, "pg_dump")
}

// BenchmarkBackup copies a database of 20,000 message events (about
// 10 MB) while one writer appends single events beside it: the copy's
// throughput, and how many appends commit during one backup (the writer
// is never held up by it).
func BenchmarkBackup(b *testing.B) {
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(b.TempDir(), "foya.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	coretest.CreateSession(b, db, "big")
	text := strings.Repeat("lorem ipsum dolor sit amet ", 16)
	for range 20 {
		batch := make([]core.Event, 1000)
		for i := range batch {
			batch[i] = coretest.MessageEvent(b, "big", core.RoleUser, text)
		}
		if _, err := db.Append(ctx, "big", core.AnyHead, batch); err != nil {
			b.Fatal(err)
		}
	}
	coretest.CreateSession(b, db, "live")
	dir := b.TempDir()
	var appends, size int64
	n := 0
	for b.Loop() {
		stop := make(chan struct{})
		done := make(chan int64)
		go func() {
			var k int64
			for {
				select {
				case <-stop:
					done <- k
					return
				default:
				}
				ev, err := core.NewEvent("live", core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: core.RoleUser, Text: "x"}})
				if err == nil {
					_, err = db.Append(ctx, "live", core.AnyHead, []core.Event{ev})
				}
				if err != nil {
					done <- k
					return
				}
				k++
			}
		}()
		n++
		dst := filepath.Join(dir, fmt.Sprint("copy", n, ".db"))
		err := db.Backup(ctx, dst)
		close(stop)
		appends += <-done
		if err != nil {
			b.Fatal(err)
		}
		fi, err := os.Stat(dst)
		if err != nil {
			b.Fatal(err)
		}
		size = fi.Size()
		os.Remove(dst)
	}
	b.SetBytes(size)
	b.ReportMetric(float64(appends)/float64(n), "appends/backup")
}
