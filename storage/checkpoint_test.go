package storage_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
	"github.com/foya-dev/foya/storage"
)

// TestCheckpointsOffTheWriter: appends far below the writer's own
// checkpoint threshold reach the database file anyway — the checkpointer
// copied them there from the WAL on its own connection — and the database
// reads back whole after Close.
func TestCheckpointsOffTheWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "foya.db")
	ctx := context.Background()
	db, err := storage.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	coretest.CreateSession(t, db, "s")
	size := func() int64 {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	before := size()
	text := strings.Repeat("a line of a long reply; ", 100) // ~2.4 KB a message
	for range 200 {                                         // ~150 pages of 4 KiB, far below 2,000
		if _, err := db.Append(ctx, "s", core.AnyHead, []core.Event{coretest.MessageEvent(t, "s", core.RoleAssistant, text)}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for size() < before+200*2000 {
		if time.Now().After(deadline) {
			t.Fatalf("the database file is %d bytes (%d before 200 appends of 2.4 KB): no checkpoint ran", size(), before)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = storage.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	page, err := db.Events(ctx, "s", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 201 {
		t.Fatalf("%d events read back, want 201", len(page))
	}
}
