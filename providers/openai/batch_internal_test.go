package openai

import (
	"io"
	"strings"
	"testing"

	"github.com/foya-dev/foya/plugins/sdk"
)

// oneEventReader returns at most one SSE event per Read, like a server that
// flushes each chunk to a client that keeps up.
type oneEventReader struct{ events []string }

func (r *oneEventReader) Read(p []byte) (int, error) {
	if len(r.events) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.events[0])
	r.events[0] = r.events[0][n:]
	if r.events[0] == "" {
		r.events = r.events[1:]
	}
	return n, nil
}

// readSSE calls idle before every read that would wait: once per event for
// a stream that arrives event by event, and only at the start and the end
// when everything is already there.
func TestReadSSEIdleBeforeBlockingReads(t *testing.T) {
	events := []string{"data: a\n\n", "data: b\r\n\r\n", ": comment\n\ndata: c\n\n"}
	for _, tc := range []struct {
		name      string
		body      io.Reader
		wantIdles int
	}{
		{"all at once", strings.NewReader(strings.Join(events, "")), 2},
		{"one event per read", &oneEventReader{events: append([]string(nil), events...)}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			idles := 0
			err := readSSE(tc.body, func() error { idles++; return nil }, func(data []byte) error {
				got = append(got, string(data))
				return nil
			})
			if err != nil || strings.Join(got, ",") != "a,b,c" {
				t.Fatalf("events %q, err %v", got, err)
			}
			if idles != tc.wantIdles {
				t.Fatalf("idle called %d times, want %d", idles, tc.wantIdles)
			}
		})
	}
}

type sent struct{ events []string }

func (s *sent) Text(t string) error      { s.events = append(s.events, "text:"+t); return nil }
func (s *sent) Reasoning(t string) error { s.events = append(s.events, "reasoning:"+t); return nil }
func (s *sent) ToolCall(d sdk.ToolCallDelta) error {
	s.events = append(s.events, "tool:"+d.Arguments)
	return nil
}
func (s *sent) Usage(sdk.Usage) error { s.events = append(s.events, "usage"); return nil }
func (s *sent) State([]byte) error    { s.events = append(s.events, "state"); return nil }

// The batcher sends the reply's first delta alone at once, then merges
// consecutive deltas of one kind until flushed, and keeps the order of
// kinds, tool calls and usage.
func TestBatcherMergesRunsInOrder(t *testing.T) {
	out := &sent{}
	b := &batcher{out: out}
	b.Reasoning("")
	b.Reasoning("r0")
	b.Reasoning("r1")
	b.Reasoning("r2")
	b.Text("a")
	b.Text("b")
	b.ToolCall(sdk.ToolCallDelta{Arguments: "{}"})
	b.Text("c")
	b.flush()
	b.Text("d")
	b.Usage(sdk.Usage{})
	b.flush()
	want := "reasoning:r0,reasoning:r1r2,text:ab,tool:{},text:c,text:d,usage"
	if got := strings.Join(out.events, ","); got != want {
		t.Fatalf("sent %s\nwant %s", got, want)
	}
}
