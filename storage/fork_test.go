package storage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/storage/pgtest"
)

// forkSource fills session s with n messages of every kind (user text with
// escapes and non-ASCII, assistant tool calls and reasoning, tool results)
// in batches, then rewinds the last tenth: they stay in the log, inactive.
// It returns the seq of the last active message.
func forkSource(t testing.TB, db *storage.DB, s string, n int) int64 {
	t.Helper()
	ctx := context.Background()
	coretest.CreateSession(t, db, s)
	at := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	var seqs []int64
	for done := 0; done < n; {
		batch := make([]core.Event, min(1000, n-done))
		for i := range batch {
			k := done + i
			var m core.Message
			switch k % 3 {
			case 0:
				m = core.Message{Role: core.RoleUser, Text: fmt.Sprintf("question %d: «quotes» \"and\" \\ <tags> & tabs\t", k), TurnStartedAt: &at}
			case 1:
				m = core.Message{Role: core.RoleAssistant, Text: fmt.Sprintf("answer %d", k), Reasoning: "thinking…",
					ToolCalls: []core.ToolCall{{ID: fmt.Sprint("call_", k), Name: "lookup", Input: json.RawMessage(`{"q":1}`)}}, StartedAt: &at, Model: "m"}
			default:
				m = core.Message{Role: core.RoleTool, ToolCallID: fmt.Sprint("call_", k-1), ToolName: "lookup", Text: "result ✓"}
			}
			ev, err := core.NewEvent(s, core.EventMessageEnd, core.MessagePayload{Message: m})
			if err != nil {
				t.Fatal(err)
			}
			batch[i] = ev
		}
		out, err := db.Append(ctx, s, core.AnyHead, batch)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range out {
			seqs = append(seqs, ev.Seq)
		}
		done += len(batch)
	}
	keep := n - n/10
	rew, err := core.NewEvent(s, core.EventHistoryRewound, core.RewindPayload{FromSeq: seqs[keep]})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append(ctx, s, core.AnyHead, []core.Event{rew}); err != nil {
		t.Fatal(err)
	}
	return seqs[keep-1]
}

// testForkKeepsEveryMessage forks a 10,000-message session in the store
// and checks the fork against the same fork written the way a store
// without ForkHistory gets it (message_imported events built from the
// decoded messages, appended): the same messages, roles, payloads and seqs,
// every active message through the fork point and nothing after it.
func testForkKeepsEveryMessage(t *testing.T, db *storage.DB) {
	ctx := context.Background()
	through := forkSource(t, db, "src", 10_000)
	src, err := db.Messages(ctx, "src", false)
	if err != nil {
		t.Fatal(err)
	}
	created := func(id string) core.Event {
		ev, err := core.NewEvent(id, core.EventSessionCreated, core.SessionPayload{Session: core.SessionMeta{ID: id}})
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	head, err := db.ForkHistory(ctx, created("fork"), "src", through)
	if err != nil {
		t.Fatal(err)
	}
	ref := []core.Event{created("ref")}
	for _, m := range src {
		if m.Seq > through {
			break
		}
		m.Seq, m.Active = 0, false
		ev, err := core.NewEvent("ref", core.EventMessageImported, core.MessagePayload{Message: m})
		if err != nil {
			t.Fatal(err)
		}
		ref = append(ref, ev)
	}
	if _, err := db.Append(ctx, "ref", 0, ref); err != nil {
		t.Fatal(err)
	}
	if want := int64(len(ref)); head != want || want != 9_001 {
		t.Fatalf("fork head %d, want %d (9,000 active messages + session_created)", head, want)
	}
	got, err := db.Messages(ctx, "fork", true)
	if err != nil {
		t.Fatal(err)
	}
	want, err := db.Messages(ctx, "ref", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("fork has %d messages, want %d", len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("message %d of the fork:\n%+v\nwant\n%+v", i, got[i], want[i])
		}
		if got[i].Text != src[i].Text || got[i].Role != src[i].Role {
			t.Fatalf("message %d of the fork is not message %d of the source", i, i)
		}
	}
	evs, err := db.Events(ctx, "fork", 0, 20_000)
	if err != nil {
		t.Fatal(err)
	}
	refEvs, err := db.Events(ctx, "ref", 0, 20_000)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(evs); i++ {
		var a, b core.MessagePayload
		if evs[i].Type != core.EventMessageImported || evs[i].Seq != int64(i+1) || evs[i].Decode(&a) != nil || refEvs[i].Decode(&b) != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("event %d of the fork %+v differs from %+v", i, evs[i], refEvs[i])
		}
	}
	s, err := db.Session(ctx, "fork")
	if err != nil || s.HeadSeq != head {
		t.Fatalf("fork session %+v, %v", s, err)
	}
	// A fork of nothing is the session alone.
	if head, err := db.ForkHistory(ctx, created("empty"), "src", 0); err != nil || head != 1 {
		t.Fatalf("empty fork: head %d, %v", head, err)
	}
}

