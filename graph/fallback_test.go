package graph_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

const backupModel = "gpt-backup"

// fallbackKernel is a kernel with a session on the fake (model gpt-t) and a
// second connection to the same fake offering backupModel, set as the
// LANGUAGE fallback chain. Retries: two attempts per call.
func fallbackKernel(t *testing.T) (k *testKernel, sid, primary, backup string) {
	t.Helper()
	k = newTestKernel(t, func(c *engine.Config) { c.Retry.MaxAttempts = 2 })
	sid = k.chatSession(t, nil, "BYPASS")
	var s struct{ Session struct{ ConnectionID string } }
	k.mustDo(t, `query($s: ID!) { session(id: $s) { connectionId } }`, map[string]any{"s": sid}, &s)
	primary = s.Session.ConnectionID
	backup = k.createConn(t, map[string]any{"name": "backup", "baseUrl": k.fake.BaseURL(), "apiKey": "sk-backup", "models": []any{map[string]any{"id": backupModel}}}).ID
	var d struct {
		SetFallbackModels struct {
			Fallbacks []struct {
				Purpose string
				Models  []core.ModelRef
			}
		}
	}
	k.mustDo(t, `mutation($m: [ModelRefInput!]!) { setFallbackModels(purpose: LANGUAGE, models: $m) { fallbacks { purpose models { connectionId model } } } }`,
		map[string]any{"m": []any{map[string]any{"connectionId": backup, "model": backupModel}}}, &d)
	if f := d.SetFallbackModels.Fallbacks; len(f) != 1 || f[0].Purpose != "LANGUAGE" || len(f[0].Models) != 1 || f[0].Models[0] != (core.ModelRef{ConnectionID: backup, Model: backupModel}) {
		t.Fatalf("fallbacks %+v", f)
	}
	return k, sid, primary, backup
}

// lastUsage is the payload of the session's last persisted usage event.
func (k *testKernel) lastUsage(t *testing.T, sid string) core.UsagePayload {
	t.Helper()
	var out struct {
		Events []struct {
			Type    string
			Payload json.RawMessage
		}
	}
	k.mustDo(t, `query($s: ID!) { events(sessionId: $s) { type payload } }`, map[string]any{"s": sid}, &out)
	var u core.UsagePayload
	for _, e := range out.Events {
		if e.Type == "usage" {
			u = core.UsagePayload{}
			_ = json.Unmarshal(e.Payload, &u)
		}
	}
	return u
}

func (k *testKernel) persistedOfType(t *testing.T, sid, typ string) []json.RawMessage {
	t.Helper()
	var out struct {
		Events []struct {
			Type    string
			Payload json.RawMessage
		}
	}
	k.mustDo(t, `query($s: ID!) { events(sessionId: $s) { type payload } }`, map[string]any{"s": sid}, &out)
	var ps []json.RawMessage
	for _, e := range out.Events {
		if e.Type == typ {
			ps = append(ps, e.Payload)
		}
	}
	return ps
}

