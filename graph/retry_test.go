package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// liveEvent is one sessionEvents payload with its raw payload.
type liveEvent struct {
	Seq     *int64          `json:"seq"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// followTurn subscribes to sessionEvents over WebSocket, runs send once the
// subscription is live (the replay of the last persisted event proves it), and
// returns every event until turn_finished.
func (k *testKernel) followTurn(t *testing.T, sid string, send func()) []liveEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dialWS(t, ctx, k.srv.URL)
	var head struct{ Session struct{ HeadSeq int64 } }
	k.mustDo(t, `query($s: ID!) { session(id: $s) { headSeq } }`, map[string]any{"s": sid}, &head)
	c.subscribe(ctx, "1", `subscription($id: ID!, $after: Int) { sessionEvents(sessionId: $id, afterSeq: $after) { seq type payload } }`,
		map[string]any{"id": sid, "after": head.Session.HeadSeq - 1})
	if m := c.read(ctx); m.Type != "next" {
		t.Fatalf("message %s %s", m.Type, m.Payload)
	}
	send()
	var out []liveEvent
	for {
		m := c.read(ctx)
		if m.Type != "next" {
			t.Fatalf("message %s %s", m.Type, m.Payload)
		}
		var p struct {
			Data struct{ SessionEvents liveEvent } `json:"data"`
		}
		if err := json.Unmarshal(m.Payload, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Data.SessionEvents)
		if p.Data.SessionEvents.Type == "turn_finished" {
			return out
		}
	}
}

func ofType(evs []liveEvent, typ string) []liveEvent {
	var out []liveEvent
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func turnOutcome(t *testing.T, evs []liveEvent) core.TurnPayload {
	t.Helper()
	var p core.TurnPayload
	if err := json.Unmarshal(evs[len(evs)-1].Payload, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRetryAfterRateLimit(t *testing.T) {
	k := newTestKernel(t, func(c *engine.Config) { c.Retry.BaseDelay = 10 * time.Millisecond })
	sid := k.chatSession(t, nil, "BYPASS")
	limited := openaitest.Error(429, "rate_limit_error", "rate_limit_exceeded", "Rate limit reached for requests")
	limited.Header = http.Header{"Retry-After": {"1"}}
	k.fake.Enqueue(limited, openaitest.Error(503, "server_error", "", "The server is overloaded"), openaitest.TextStream(testModel, "Done."))
	evs := k.followTurn(t, sid, func() { k.send(t, sid, "hello") })
	if p := turnOutcome(t, evs); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	retries := ofType(evs, "retry_scheduled")
	if len(retries) != 2 {
		t.Fatalf("retry events %+v", evs)
	}
	var r1, r2 core.RetryPayload
	json.Unmarshal(retries[0].Payload, &r1)
	json.Unmarshal(retries[1].Payload, &r2)
	if retries[0].Seq != nil || r1.Attempt != 2 || r1.MaxAttempts != engine.DefaultRetryMaxAttempts || r1.DelayMs != 1000 || r1.RetryAfterMs != 1000 ||
		r1.Category != core.ProviderRateLimit || !strings.Contains(r1.Reason, "Rate limit reached") {
		t.Fatalf("first retry %+v (seq %v)", r1, retries[0].Seq)
	}
	// No Retry-After the second time: exponential backoff from the base (10ms, 20ms).
	if r2.Attempt != 3 || r2.DelayMs != 20 || r2.Category != core.ProviderThrottling {
		t.Fatalf("second retry %+v", r2)
	}
	if got := k.sleeps.all(); len(got) != 2 || got[0] != time.Second || got[1] != 20*time.Millisecond {
		t.Fatalf("waits %v", got)
	}
	// The same request three times: a retry never recompiles or compacts.
	reqs := k.fake.Requests()
	if len(reqs) != 3 || !bytes.Equal(reqs[0].Body, reqs[1].Body) || !bytes.Equal(reqs[1].Body, reqs[2].Body) {
		t.Fatalf("%d requests, bodies differ", len(reqs))
	}
	if len(ofType(evs, "compaction_started")) != 0 {
		t.Fatal("a retry compacted")
	}
	msgs := k.messages(t, sid)
	if len(msgs) != 2 || msgs[1].Text != "Done." || deref(msgs[1].TurnStatus) != "COMPLETED" {
		t.Fatalf("messages %+v", msgs)
	}
	// Only the successful request is in the usage ledger.
	var u struct {
		Session struct{ Usage struct{ InputTokens int } }
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { usage { inputTokens } } }`, map[string]any{"s": sid}, &u)
	if u.Session.Usage.InputTokens != 10 {
		t.Fatalf("usage %+v", u)
	}
}