func TestForkKeepsEveryMessage(t *testing.T) {
	t.Parallel()
	testForkKeepsEveryMessage(t, openTestDB(t))
}

func TestForkKeepsEveryMessagePostgres(t *testing.T) {
	t.Parallel()
	pgtest.Require(t)
	testForkKeepsEveryMessage(t, openPGTestDB(t))
}

// BenchmarkForkHistory10k measures the store's half of forking a
// 10,000-message session (BenchmarkFork10k in graph measures the whole
// forkSession).
func BenchmarkForkHistory10k(b *testing.B) {
	benchDialects(b, func(b *testing.B, open func(testing.TB) *storage.DB) {
		db := open(b)
		through := forkSource(b, db, "src", 11_111) // 10,000 active after the rewind
		ctx := context.Background()
		cpu := startCPU()
		n := 0
		for b.Loop() {
			n++
			id := fmt.Sprint("fork", n)
			ev, err := core.NewEvent(id, core.EventSessionCreated, core.SessionPayload{Session: core.SessionMeta{ID: id}})
			if err != nil {
				b.Fatal(err)
			}
			if head, err := db.ForkHistory(ctx, ev, "src", through); err != nil || head != 10_001 {
				b.Fatal(head, err)
			}
		}
		cpu.report(b)
	})
}

// TestMessageRowPayloads checks the projection row of message payloads
// written otherwise than by core.NewEvent: with spaces, with another key,
// with the role later, with an escaped role, and invalid ones.
func TestMessageRowPayloads(t *testing.T) {
	db := openTestDB(t)
	ctx := context.Background()
	coretest.CreateSession(t, db, "s")
	for _, c := range []struct {
		payload, text string
		ok            bool
	}{
		{`{"message":{"role":"user","text":"plain"}}`, "plain", true},
		{`{ "message" : { "role" : "user", "text" : "spaced" } }`, "spaced", true},
		{`{"message":{"role":"user","text":"a"},"other":{"text":"b"}}`, "a", true},
		{`{"message":{"text":"late role","role":"assistant"}}`, "late role", true},
		{`{"message":{"role":"us\u0065r","text":"escaped"}}`, "escaped", true},
		{`{"message":{"role":"nobody","text":"x"}}`, "", false},
		{`{"message":{"role":"user","text":"cut"}`, "", false},
		{`{"message":{"role":"user","text":"two"}}}`, "", false},
	} {
		ev := core.Event{SessionID: "s", Type: core.EventMessageEnd, Payload: json.RawMessage(c.payload)}
		_, err := db.Append(ctx, "s", core.AnyHead, []core.Event{ev})
		if (err == nil) != c.ok {
			t.Fatalf("%s: err %v, want ok %v", c.payload, err, c.ok)
		}
		if !c.ok {
			continue
		}
		last, err := db.MessagePage(ctx, "s", core.MessageQuery{Last: true, Limit: 1})
		if err != nil || len(last) != 1 || last[0].Text != c.text {
			t.Fatalf("%s: projection %+v, %v; want text %q", c.payload, last, err, c.text)
		}
	}
}