// Each failure class another model may fix continues the turn on the
// fallback chain: the reply and its usage come from the fallback model, a
// route_fallback event is streamed and persisted, and the next turn starts
// on the session's own model again. A bad request does not fall back.
func TestRouteFallbackClasses(t *testing.T) {
	t.Parallel()
	k, sid, primary, backup := fallbackKernel(t)
	dropped := openaitest.Response{DropAfter: 1, Events: []string{chunk(map[string]any{"role": "assistant"}, "")}}
	cases := []struct {
		name     string
		failures []openaitest.Response // what the primary answers (its retries included)
		reason   string
	}{
		{"overloaded 529", []openaitest.Response{openaitest.Error(529, "server_error", "", "Overloaded"), openaitest.Error(529, "server_error", "", "Overloaded")}, engine.FallbackOverloaded},
		{"rate limited 429", []openaitest.Response{openaitest.Error(429, "rate_limit_error", "rate_limit_exceeded", "Rate limit reached"), openaitest.Error(429, "rate_limit_error", "rate_limit_exceeded", "Rate limit reached")}, engine.FallbackRateLimited},
		{"quota 429", []openaitest.Response{openaitest.Error(429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota")}, engine.FallbackQuota},
		{"server 500", []openaitest.Response{openaitest.Error(500, "server_error", "", "boom"), openaitest.Error(500, "server_error", "", "boom")}, engine.FallbackServerError},
		{"network reset", []openaitest.Response{dropped, dropped}, engine.FallbackNetwork},
		{"model not found 404", []openaitest.Response{openaitest.Error(404, "invalid_request_error", "model_not_found", "The model `gpt-t` does not exist or you do not have access to it.")}, engine.FallbackModelNotFound},
		{"auth 401", []openaitest.Response{openaitest.Error(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided")}, engine.FallbackAuth},
	}
	for i, tc := range cases {
		before := len(k.fake.Requests())
		k.fake.Enqueue(append(tc.failures, openaitest.TextStream(backupModel, "From ", "backup."))...)
		evs := k.followTurn(t, sid, func() { k.send(t, sid, "hello "+tc.name) })
		if p := turnOutcome(t, evs); p.Status != core.TurnCompleted {
			t.Fatalf("%s: turn %+v", tc.name, p)
		}
		fbs := ofType(evs, "route_fallback")
		if len(fbs) != 1 || fbs[0].Seq == nil {
			t.Fatalf("%s: route_fallback events %+v", tc.name, fbs)
		}
		var p core.RouteFallbackPayload
		_ = json.Unmarshal(fbs[0].Payload, &p)
		if p.From != (core.ModelRef{ConnectionID: primary, Model: testModel}) || p.To != (core.ModelRef{ConnectionID: backup, Model: backupModel}) ||
			p.Reason != tc.reason || p.Attempt != 1 || p.TurnID == "" || p.Message == "" {
			t.Fatalf("%s: route_fallback %+v", tc.name, p)
		}
		if strings.Contains(string(fbs[0].Payload), "sk-fake") || strings.Contains(string(fbs[0].Payload), "sk-backup") {
			t.Fatalf("%s: a key in the event: %s", tc.name, fbs[0].Payload)
		}
		// Persisted: in the event log too.
		if got := k.persistedOfType(t, sid, "route_fallback"); len(got) != i+1 {
			t.Fatalf("%s: %d persisted route_fallback events", tc.name, len(got))
		}
		reqs := k.fake.Requests()[before:]
		if len(reqs) != len(tc.failures)+1 {
			t.Fatalf("%s: %d requests", tc.name, len(reqs))
		}
		var body struct{ Model string }
		_ = json.Unmarshal(reqs[0].Body, &body)
		if body.Model != testModel {
			t.Fatalf("%s: first request on %q, not the primary", tc.name, body.Model)
		}
		_ = json.Unmarshal(reqs[len(reqs)-1].Body, &body)
		if body.Model != backupModel || reqs[len(reqs)-1].Header.Get("Authorization") != "Bearer sk-backup" {
			t.Fatalf("%s: fallback request on %q (%s)", tc.name, body.Model, reqs[len(reqs)-1].Header.Get("Authorization"))
		}
		// The reply and its usage come from the fallback model.
		var m struct {
			Session struct {
				ConnectionID, Model string
				Messages            []struct {
					Role, Text string
					Model      *string
				}
			}
		}
		k.mustDo(t, `query($s: ID!) { session(id: $s) { connectionId model messages { role text model } } }`, map[string]any{"s": sid}, &m)
		last := m.Session.Messages[len(m.Session.Messages)-1]
		if last.Text != "From backup." || last.Model == nil || *last.Model != backupModel {
			t.Fatalf("%s: last message %+v", tc.name, last)
		}
		if u := k.lastUsage(t, sid); u.ConnectionID != backup || u.Usage.Model != backupModel || u.Usage.Estimated {
			t.Fatalf("%s: usage %+v", tc.name, u)
		}
		// The session keeps its own model.
		if m.Session.ConnectionID != primary || m.Session.Model != testModel {
			t.Fatalf("%s: session rebound to %s/%s", tc.name, m.Session.ConnectionID, m.Session.Model)
		}
		// The next turn starts on the primary again.
		k.fake.Enqueue(openaitest.TextStream(testModel, "From primary."))
		evs = k.followTurn(t, sid, func() { k.send(t, sid, "again") })
		if p := turnOutcome(t, evs); p.Status != core.TurnCompleted || len(ofType(evs, "route_fallback")) != 0 {
			t.Fatalf("%s: next turn %+v", tc.name, p)
		}
		_ = json.Unmarshal(k.fake.LastRequest().Body, &body)
		if body.Model != testModel {
			t.Fatalf("%s: next turn on %q", tc.name, body.Model)
		}
		if u := k.lastUsage(t, sid); u.ConnectionID != primary {
			t.Fatalf("%s: next turn's usage %+v", tc.name, u)
		}
	}

	// A bad request does not fall back: the turn fails on the primary.
	before := len(k.fake.Requests())
	k.fake.Enqueue(openaitest.Error(400, "invalid_request_error", "", "Invalid value for 'temperature'"))
	evs := k.followTurn(t, sid, func() { k.send(t, sid, "bad") })
	if p := turnOutcome(t, evs); p.Status != core.TurnFailed || !strings.HasPrefix(p.Reason, "bad_request:") || len(ofType(evs, "route_fallback")) != 0 {
		t.Fatalf("bad request: %+v", p)
	}
	if n := len(k.fake.Requests()) - before; n != 1 {
		t.Fatalf("bad request: %d requests", n)
	}
}

// A session's own chain wins over the LANGUAGE chain; when every entry
// fails too the turn fails with the last error, after one route_fallback
// per entry.
func TestSessionFallbackModels(t *testing.T) {
	k, sid, primary, backup := fallbackKernel(t)
	third := k.createConn(t, map[string]any{"name": "third", "baseUrl": k.fake.BaseURL(), "models": []any{map[string]any{"id": "gpt-third"}}}).ID
	const upd = `mutation($s: ID!, $m: [ModelRefInput!]) { updateSession(id: $s, input: {fallbackModels: $m}) { fallbackModels { connectionId model } } }`
	var u struct {
		UpdateSession struct{ FallbackModels []core.ModelRef }
	}
	k.mustDo(t, upd, map[string]any{"s": sid, "m": []any{
		map[string]any{"connectionId": third, "model": "gpt-third"}, map[string]any{"connectionId": backup, "model": backupModel},
	}}, &u)
	if f := u.UpdateSession.FallbackModels; len(f) != 2 || f[0].Model != "gpt-third" || f[1].Model != backupModel {
		t.Fatalf("fallbackModels %+v", f)
	}
	// Bad entries are refused with BAD_INPUT, nothing changed.
	for _, bad := range []any{
		[]any{map[string]any{"connectionId": "conn_nope", "model": "x"}},
		[]any{map[string]any{"connectionId": backup, "model": "not-offered"}},
		[]any{map[string]any{"connectionId": backup, "model": backupModel}, map[string]any{"connectionId": backup, "model": backupModel}},
	} {
		if r := k.do(t, upd, map[string]any{"s": sid, "m": bad}); len(r.Errors) == 0 || r.Errors[0].Extensions.Code != "BAD_INPUT" {
			t.Fatalf("bad chain %v accepted: %+v", bad, r)
		}
	}
	k.fake.Enqueue(
		openaitest.Error(402, "insufficient_quota", "insufficient_quota", "quota"),         // primary
		openaitest.Error(404, "invalid_request_error", "model_not_found", "no such model"), // third
		openaitest.Error(401, "invalid_request_error", "invalid_api_key", "bad key"),       // backup
	)
	evs := k.followTurn(t, sid, func() { k.send(t, sid, "hi") })
	if p := turnOutcome(t, evs); p.Status != core.TurnFailed || !strings.HasPrefix(p.Reason, "auth:") {
		t.Fatalf("turn %+v", p)
	}
	fbs := ofType(evs, "route_fallback")
	if len(fbs) != 2 {
		t.Fatalf("route_fallback %+v", fbs)
	}
	var p1, p2 core.RouteFallbackPayload
	_ = json.Unmarshal(fbs[0].Payload, &p1)
	_ = json.Unmarshal(fbs[1].Payload, &p2)
	if p1.From.ConnectionID != primary || p1.To.Model != "gpt-third" || p1.Reason != engine.FallbackQuota || p1.Attempt != 1 ||
		p2.From.Model != "gpt-third" || p2.To.Model != backupModel || p2.Reason != engine.FallbackModelNotFound || p2.Attempt != 2 {
		t.Fatalf("route_fallback %+v %+v", p1, p2)
	}
	// An empty list clears the session's chain: the LANGUAGE chain applies.
	k.mustDo(t, upd, map[string]any{"s": sid, "m": []any{}}, &u)
	if len(u.UpdateSession.FallbackModels) != 0 {
		t.Fatalf("not cleared: %+v", u.UpdateSession.FallbackModels)
	}
	// A purpose chain is validated against the purpose's connection type.
	r := k.do(t, `mutation($m: [ModelRefInput!]!) { setFallbackModels(purpose: IMAGE, models: $m) { language { model } } }`,
		map[string]any{"m": []any{map[string]any{"connectionId": backup, "model": backupModel}}})
	if len(r.Errors) == 0 || r.Errors[0].Extensions.Code != "BAD_INPUT" || !strings.Contains(r.Errors[0].Message, "image") {
		t.Fatalf("image chain of a language connection: %+v", r)
	}
	// Deleting the connection drops it from the chain.
	k.mustDo(t, `mutation($id: ID!) { deleteConnection(id: $id) }`, map[string]any{"id": backup}, nil)
	var d struct {
		DefaultModels struct{ Fallbacks []struct{ Purpose string } }
	}
	k.mustDo(t, `{ defaultModels { fallbacks { purpose } } }`, nil, &d)
	if len(d.DefaultModels.Fallbacks) != 0 {
		t.Fatalf("fallbacks after delete %+v", d.DefaultModels.Fallbacks)
	}
}

// The FAST chain serves titles: a fast default that fails (auth) hands the
// title to the next model of the FAST fallback chain.
func TestTitleUsesFastFallbackChain(t *testing.T) {
	k := newTestKernel(t)
	conn := k.createConn(t, map[string]any{"name": "fake", "baseUrl": k.fake.BaseURL(), "models": []any{map[string]any{"id": testModel}, map[string]any{"id": "gpt-fast"}}}).ID
	spare := k.createConn(t, map[string]any{"name": "spare", "baseUrl": k.fake.BaseURL(), "apiKey": "sk-spare", "models": []any{map[string]any{"id": "gpt-spare"}}}).ID
	k.mustDo(t, `mutation($c: ID) { setDefaultModel(purpose: FAST, connectionId: $c, model: "gpt-fast") { fast { model } } }`, map[string]any{"c": conn}, nil)
	k.mustDo(t, `mutation($m: [ModelRefInput!]!) { setFallbackModels(purpose: FAST, models: $m) { fallbacks { purpose } } }`,
		map[string]any{"m": []any{map[string]any{"connectionId": spare, "model": "gpt-spare"}}}, nil)
	var s struct{ CreateSession struct{ ID string } }
	k.mustDo(t, `mutation($c: ID) { createSession(input: {connectionId: $c, model: "gpt-t", approvalMode: BYPASS}) { id } }`, map[string]any{"c": conn}, &s)
	sid := s.CreateSession.ID
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.TextStream(testModel, "Paris."),
		openaitest.Error(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided"),
		openaitest.Completion("gpt-spare", "Capital of France", "stop", 12, 4))
	k.send(t, sid, "What is the capital of France?")
	w.turnEnd()
	var p core.SessionPayload
	_ = w.next(core.EventSessionUpdated).Decode(&p)
	if p.Session.Title != "Capital of France" {
		t.Fatalf("title %q", p.Session.Title)
	}
	reqs := k.fake.Requests()
	var b1, b2 struct{ Model string }
	_ = json.Unmarshal(reqs[1].Body, &b1)
	_ = json.Unmarshal(reqs[2].Body, &b2)
	if len(reqs) != 3 || b1.Model != "gpt-fast" || b2.Model != "gpt-spare" || reqs[2].Header.Get("Authorization") != "Bearer sk-spare" {
		t.Fatalf("%d requests: title on %q then %q", len(reqs), b1.Model, b2.Model)
	}
}