func TestNoRetryOnQuotaAuthBadRequest(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	for i, tc := range []struct {
		resp   openaitest.Response
		prefix string
	}{
		{openaitest.Error(429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota"), "quota:"},
		{openaitest.Error(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided"), "auth:"},
		{openaitest.Error(400, "invalid_request_error", "", "Invalid value for 'model'"), "bad_request:"},
	} {
		tc.resp.Header = http.Header{"Retry-After": {"1"}}
		k.fake.Enqueue(tc.resp)
		evs := k.followTurn(t, sid, func() { k.send(t, sid, "hello") })
		if p := turnOutcome(t, evs); p.Status != core.TurnFailed || !strings.HasPrefix(p.Reason, tc.prefix) {
			t.Fatalf("case %d: turn %+v", i, p)
		}
		if n := len(ofType(evs, "retry_scheduled")); n != 0 {
			t.Fatalf("case %d: %d retries", i, n)
		}
		if n := len(k.fake.Requests()); n != i+1 {
			t.Fatalf("case %d: %d requests", i, n)
		}
	}
	if len(k.sleeps.all()) != 0 {
		t.Fatal("waited")
	}
}

func TestRetryBounds(t *testing.T) {
	k := newTestKernel(t, func(c *engine.Config) {
		c.Retry.MaxAttempts, c.Retry.BaseDelay, c.Retry.MaxTotalWait = 3, 10*time.Millisecond, 30*time.Second
	})
	sid := k.chatSession(t, nil, "BYPASS")
	// Attempts: three server errors, then the turn fails.
	for range 3 {
		k.fake.Enqueue(openaitest.Error(500, "server_error", "", "boom"))
	}
	evs := k.followTurn(t, sid, func() { k.send(t, sid, "one") })
	if p := turnOutcome(t, evs); p.Status != core.TurnFailed || !strings.Contains(p.Reason, "gave up after 3 attempts") {
		t.Fatalf("turn %+v", p)
	}
	if n := len(ofType(evs, "retry_scheduled")); n != 2 || len(k.fake.Requests()) != 3 {
		t.Fatalf("%d retries, %d requests", n, len(k.fake.Requests()))
	}
	// Total wait: a Retry-After beyond the bound is not waited for.
	long := openaitest.Error(429, "rate_limit_error", "rate_limit_exceeded", "slow down")
	long.Header = http.Header{"Retry-After": {"60"}}
	k.fake.Enqueue(long)
	evs = k.followTurn(t, sid, func() { k.send(t, sid, "two") })
	if p := turnOutcome(t, evs); p.Status != core.TurnFailed || !strings.Contains(p.Reason, "exceed the retry bound") {
		t.Fatalf("turn %+v", p)
	}
	if len(ofType(evs, "retry_scheduled")) != 0 || len(k.fake.Requests()) != 4 {
		t.Fatal("retried beyond the total wait bound")
	}
	// Output already streamed: never retried (the partial reply is kept).
	k.fake.Enqueue(openaitest.Response{DropAfter: 1, Events: []string{chunk(map[string]any{"role": "assistant", "content": "Half"}, "")}})
	evs = k.followTurn(t, sid, func() { k.send(t, sid, "three") })
	if p := turnOutcome(t, evs); p.Status != core.TurnFailed || len(ofType(evs, "retry_scheduled")) != 0 || len(k.fake.Requests()) != 5 {
		t.Fatalf("turn %+v after output", p)
	}
	// A network error before any output is retried.
	k.fake.Enqueue(openaitest.Response{DropAfter: 1, Events: []string{chunk(map[string]any{"role": "assistant"}, "")}}, openaitest.TextStream(testModel, "ok"))
	evs = k.followTurn(t, sid, func() { k.send(t, sid, "four") })
	if p := turnOutcome(t, evs); p.Status != core.TurnCompleted || len(ofType(evs, "retry_scheduled")) != 1 {
		t.Fatalf("turn %+v after a dropped connection", p)
	}
}

func TestFailedTitleNotRetriedEveryTurn(t *testing.T) {
	k := newTestKernel(t)
	conn := k.createConn(t, map[string]any{"name": "fake", "baseUrl": k.fake.BaseURL(), "models": []any{map[string]any{"id": testModel}}})
	var s struct{ CreateSession struct{ ID string } }
	k.mustDo(t, `mutation($c: ID) { createSession(input: {connectionId: $c, approvalMode: BYPASS}) { id } }`, map[string]any{"c": conn.ID}, &s)
	sid := s.CreateSession.ID
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.TextStream(testModel, "one"), openaitest.Error(500, "server_error", "", "title boom"))
	k.send(t, sid, "first")
	w.turnEnd()
	waitFor(t, func() bool { return len(k.fake.Requests()) == 2 })
	k.fake.Enqueue(openaitest.TextStream(testModel, "two"))
	k.send(t, sid, "second")
	w.turnEnd()
	k.engine.Close(context.Background()) // waits for any title request
	if n := len(k.fake.Requests()); n != 3 {
		t.Fatalf("%d requests: the failed title was asked again", n)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 20s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
