package storage_test

import (
	"context"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
)

// TestFastAppendFailures checks that an append on the driver connection
// (rawappend.go) that fails leaves no transaction open and writes nothing:
// a conflict, an unknown session, a deleted session, each followed by an
// append that succeeds, with the events, messages and head as expected.
func TestFastAppendFailures(t *testing.T) {
	db := openTestDB(t)
	ctx := context.Background()
	coretest.CreateSession(t, db, "s")
	msg := func(text string) []core.Event {
		return []core.Event{coretest.MessageEvent(t, "s", core.RoleUser, text)}
	}
	if _, err := db.Append(ctx, "s", 1, msg("one")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append(ctx, "s", 1, msg("stale")); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("stale head: %v, want CONFLICT", err)
	}
	if _, err := db.Append(ctx, "nobody", core.AnyHead, msg("lost")); core.ErrorCode(err) != core.CodeNotFound {
		t.Fatalf("unknown session: %v, want NOT_FOUND", err)
	}
	out, err := db.Append(ctx, "s", 2, msg("two"))
	if err != nil {
		t.Fatalf("append after failures: %v", err)
	}
	if out[0].Seq != 3 {
		t.Fatalf("seq %d, want 3", out[0].Seq)
	}
	evs, err := db.Events(ctx, "s", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 {
		t.Fatalf("%d events, want 3", len(evs))
	}
	if head, err := db.HeadSeq(ctx, "s"); err != nil || head != 3 {
		t.Fatalf("head %d, %v; want 3", head, err)
	}
	coretest.CreateSession(t, db, "gone")
	if _, err := db.DeleteSession(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append(ctx, "gone", core.AnyHead, []core.Event{coretest.MessageEvent(t, "gone", core.RoleUser, "late")}); core.ErrorCode(err) != core.CodeNotFound {
		t.Fatalf("deleted session: %v, want NOT_FOUND", err)
	}
	if _, err := db.Append(ctx, "s", 3, msg("three")); err != nil {
		t.Fatalf("append after a deleted session's: %v", err)
	}
}
