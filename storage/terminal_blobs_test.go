package storage_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/storage/artifacts"
)

// TestDeleteSessionTerminalOutputs: the artifact a terminal_exited event
// names (outputSha256) is reported as an orphan, and its file removed, when
// its session is deleted, unless another session's terminal_exited event or
// message still names the same bytes (artifacts are content-addressed).
func TestDeleteSessionTerminalOutputs(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		blobs, err := artifacts.New(filepath.Join(t.TempDir(), "artifacts"))
		if err != nil {
			t.Fatal(err)
		}
		put := func(s string) string {
			h, _, err := blobs.Put(ctx, strings.NewReader(s), 0)
			if err != nil {
				t.Fatal(err)
			}
			return h
		}
		only, sharedTerm, sharedMsg := put("ready\nonly a's\n"), put("ready\nboth terminals\n"), put("a file's bytes\n")
		exited := func(sid, termID, hash string) core.Event {
			ev, err := core.NewEvent(sid, core.EventTerminalExited, core.TerminalExitedPayload{
				Terminal:     core.Terminal{ID: termID, SessionID: sid, Command: "sh -c 'echo ready'", Status: core.TerminalExited},
				OutputSHA256: hash})
			if err != nil {
				t.Fatal(err)
			}
			return ev
		}
		edit, err := core.NewEvent("c", core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: core.RoleAssistant, Text: "edit",
			FileChanges: []core.FileChange{{Path: "f", Action: core.FileModify, AfterHash: sharedMsg}}}})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"a", "b", "c"} {
			coretest.CreateSession(t, db, id)
		}
		for _, ev := range []core.Event{exited("a", "term_1", only), exited("a", "term_2", sharedTerm), exited("a", "term_3", sharedMsg),
			exited("a", "term_4", ""), exited("b", "term_5", sharedTerm), edit} {
			if _, err := db.Append(ctx, ev.SessionID, core.AnyHead, []core.Event{ev}); err != nil {
				t.Fatal(err)
			}
		}

		del, err := db.DeleteSession(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(del.OrphanBlobs, []string{only}) {
			t.Fatalf("orphans = %v, want only %s (the others are named by session b's terminal and session c's message)", del.OrphanBlobs, only)
		}
		for _, h := range del.OrphanBlobs {
			if err := blobs.Delete(h); err != nil {
				t.Fatal(err)
			}
		}
		if blobs.Has(only) || !blobs.Has(sharedTerm) || !blobs.Has(sharedMsg) {
			t.Fatalf("after deleting a: only %v, shared by terminals %v, shared with a message %v", blobs.Has(only), blobs.Has(sharedTerm), blobs.Has(sharedMsg))
		}

		// The last session naming the bytes takes them along.
		if del, err = db.DeleteSession(ctx, "b"); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(del.OrphanBlobs, []string{sharedTerm}) {
			t.Fatalf("orphans of b = %v, want %s", del.OrphanBlobs, sharedTerm)
		}
	})
}

// BenchmarkDeleteSessionOrphans deletes a session with one file change
// whose bytes nothing else names, from a SQLite file holding 200 other
// sessions of 100 events each (the cost of looking for other references,
// terminal_exited events included).
func BenchmarkDeleteSessionOrphans(b *testing.B) {
	ctx := context.Background()
	db := openTestDB(b)
	for s := range 200 {
		sid := "bg" + strconv.Itoa(s)
		coretest.CreateSession(b, db, sid)
		evs := make([]core.Event, 0, 100)
		for i := range 100 {
			ev, err := core.NewEvent(sid, core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: core.RoleAssistant, Text: strings.Repeat("x", 200) + strconv.Itoa(i)}})
			if err != nil {
				b.Fatal(err)
			}
			evs = append(evs, ev)
		}
		if _, err := db.Append(ctx, sid, core.AnyHead, evs); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		sid := "del" + strconv.Itoa(i)
		coretest.CreateSession(b, db, sid)
		h := fmt.Sprintf("%064x", i+1)
		ev, err := core.NewEvent(sid, core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: core.RoleAssistant, Text: "edit",
			FileChanges: []core.FileChange{{Path: "f", Action: core.FileModify, AfterHash: h}}}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := db.Append(ctx, sid, core.AnyHead, []core.Event{ev}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		del, err := db.DeleteSession(ctx, sid)
		if err != nil || len(del.OrphanBlobs) != 1 {
			b.Fatalf("delete: %+v %v", del, err)
		}
	}
}
