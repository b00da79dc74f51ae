package storage

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
)

// TestCheckpointerRestartsTheLog: a checkpoint taken while the
// checkpointer holds the writer copies the whole log, and the next commit
// starts the log over (the log then holds that commit's pages alone).
func TestCheckpointerRestartsTheLog(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "foya.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	appendOne := func(i int) {
		t.Helper()
		if _, err := db.Append(ctx, "s", core.AnyHead, []core.Event{coretest.MessageEvent(t, "s", core.RoleUser, fmt.Sprintf("message %d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	coretest.CreateSession(t, db, "s")
	for i := range 300 {
		appendOne(i)
	}
	logged, copied, err := db.ckpt.restart(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if logged < 300 || copied != logged {
		t.Fatalf("holding the writer, the checkpoint copied %d of %d pages; want all of 300 or more", copied, logged)
	}
	appendOne(300)
	if logged, _, err = db.ckpt.checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if logged > 10 {
		t.Fatalf("after the restart and one commit the log holds %d pages; want that commit's few", logged)
	}
	if head, err := db.HeadSeq(ctx, "s"); err != nil || head != 302 {
		t.Fatalf("head %d %v, want 302", head, err)
	}
}
