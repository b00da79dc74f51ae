package core_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
)

func TestRouteKey(t *testing.T) {
	base := core.Connection{
		ID: "conn_1", Name: "OpenAI", Type: core.ConnLanguage, ProviderKind: "openai",
		BaseURL: "https://api.openai.com/v1", AuthKind: core.AuthAPIKey, APIKey: "sk-one",
		Models: catModels("gpt"),
	}
	ref := core.RouteKey(base, "gpt")
	if !strings.HasPrefix(ref, "rt_") || len(ref) != 3+32 {
		t.Fatalf("route key %q has the wrong shape", ref)
	}
	if core.RouteKey(base, "gpt") != ref {
		t.Fatal("route key is not stable")
	}
	// Pinned: persisted per-route state must keep matching across releases.
	if ref != "rt_b4493ed35a867ea3ab3d8523d236d62f" {
		t.Fatalf("route key changed across releases: %s", ref)
	}

	tests := []struct {
		name    string
		modify  func(c *core.Connection)
		model   string
		changes bool
	}{
		{"api key", func(c *core.Connection) { c.APIKey = "sk-two" }, "gpt", false},
		{"env key", func(c *core.Connection) { c.APIKey = "env:K" }, "gpt", false},
		{"name", func(c *core.Connection) { c.Name = "Renamed" }, "gpt", false},
		{"order", func(c *core.Connection) { c.Order = 7 }, "gpt", false},
		{"model list", func(c *core.Connection) { c.Models = nil }, "gpt", false},
		{"trailing slash", func(c *core.Connection) { c.BaseURL += "/" }, "gpt", false},
		{"base url", func(c *core.Connection) { c.BaseURL = "https://proxy.example/v1" }, "gpt", true},
		{"model", func(c *core.Connection) {}, "gpt-mini", true},
		{"provider kind", func(c *core.Connection) { c.ProviderKind = "other" }, "gpt", true},
		{"connection id", func(c *core.Connection) { c.ID = "conn_2" }, "gpt", true},
		{"type", func(c *core.Connection) { c.Type = core.ConnImage }, "gpt", true},
		{"auth kind", func(c *core.Connection) { c.AuthKind = "oauth" }, "gpt", true},
		{"field boundaries", func(c *core.Connection) { c.ID = "conn_1l"; c.Type = "anguage" }, "gpt", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base
			tt.modify(&c)
			got := core.RouteKey(c, tt.model)
			if (got != ref) != tt.changes {
				t.Fatalf("route changed = %v, want %v", got != ref, tt.changes)
			}
			if strings.Contains(got, "sk-") {
				t.Fatal("route key shows the key")
			}
		})
	}
}

func TestRouteStates(t *testing.T) {
	r := core.NewRouteStates()
	if _, ok := r.Get("a"); ok {
		t.Fatal("empty states returned a value")
	}
	r.Set("a", core.RouteState{LastInputTokens: 1, LastOutputTokens: 2, PayloadBaselineTokens: 3})
	got, ok := r.Get("a")
	if !ok || got.LastInputTokens != 1 || got.LastOutputTokens != 2 || got.PayloadBaselineTokens != 3 {
		t.Fatalf("got %+v %v", got, ok)
	}
	r.ClearAll()
	if _, ok := r.Get("a"); ok || r.Len() != 0 {
		t.Fatal("ClearAll kept state")
	}
	var zero core.RouteStates
	zero.Set("b", core.RouteState{})
	if zero.Len() != 1 {
		t.Fatal("zero RouteStates is not usable")
	}
	// Bounded: three times the bound of keys keeps the bound, the newest
	// among them; setting a kept key again drops nothing.
	for i := range 3 * core.MaxRouteStates {
		r.Set(fmt.Sprintf("rt_%d/ses_%d", i%3, i), core.RouteState{LastInputTokens: int64(i)})
	}
	last := fmt.Sprintf("rt_%d/ses_%d", (3*core.MaxRouteStates-1)%3, 3*core.MaxRouteStates-1)
	if got, ok := r.Get(last); r.Len() != core.MaxRouteStates || !ok || got.LastInputTokens != 3*core.MaxRouteStates-1 {
		t.Fatalf("after %d keys: %d kept, the last %v %+v; want %d and the last", 3*core.MaxRouteStates, r.Len(), ok, got, core.MaxRouteStates)
	}
	r.Set(last, core.RouteState{LastInputTokens: 7})
	if got, _ := r.Get(last); r.Len() != core.MaxRouteStates || got.LastInputTokens != 7 {
		t.Fatalf("a kept key set again: %d kept, %+v", r.Len(), got)
	}
}

func catModels(ids ...string) []core.Model {
	out := make([]core.Model, len(ids))
	for i, id := range ids {
		out[i] = core.Model{ID: id}
	}
	return out
}
