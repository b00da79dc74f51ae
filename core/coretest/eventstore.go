// Package coretest holds conformance suites that every implementation of a
// core storage interface runs.
package coretest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
)

// StoreHarness gives the suite a fresh store per test.
type StoreHarness struct {
	// New returns an empty store; cleanup is the harness's business (t.Cleanup).
	New func(t *testing.T) core.Store
	// Rebuild rebuilds the projections of s from its log.
	Rebuild func(t *testing.T, s core.Store)
}

// CreateSession appends a session_created event for a new session.
func CreateSession(t testing.TB, s core.Store, id string) core.Event {
	t.Helper()
	meta := core.SessionMeta{ID: id, ApprovalMode: core.ApprovalAsk, AgentMode: core.AgentExecute, CreatedAt: time.Now().UTC()}
	ev, err := core.NewEvent(id, core.EventSessionCreated, core.SessionPayload{Session: meta})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Append(context.Background(), id, 0, []core.Event{ev})
	if err != nil {
		t.Fatalf("create session %s: %v", id, err)
	}
	return out[0]
}

// MessageEvent builds a message_end event.
func MessageEvent(t testing.TB, sid string, role core.Role, text string) core.Event {
	t.Helper()
	ev, err := core.NewEvent(sid, core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: role, Text: text}})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// RunEventStoreSuite runs the conformance suite against h.
func RunEventStoreSuite(t *testing.T, h StoreHarness) {
	for _, c := range []struct {
		name string
		run  func(*testing.T, StoreHarness)
	}{
		{"append assigns monotonic seqs and replays in order", testAppendOrder},
		{"unknown session is not found", testUnknownSession},
		{"expected head mismatch conflicts and writes nothing", testHeadConflict},
		{"failed batch leaves nothing", testFailedBatch},
		{"concurrent appends get unique contiguous seqs", testConcurrentAppends},
		{"rewind marks messages inactive without rewriting them", testRewindInactive},
		{"deleted session stays deleted", testDeletedStaysDeleted},
		{"rebuilt projections equal live ones", testRebuildEqualsLive},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}
}

// testAppendOrder checks: append assigns monotonic seqs and replays in order.
func testAppendOrder(t *testing.T, h StoreHarness) {
	ctx := context.Background()
	s := h.New(t)
	CreateSession(t, s, "s1")
	batch := []core.Event{MessageEvent(t, "s1", core.RoleUser, "a"), MessageEvent(t, "s1", core.RoleAssistant, "b")}
	out, err := s.Append(ctx, "s1", core.AnyHead, batch)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Seq != 2 || out[1].Seq != 3 {
		t.Fatalf("seqs = %d,%d, want 2,3", out[0].Seq, out[1].Seq)
	}
	head, err := s.HeadSeq(ctx, "s1")
	if err != nil || head != 3 {
		t.Fatalf("head = %d, %v; want 3", head, err)
	}
	evs, err := s.Events(ctx, "s1", 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Seq != 2 || evs[1].Type != core.EventMessageEnd {
		t.Fatalf("replay after 1 = %+v", evs)
	}
	evs, _ = s.Events(ctx, "s1", 0, 2)
	if len(evs) != 2 || evs[1].Seq != 2 {
		t.Fatalf("limit not honoured: %+v", evs)
	}
	msgs, err := s.Messages(ctx, "s1", false)
	if err != nil || len(msgs) != 2 || msgs[0].Seq != 2 || msgs[1].Text != "b" || !msgs[1].Active {
		t.Fatalf("messages = %+v, %v", msgs, err)
	}
	sess, err := s.Session(ctx, "s1")
	if err != nil || sess.HeadSeq != 3 || sess.Phase != core.PhaseIdle {
		t.Fatalf("session = %+v, %v", sess, err)
	}
}

// testUnknownSession checks: unknown session is not found.
func testUnknownSession(t *testing.T, h StoreHarness) {
	ctx := context.Background()
	s := h.New(t)
	_, err := s.Append(ctx, "nope", core.AnyHead, []core.Event{MessageEvent(t, "nope", core.RoleUser, "x")})
	if !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("err = %v, want not found", err)
	}
	if _, err := s.Session(ctx, "nope"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("session err = %v", err)
	}
}

