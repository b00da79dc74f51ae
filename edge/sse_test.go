package edge_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
)

// sseFrame is one Server-Sent Events frame.
type sseFrame struct {
	id, event, data string
	hasID           bool
}

type sseStream struct {
	t      *testing.T
	resp   *http.Response
	sc     *bufio.Scanner
	cancel context.CancelFunc
}

// openSSE posts a subscription with Accept: text/event-stream to the real
// server; lastEventID, when not empty, is sent as Last-Event-ID.
func openSSE(t *testing.T, url, query string, vars map[string]any, lastEventID string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	s := &sseStream{t: t, resp: resp, sc: sc, cancel: cancel}
	t.Cleanup(s.close)
	return s
}

func (s *sseStream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// next returns the next frame with an event (comments and pings skipped).
func (s *sseStream) next() sseFrame {
	s.t.Helper()
	var f sseFrame
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case line == "":
			if f.event != "" || f.data != "" {
				return f
			}
			f = sseFrame{}
		case strings.HasPrefix(line, "id: "):
			f.id, f.hasID = strings.TrimPrefix(line, "id: "), true
		case strings.HasPrefix(line, "event: "):
			f.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			f.data = strings.TrimPrefix(line, "data: ")
		}
	}
	s.t.Fatalf("sse stream ended: %v", s.sc.Err())
	return f
}

// nextEvent returns the next frame's session event, checking that a
// persisted event carries its seq as the frame id and a live-only one none.
func (s *sseStream) nextEvent() (sseFrame, eventJSON) {
	s.t.Helper()
	f := s.next()
	var p struct {
		Data struct {
			SessionEvents eventJSON `json:"sessionEvents"`
		} `json:"data"`
		Errors []gqlError `json:"errors"`
	}
	if f.event != "next" || json.Unmarshal([]byte(f.data), &p) != nil || len(p.Errors) > 0 {
		s.t.Fatalf("frame %+v", f)
	}
	ev := p.Data.SessionEvents
	switch {
	case ev.Seq == nil && f.hasID:
		s.t.Fatalf("live-only %s carries id %q", ev.Type, f.id)
	case ev.Seq != nil && (!f.hasID || f.id != strconv.FormatInt(*ev.Seq, 10)):
		s.t.Fatalf("event seq %d in a frame with id %q", *ev.Seq, f.id)
	}
	return f, ev
}

// A subscriber on SSE reads part of the history and drops; meanwhile the
// session moves on; it reconnects with Last-Event-ID and receives exactly
// the events it missed, then live ones, with no gap and no duplicate.
func TestSSEResumesWithLastEventID(t *testing.T) {
	k := newTestKernel(t)
	sid := seedSession(t, k, 20) // seqs 1..21
	vars := map[string]any{"id": sid, "after": 0}

	first := openSSE(t, k.srv.URL, subscribeEvents, vars, "")
	var lastID string
	for want := int64(1); want <= 10; want++ {
		f, ev := first.nextEvent()
		if ev.Seq == nil || *ev.Seq != want {
			t.Fatalf("first stream: got %+v, want seq %d", ev, want)
		}
		lastID = f.id
	}
	first.close() // the connection drops after seq 10

	// The session moves on while the subscriber is away.
	for i := range 30 {
		if _, err := k.svc.Append(context.Background(), sid, coretest.MessageEvent(t, sid, core.RoleUser, fmt.Sprintf("while away %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	head := int64(51)

	// The reconnect repeats the request (afterSeq 0) with Last-Event-ID.
	again := openSSE(t, k.srv.URL, subscribeEvents, vars, lastID)
	for want := int64(11); want <= head; want++ {
		_, ev := again.nextEvent()
		if ev.Seq == nil || *ev.Seq != want {
			t.Fatalf("resumed stream: got %+v, want seq %d (gap or duplicate)", ev, want)
		}
	}
	// Then live: a delta without an id, the next persisted event with one.
	k.svc.Emit(sid, core.EventMessageDelta, core.DeltaPayload{Text: "live"})
	if _, err := k.svc.Append(context.Background(), sid, coretest.MessageEvent(t, sid, core.RoleUser, "live")); err != nil {
		t.Fatal(err)
	}
	// (When the stream's replay was still reading the store, it reads the
	// new event there and the delta, older than it, is dropped: never after it.)
	f, ev := again.nextEvent()
	if ev.Type == "message_delta" {
		if ev.Seq != nil {
			t.Fatalf("live delta %+v", ev)
		}
		f, ev = again.nextEvent()
	}
	if ev.Seq == nil || *ev.Seq != head+1 || f.id != strconv.FormatInt(head+1, 10) {
		t.Fatalf("live event %+v in %+v", ev, f)
	}

	// Last-Event-ID at the head: nothing replayed, live events only.
	atHead := openSSE(t, k.srv.URL, subscribeEvents, vars, strconv.FormatInt(head+1, 10))
	if _, err := k.svc.Append(context.Background(), sid, coretest.MessageEvent(t, sid, core.RoleUser, "after head")); err != nil {
		t.Fatal(err)
	}
	if _, ev := atHead.nextEvent(); ev.Seq == nil || *ev.Seq != head+2 {
		t.Fatalf("resume at head: got %+v, want seq %d", ev, head+2)
	}

	// A Last-Event-ID that is not a seq is refused with BAD_INPUT.
	bad := openSSE(t, k.srv.URL, subscribeEvents, vars, "abc")
	f = bad.next()
	if !strings.Contains(f.data, "BAD_INPUT") || !strings.Contains(f.data, "Last-Event-ID") {
		t.Fatalf("bad Last-Event-ID: %+v", f)
	}
}
