package session

import (
	"github.com/foya-dev/foya/core"
	"strings"
	"testing"
)

func msgEvent(t *testing.T, sid string, seq int64, text string) core.Event {
	t.Helper()
	ev, err := core.NewEvent(sid, core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: core.RoleUser, Text: text}})
	if err != nil {
		t.Fatal(err)
	}
	ev.Seq = seq
	return ev
}

func texts(msgs []core.Message) string {
	var out []string
	for _, m := range msgs {
		s := m.Text
		if !m.Active {
			s += "(inactive)"
		}
		out = append(out, s)
	}
	return strings.Join(out, ",")
}

func TestHistoryCache(t *testing.T) {
	base := []core.Message{{Seq: 1, Active: true, Role: core.RoleUser, Text: "a"}, {Seq: 2, Active: true, Role: core.RoleAssistant, Text: "b"}}
	rewind := func(seq, from int64) core.Event {
		ev, err := core.NewEvent("s", core.EventHistoryRewound, core.RewindPayload{FromSeq: from})
		if err != nil {
			t.Fatal(err)
		}
		ev.Seq = seq
		return ev
	}
	for _, tc := range []struct {
		name     string
		appended []core.Event
		head     int64 // the head the reader saw
		inactive bool
		want     string // "" = a miss
	}{
		{"hit at the head", nil, 2, true, "a,b"},
		{"miss at another head", nil, 3, true, ""},
		{"write-through continues the entry", []core.Event{msgEvent(t, "s", 3, "c")}, 3, true, "a,b,c"},
		{"a gap drops the entry", []core.Event{msgEvent(t, "s", 4, "d")}, 4, true, ""},
		{"rewind deactivates", []core.Event{msgEvent(t, "s", 3, "c"), rewind(4, 2)}, 4, true, "a,b(inactive),c(inactive)"},
		{"active only", []core.Event{rewind(3, 2)}, 3, false, "a"},
		{"a message read already is not added twice", []core.Event{msgEvent(t, "s", 2, "b")}, 2, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newHistoryCache(1 << 20)
			c.put("s", 2, base)
			c.appended("s", tc.appended)
			got, ok := c.get("s", tc.head, tc.inactive)
			if tc.want == "" {
				if ok {
					t.Fatalf("hit %q, want a miss", texts(got))
				}
				return
			}
			if !ok || texts(got) != tc.want {
				t.Fatalf("got %q (hit %v), want %q", texts(got), ok, tc.want)
			}
		})
	}

	t.Run("a new session is known from its first event", func(t *testing.T) {
		c := newHistoryCache(1 << 20)
		created, err := core.NewEvent("n", core.EventSessionCreated, core.SessionPayload{})
		if err != nil {
			t.Fatal(err)
		}
		created.Seq = 1
		c.appended("n", []core.Event{created, msgEvent(t, "n", 2, "hi")})
		if got, ok := c.get("n", 2, true); !ok || texts(got) != "hi" {
			t.Fatalf("got %q (hit %v)", texts(got), ok)
		}
		if cp, known := c.LatestCheckpoint("n", 2); !known || cp != nil {
			t.Fatal("a new session's checkpoint (none) is not known")
		}
		if !c.At("n", 2) || c.At("n", 1) || c.At("other", 2) {
			t.Fatal("at reports another head")
		}
		if !c.NoAnchor("n", 2) {
			t.Fatal("a new session without a saved anchor may have one")
		}
		c.AnchorSaved("n")
		if c.NoAnchor("n", 2) {
			t.Fatal("a saved anchor is skipped")
		}
		c.put("old", 5, nil)
		if c.NoAnchor("old", 5) {
			t.Fatal("a session read from the store is said to have no anchor")
		}
	})

	t.Run("a caller's slice is its own", func(t *testing.T) {
		c := newHistoryCache(1 << 20)
		c.put("s", 2, base)
		got, _ := c.get("s", 2, true)
		got[0].Text = "changed"
		_ = append(got, core.Message{Text: "x"})
		c.appended("s", []core.Event{msgEvent(t, "s", 3, "c")})
		if again, _ := c.get("s", 3, true); texts(again) != "a,b,c" {
			t.Fatalf("cache changed through a returned slice: %q", texts(again))
		}
	})

	t.Run("bounded, least recently used first", func(t *testing.T) {
		big := []core.Message{{Seq: 1, Active: true, Text: strings.Repeat("x", 3000)}}
		c := newHistoryCache(16 << 10) // a session may take a quarter: 4 KiB
		c.put("one", 1, big)
		c.put("two", 1, big)
		c.put("three", 1, big)
		c.get("one", 1, true) // "two" is now the least recently used
		c.put("four", 1, big)
		c.put("five", 1, big)
		if _, ok := c.get("two", 1, true); ok {
			t.Fatal("the least recently used session was kept")
		}
		if _, ok := c.get("one", 1, true); !ok {
			t.Fatal("a recently used session was evicted")
		}
		if c.size > c.max {
			t.Fatalf("cache holds %d bytes, bound %d", c.size, c.max)
		}
		c.put("huge", 1, []core.Message{{Seq: 1, Active: true, Text: strings.Repeat("x", 8000)}})
		if _, ok := c.get("huge", 1, true); ok {
			t.Fatal("a session larger than a quarter of the bound was cached")
		}
		c.clear()
		if _, ok := c.get("one", 1, true); ok || c.size != 0 {
			t.Fatal("clear kept entries")
		}
	})
}