// testHeadConflict checks: expected head mismatch conflicts and writes nothing.
func testHeadConflict(t *testing.T, h StoreHarness) {
	ctx := context.Background()
	s := h.New(t)
	CreateSession(t, s, "s1")
	_, err := s.Append(ctx, "s1", 5, []core.Event{MessageEvent(t, "s1", core.RoleUser, "x")})
	if !errors.Is(err, core.ErrConflict) {
		t.Fatalf("err = %v, want conflict", err)
	}
	if head, _ := s.HeadSeq(ctx, "s1"); head != 1 {
		t.Fatalf("head = %d after conflict", head)
	}
	if _, err := s.Append(ctx, "s1", 1, []core.Event{MessageEvent(t, "s1", core.RoleUser, "x")}); err != nil {
		t.Fatalf("append at the right head: %v", err)
	}
}

// testFailedBatch checks: failed batch leaves nothing.
func testFailedBatch(t *testing.T, h StoreHarness) {
	ctx := context.Background()
	s := h.New(t)
	CreateSession(t, s, "s1")
	bad := MessageEvent(t, "s1", core.Role("robot"), "x") // projection refuses it
	_, err := s.Append(ctx, "s1", core.AnyHead, []core.Event{MessageEvent(t, "s1", core.RoleUser, "ok"), bad})
	if err == nil {
		t.Fatal("append of a bad batch succeeded")
	}
	if head, _ := s.HeadSeq(ctx, "s1"); head != 1 {
		t.Fatalf("head = %d after rollback, want 1", head)
	}
	if msgs, _ := s.Messages(ctx, "s1", true); len(msgs) != 0 {
		t.Fatalf("messages after rollback = %+v", msgs)
	}
	if sess, _ := s.Session(ctx, "s1"); sess.HeadSeq != 1 {
		t.Fatalf("session head after rollback = %d", sess.HeadSeq)
	}
}

