package session_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
	"github.com/foya-dev/foya/core/pubsub"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/storage"
)

func newService(t testing.TB, maxCatchUp int) *session.Service {
	t.Helper()
	db, err := storage.Open(context.Background(), filepath.Join(t.TempDir(), "foya.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	log := slog.New(slog.DiscardHandler)
	svc, err := session.New(session.Config{Store: db, Broker: pubsub.New(pubsub.Config{Logger: log}), Logger: log, MaxCatchUp: maxCatchUp})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func appendN(t *testing.T, svc *session.Service, sid string, n int) {
	t.Helper()
	for i := range n {
		if _, err := svc.Append(context.Background(), sid, coretest.MessageEvent(t, sid, core.RoleUser, fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
}

func recv(t *testing.T, ch <-chan core.Event) core.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("stream closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event in 10s")
	}
	return core.Event{}
}

// A subscriber that does not read while thousands of events go by loses no
// persisted event: it catches up from the store.
func TestLaggingSubscriberCatchesUp(t *testing.T) {
	svc := newService(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := svc.CreateSession(ctx, core.CreateSessionInput{})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := svc.Subscribe(ctx, s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000 // far more than the broker and stream buffers hold
	appendN(t, svc, s.ID, n)
	for i := range n {
		svc.Emit(s.ID, core.EventMessageDelta, core.DeltaPayload{Text: "x"})
		_ = i
	}
	last := int64(1)
	for last < n+1 {
		ev := recv(t, ch)
		if ev.Seq == 0 {
			continue
		}
		if ev.Seq != last+1 {
			t.Fatalf("seq %d after %d", ev.Seq, last)
		}
		last = ev.Seq
	}
}

// One that falls further behind than MaxCatchUp is told to resync and the
// stream ends.
func TestFarBehindSubscriberGetsResync(t *testing.T) {
	svc := newService(t, 100)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := svc.CreateSession(ctx, core.CreateSessionInput{})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := svc.Subscribe(ctx, s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, svc, s.ID, 3000)
	var last int64 = 1
	for {
		ev := recv(t, ch)
		if ev.Type == core.EventResyncRequired {
			var p core.ResyncPayload
			if err := ev.Decode(&p); err != nil {
				t.Fatal(err)
			}
			if p.LastSeq != last {
				t.Fatalf("resync lastSeq %d, delivered up to %d", p.LastSeq, last)
			}
			break
		}
		if ev.Seq != last+1 {
			t.Fatalf("seq %d after %d", ev.Seq, last)
		}
		last = ev.Seq
	}
	if _, ok := <-ch; ok {
		t.Fatal("stream goes on after resync_required")
	}
	// Resubscribing from the last seq delivers the rest.
	ch2, err := svc.Subscribe(ctx, s.ID, &last)
	if err != nil {
		t.Fatal(err)
	}
	for last < 3001 {
		ev := recv(t, ch2)
		if ev.Seq != last+1 {
			t.Fatalf("after resubscribe: seq %d after %d", ev.Seq, last)
		}
		last = ev.Seq
	}
}

func TestDeleteEndsSubscription(t *testing.T) {
	svc := newService(t, 0)
	ctx := context.Background()
	s, err := svc.CreateSession(ctx, core.CreateSessionInput{})
	if err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	ch, err := svc.Subscribe(ctx, s.ID, &zero)
	if err != nil {
		t.Fatal(err)
	}
	if ev := recv(t, ch); ev.Type != core.EventSessionCreated || ev.Seq != 1 {
		t.Fatalf("first event %+v", ev)
	}
	if _, err := svc.DeleteSession(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if ev := recv(t, ch); ev.Type != core.EventSessionDeleted {
		t.Fatalf("event %+v, want session_deleted", ev)
	}
	if _, ok := <-ch; ok {
		t.Fatal("stream open after delete")
	}
}

func TestResetPhases(t *testing.T) {
	svc := newService(t, 0)
	ctx := context.Background()
	s, err := svc.CreateSession(ctx, core.CreateSessionInput{})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.SetPhase(ctx, s.ID, core.PhaseTurn, "test"); err != nil {
		t.Fatal(err)
	}
	n, err := svc.ResetPhases(ctx)
	if err != nil || n != 1 {
		t.Fatalf("reset %d, %v", n, err)
	}
	got, _ := svc.Session(ctx, s.ID)
	if got.Phase != core.PhaseIdle {
		t.Fatalf("phase %s", got.Phase)
	}
}

// A replaying subscriber never gets a message's live deltas after the
// persisted event that holds them: deltas published while the replay read
// the store (and queued before that event) are dropped, later ones kept.
func TestReplayDropsDeltasOfDeliveredEvents(t *testing.T) {
	svc := newService(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := svc.CreateSession(ctx, core.CreateSessionInput{})
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, svc, s.ID, 3)
	after := int64(0)
	ch, err := svc.Subscribe(ctx, s.ID, &after)
	if err != nil {
		t.Fatal(err)
	}
	// The stream is blocked sending its first replayed event: these queue.
	svc.Emit(s.ID, core.EventMessageDelta, core.DeltaPayload{Text: "late"})
	evs, err := svc.Append(ctx, s.ID, coretest.MessageEvent(t, s.ID, core.RoleAssistant, "late"))
	if err != nil {
		t.Fatal(err)
	}
	for want := int64(1); want <= evs[len(evs)-1].Seq; want++ {
		if got := recv(t, ch); got.Seq != want {
			t.Fatalf("event %d: got seq %d (%s)", want, got.Seq, got.Type)
		}
	}
	svc.Emit(s.ID, core.EventMessageDelta, core.DeltaPayload{Text: "live"})
	got := recv(t, ch)
	var d core.DeltaPayload
	if err := got.Decode(&d); err != nil || got.Type != core.EventMessageDelta || d.Text != "live" {
		t.Fatalf("after the replay: %s %s (%v)", got.Type, got.Payload, err)
	}
}
