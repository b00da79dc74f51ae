package storage

import (
	"context"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
)

// TestSessionPhasesReadByCode: the list and Session read each known phase
// through its number (sqlPhaseCode) and a phase this kernel does not know
// (written by a newer one) by its name, not as an error.
func TestSessionPhasesReadByCode(t *testing.T) {
	ctx := context.Background()
	db := openTempDB(t)
	phases := append(phaseCodes[:], "a_newer_phase")
	for i, p := range phases {
		id := "s" + string(rune('a'+i))
		coretest.CreateSession(t, db, id)
		if _, err := db.w.ExecContext(ctx, "UPDATE sessions SET phase = ? WHERE id = ?", string(p), id); err != nil {
			t.Fatal(err)
		}
		s, err := db.Session(ctx, id)
		if err != nil || s.Phase != p {
			t.Fatalf("Session(%s): phase %q, %v; want %q", id, s.Phase, err, p)
		}
	}
	list, err := db.Sessions(ctx, core.SessionFilter{})
	if err != nil || len(list) != len(phases) {
		t.Fatalf("Sessions: %d, %v; want %d", len(list), err, len(phases))
	}
	got := map[core.Phase]bool{}
	for _, s := range list {
		got[s.Phase] = true
	}
	for _, p := range phases {
		if !got[p] {
			t.Fatalf("Sessions: no session in phase %q among %v", p, got)
		}
	}
	if _, err := codedPhase(int64(len(phaseCodes))); err == nil {
		t.Fatal("codedPhase: a number past phaseCodes read without an error")
	}
}

// TestSplitSessionRow: the BLOB the SQLite list reads, "<head> <time>{…}",
// and what it refuses.
func TestSplitSessionRow(t *testing.T) {
	head, updated, meta, err := splitSessionRow([]byte(`1234 2026-12-04T10:00:00.123456789Z{"id":"s"}`))
	if err != nil || head != 1234 || string(updated) != "2026-12-04T10:00:00.123456789Z" || string(meta) != `{"id":"s"}` {
		t.Fatalf("got %d %q %q %v", head, updated, meta, err)
	}
	for _, bad := range []string{"", "{}", " 2026{}", "12{} x", "1x 2026{}", "-1 2026{}", "99999999999999999999 2026{}", "12 2026"} {
		if _, _, _, err := splitSessionRow([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
