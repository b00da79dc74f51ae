package graph_test

import (
	"math"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

type usageCostJSON struct {
	TotalTokens    int64
	Cost           *float64
	UnpricedTokens int64
}

func near(a *float64, want float64) bool { return a != nil && math.Abs(*a-want) < 1e-12 }

// Prices declared on a model through the API price its usage: the usage
// event, the session's usage and usageTotals carry the cost; usage of a model
// without prices has a null cost and counts as unpriced.
func TestUsageCostFromPrices(t *testing.T) {
	k := newTestKernel(t)
	prices := map[string]any{"inputPerMillion": 2.5, "cachedInputPerMillion": 1.25, "outputPerMillion": 10}
	sid := k.chatSession(t, map[string]any{"prices": prices}, "BYPASS")

	var conns struct {
		Connections []struct {
			Models []struct {
				Capabilities struct {
					Prices *struct {
						InputPerMillion, OutputPerMillion float64
						CachedInputPerMillion             *float64
						CacheWritePerMillion              *float64
					}
				}
			}
		}
	}
	k.mustDo(t, `{ connections { models { capabilities { prices { inputPerMillion cachedInputPerMillion cacheWritePerMillion outputPerMillion } } } } }`, nil, &conns)
	p := conns.Connections[0].Models[0].Capabilities.Prices
	if p == nil || p.InputPerMillion != 2.5 || p.OutputPerMillion != 10 || !near(p.CachedInputPerMillion, 1.25) || p.CacheWritePerMillion != nil {
		t.Fatalf("prices read back %+v", p)
	}

	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(map[string]any{"role": "assistant", "content": "priced"}, ""),
		chunk(map[string]any{}, "stop"),
		openaitest.UsageChunk(testModel, 1000, 200, 400),
	}})
	k.send(t, sid, "hello")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	// 600 plain input tokens at 2.5, 400 cached at 1.25, 200 output at 10 per million.
	const want = (600*2.5 + 400*1.25 + 200*10) / 1e6

	var got struct {
		Session     struct{ Usage usageCostJSON }
		UsageTotals usageCostJSON
		Events      []struct {
			Type  string
			Usage *usageCostJSON
		}
	}
	const q = `query($s: ID!) { session(id: $s) { usage { totalTokens cost unpricedTokens } }
		usageTotals { totalTokens cost unpricedTokens }
		events(sessionId: $s) { type usage { totalTokens cost unpricedTokens } } }`
	k.mustDo(t, q, map[string]any{"s": sid}, &got)
	if !near(got.Session.Usage.Cost, want) || got.Session.Usage.UnpricedTokens != 0 {
		t.Fatalf("session usage %+v, want cost %v", got.Session.Usage, want)
	}
	if !near(got.UsageTotals.Cost, want) || got.UsageTotals.UnpricedTokens != 0 {
		t.Fatalf("usage totals %+v, want cost %v", got.UsageTotals, want)
	}
	var evCost *usageCostJSON
	for _, ev := range got.Events {
		if ev.Type == "usage" {
			evCost = ev.Usage
		}
	}
	if evCost == nil || !near(evCost.Cost, want) {
		t.Fatalf("usage event %+v", evCost)
	}

	// A connection whose model has no prices: null cost, unpriced tokens.
	conn := k.createConn(t, map[string]any{"name": "free", "baseUrl": k.fake.BaseURL(), "models": []any{map[string]any{"id": testModel}}})
	var s struct{ CreateSession struct{ ID string } }
	k.mustDo(t, `mutation($c: ID) { createSession(input: {connectionId: $c, title: "free", approvalMode: BYPASS}) { id } }`, map[string]any{"c": conn.ID}, &s)
	w2 := k.watch(t, s.CreateSession.ID)
	k.fake.Enqueue(openaitest.TextStream(testModel, "free"))
	k.send(t, s.CreateSession.ID, "hello")
	w2.turnEnd()
	k.mustDo(t, q, map[string]any{"s": s.CreateSession.ID}, &got)
	if got.Session.Usage.Cost != nil || got.Session.Usage.UnpricedTokens != got.Session.Usage.TotalTokens || got.Session.Usage.TotalTokens == 0 {
		t.Fatalf("unpriced session usage %+v", got.Session.Usage)
	}
	if !near(got.UsageTotals.Cost, want) || got.UsageTotals.UnpricedTokens != got.Session.Usage.TotalTokens {
		t.Fatalf("totals with an unpriced part %+v", got.UsageTotals)
	}

	// Prices are validated.
	for _, bad := range []map[string]any{
		{"inputPerMillion": -1, "outputPerMillion": 1},
		{"inputPerMillion": 1, "outputPerMillion": 1e9},
	} {
		msg := k.mustFail(t, "BAD_INPUT", `mutation($in: ConnectionInput!) { createConnection(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"name": "bad", "baseUrl": k.fake.BaseURL(), "models": []any{map[string]any{"id": "m", "capabilities": map[string]any{"prices": bad}}}}})
		if !contains(msg, "prices") {
			t.Fatalf("message %q does not name the prices", msg)
		}
	}
}