// testConcurrentAppends checks: concurrent appends get unique contiguous seqs.
func testConcurrentAppends(t *testing.T, h StoreHarness) {
	ctx := context.Background()
	s := h.New(t)
	CreateSession(t, s, "s1")
	const workers, each = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := s.Append(ctx, "s1", core.AnyHead, []core.Event{MessageEvent(t, "s1", core.RoleUser, fmt.Sprintf("%d-%d", w, i))}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	evs, err := s.Events(ctx, "s1", 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != workers*each+1 {
		t.Fatalf("got %d events, want %d", len(evs), workers*each+1)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
	}
}

// testRewindInactive checks: rewind marks messages inactive without rewriting them.
func testRewindInactive(t *testing.T, h StoreHarness) {
	ctx := context.Background()
	s := h.New(t)
	CreateSession(t, s, "s1")
	if _, err := s.Append(ctx, "s1", core.AnyHead, []core.Event{
		MessageEvent(t, "s1", core.RoleUser, "one"), MessageEvent(t, "s1", core.RoleAssistant, "two"),
		MessageEvent(t, "s1", core.RoleUser, "three"), MessageEvent(t, "s1", core.RoleAssistant, "four"),
	}); err != nil {
		t.Fatal(err)
	}
	rw, _ := core.NewEvent("s1", core.EventHistoryRewound, core.RewindPayload{FromSeq: 4})
	if _, err := s.Append(ctx, "s1", core.AnyHead, []core.Event{rw}); err != nil {
		t.Fatal(err)
	}
	active, _ := s.Messages(ctx, "s1", false)
	all, _ := s.Messages(ctx, "s1", true)
	if len(active) != 2 || len(all) != 4 || all[2].Active || all[2].Text != "three" {
		t.Fatalf("active=%+v all=%+v", active, all)
	}
}

// testDeletedStaysDeleted checks: deleted session stays deleted.
func testDeletedStaysDeleted(t *testing.T, h StoreHarness) {
	ctx := context.Background()
	s := h.New(t)
	CreateSession(t, s, "p")
	child := core.SessionMeta{ID: "c", ParentID: "p", ApprovalMode: core.ApprovalAsk, AgentMode: core.AgentExecute, CreatedAt: time.Now().UTC()}
	ev, _ := core.NewEvent("c", core.EventSessionCreated, core.SessionPayload{Session: child})
	if _, err := s.Append(ctx, "c", 0, []core.Event{ev}); err != nil {
		t.Fatal(err)
	}
	del, err := s.DeleteSession(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	ids := del.IDs
	if !reflect.DeepEqual(ids, []string{"c", "p"}) {
		t.Fatalf("deleted %v, want children first [c p]", ids)
	}
	for _, id := range ids {
		if _, err := s.Append(ctx, id, core.AnyHead, []core.Event{MessageEvent(t, id, core.RoleUser, "late")}); !errors.Is(err, core.ErrNotFound) {
			t.Fatalf("late append to %s: %v", id, err)
		}
		// Not even a session_created can bring it back.
		re, _ := core.NewEvent(id, core.EventSessionCreated, core.SessionPayload{Session: core.SessionMeta{ID: id}})
		if _, err := s.Append(ctx, id, 0, []core.Event{re}); !errors.Is(err, core.ErrNotFound) {
			t.Fatalf("recreate %s: %v", id, err)
		}
		if evs, _ := s.Events(ctx, id, 0, 10); len(evs) != 0 {
			t.Fatalf("events of deleted %s: %d", id, len(evs))
		}
	}
	if _, err := s.DeleteSession(ctx, "p"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

// testRebuildEqualsLive checks: rebuilt projections equal live ones.
func testRebuildEqualsLive(t *testing.T, h StoreHarness) {
	ctx := context.Background()
	s := h.New(t)
	for _, id := range []string{"a", "b"} {
		CreateSession(t, s, id)
		meta := core.SessionMeta{ID: id, Title: "renamed " + id, ApprovalMode: core.ApprovalBypass, AgentMode: core.AgentPlan, CreatedAt: time.Now().UTC()}
		up, _ := core.NewEvent(id, core.EventSessionUpdated, core.SessionPayload{Session: meta, Changed: []string{"title"}})
		ph, _ := core.NewEvent(id, core.EventPhaseChanged, core.PhasePayload{Phase: core.PhaseTurn})
		rw, _ := core.NewEvent(id, core.EventHistoryRewound, core.RewindPayload{FromSeq: 6})
		if _, err := s.Append(ctx, id, core.AnyHead, []core.Event{up,
			MessageEvent(t, id, core.RoleUser, "q"), MessageEvent(t, id, core.RoleAssistant, "a"),
			MessageEvent(t, id, core.RoleUser, "q2"), rw, ph}); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, s)
	h.Rebuild(t, s)
	after := snapshot(t, s)
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("rebuild differs:\nbefore %+v\nafter  %+v", before, after)
	}
}

type projectionSnapshot struct {
	Sessions []core.Session
	Messages map[string][]core.Message
}

func snapshot(t *testing.T, s core.Store) projectionSnapshot {
	t.Helper()
	ctx := context.Background()
	sessions, err := s.Sessions(ctx, core.SessionFilter{IncludeChildren: true})
	if err != nil {
		t.Fatal(err)
	}
	snap := projectionSnapshot{Sessions: sessions, Messages: map[string][]core.Message{}}
	for _, sess := range sessions {
		msgs, err := s.Messages(ctx, sess.ID, true)
		if err != nil {
			t.Fatal(err)
		}
		snap.Messages[sess.ID] = msgs
	}
	return snap
}
