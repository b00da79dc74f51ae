package session_test

import (
	"context"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
)

func intp(i int) *int { return &i }

// A subscriber that is behind gets consecutive deltas of the same kind (and
// tool call) merged: the concatenated texts are identical, the order of
// kinds is kept, and persisted events are delivered one by one, never merged.
func TestDeltasCoalesceForSlowSubscriber(t *testing.T) {
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
	// Nobody reads while these are published: the subscriber is behind.
	var wantText, wantReasoning strings.Builder
	for i := range 500 {
		txt := string(rune('a' + i%26))
		svc.Emit(s.ID, core.EventReasoningDelta, core.DeltaPayload{Text: "r" + txt})
		wantReasoning.WriteString("r" + txt)
	}
	for i := range 1000 {
		txt := string(rune('a'+i%26)) + " "
		svc.Emit(s.ID, core.EventMessageDelta, core.DeltaPayload{Text: txt})
		wantText.WriteString(txt)
	}
	svc.Emit(s.ID, core.EventToolCallDelta, core.DeltaPayload{Text: `{"a":`, ToolCallIndex: intp(0), ToolCallID: "c1", ToolName: "read"})
	svc.Emit(s.ID, core.EventToolCallDelta, core.DeltaPayload{Text: `1}`, ToolCallIndex: intp(0), ToolCallID: "c1", ToolName: "read"})
	svc.Emit(s.ID, core.EventToolCallDelta, core.DeltaPayload{Text: `{}`, ToolCallIndex: intp(1), ToolCallID: "c2", ToolName: "glob"})
	appendN(t, svc, s.ID, 2) // persisted: seqs 2 and 3
	svc.Emit(s.ID, core.EventMessageDelta, core.DeltaPayload{Text: "after"})

	type got struct {
		typ  core.EventType
		seq  int64
		text string
		idx  int
	}
	var evs []got
	for len(evs) == 0 || evs[len(evs)-1].text != "after" {
		ev := recv(t, ch)
		g := got{typ: ev.Type, seq: ev.Seq, idx: -1}
		if ev.Type.IsDelta() {
			var p core.DeltaPayload
			if err := ev.Decode(&p); err != nil {
				t.Fatal(err)
			}
			g.text = p.Text
			if p.ToolCallIndex != nil {
				g.idx = *p.ToolCallIndex
				if (g.idx == 0 && (p.ToolCallID != "c1" || p.ToolName != "read")) || (g.idx == 1 && p.ToolCallID != "c2") {
					t.Fatalf("tool call delta %+v", p)
				}
			}
		}
		evs = append(evs, g)
	}
	want := []got{
		{typ: core.EventReasoningDelta, text: wantReasoning.String(), idx: -1},
		{typ: core.EventMessageDelta, text: wantText.String(), idx: -1},
		{typ: core.EventToolCallDelta, text: `{"a":1}`, idx: 0},
		{typ: core.EventToolCallDelta, text: `{}`, idx: 1},
		{typ: core.EventMessageEnd, seq: 2, idx: -1},
		{typ: core.EventMessageEnd, seq: 3, idx: -1},
		{typ: core.EventMessageDelta, text: "after", idx: -1},
	}
	// The first event may have been taken before the rest were published;
	// merge what arrived the same way and compare.
	var merged []got
	for _, g := range evs[:len(evs)-1] {
		if n := len(merged); n > 0 && g.seq == 0 && merged[n-1].seq == 0 && merged[n-1].typ == g.typ && merged[n-1].idx == g.idx {
			merged[n-1].text += g.text
			continue
		}
		merged = append(merged, g)
	}
	merged = append(merged, evs[len(evs)-1])
	if len(merged) != len(want) {
		t.Fatalf("got %d events after merging, want %d: %+v", len(merged), len(want), merged)
	}
	for i := range want {
		if merged[i] != want[i] {
			t.Fatalf("event %d: got %+v, want %+v", i, merged[i], want[i])
		}
	}
	// Only a handful of messages went out for 1,500 deltas.
	if len(evs) > 8 {
		t.Fatalf("%d events delivered: deltas were not coalesced", len(evs))
	}
}

// A subscriber that keeps up gets each delta on its own, as it comes.
func TestDeltasNotCoalescedWhenKeepingUp(t *testing.T) {
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
	for i := range 50 {
		txt := string(rune('a' + i%26))
		svc.Emit(s.ID, core.EventMessageDelta, core.DeltaPayload{Text: txt})
		ev := recv(t, ch)
		var p core.DeltaPayload
		if err := ev.Decode(&p); err != nil || p.Text != txt {
			t.Fatalf("delta %d: %q (%v), want %q", i, p.Text, err, txt)
		}
	}
	// The typed payload still reads as JSON for clients that ask for it.
	svc.Emit(s.ID, core.EventMessageDelta, core.DeltaPayload{Text: "json"})
	if ev := recv(t, ch); string(ev.PayloadJSON()) != `{"text":"json"}` {
		t.Fatalf("payload %s", ev.PayloadJSON())
	}
}
