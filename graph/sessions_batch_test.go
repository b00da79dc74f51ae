package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
)

// TestSessionPageFieldsBatched: the Session fields resolved for a whole
// list at once (children, usage, project, route) give each session of a
// page what asking for that session alone gives.
func TestSessionPageFieldsBatched(t *testing.T) {
	k := newTestKernel(t)
	ctx := context.Background()
	conn := k.createConn(t, map[string]any{"name": "fake", "baseUrl": k.fake.BaseURL(), "models": []any{map[string]any{"id": testModel}}})
	var projects []string
	for range 6 { // more than a few: the list of every project is read
		p, err := k.svc.CreateProject(ctx, core.ProjectInput{Path: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		projects = append(projects, p.ID)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	create := func(m core.SessionMeta, more ...core.Event) {
		ev, err := core.NewEvent(m.ID, core.EventSessionCreated, core.SessionPayload{Session: m})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := k.db.Append(ctx, m.ID, 0, append([]core.Event{ev}, more...)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 12 {
		id := fmt.Sprintf("ses_%02d", i)
		m := core.SessionMeta{ID: id, CreatedAt: base.Add(time.Duration(i) * time.Minute), ProjectID: projects[i%len(projects)]}
		if i%3 != 0 {
			m.ConnectionID, m.Model = conn.ID, testModel
		}
		if i == 5 {
			m.ConnectionID = "gone" // a connection deleted since: no route
		}
		var more []core.Event
		if i%2 == 0 {
			cost := float64(i) / 100
			u, err := core.NewEvent(id, core.EventUsage, core.UsagePayload{Usage: core.Usage{InputTokens: int64(i), OutputTokens: 1, TotalTokens: int64(i) + 1, Cost: &cost}, Purpose: "turn"})
			if err != nil {
				t.Fatal(err)
			}
			more = append(more, u)
		}
		create(m, more...)
		for j := range i % 3 {
			create(core.SessionMeta{ID: fmt.Sprintf("%s_c%d", id, j), ParentID: id, CreatedAt: m.CreatedAt.Add(time.Duration(j+1) * time.Second)})
		}
	}
	const fields = `id route project { id path } usage { inputTokens totalTokens cost unpricedTokens } children { id parentId }`
	var page struct{ Sessions []json.RawMessage }
	k.mustDo(t, `{ sessions(first: 10) { `+fields+` } }`, nil, &page)
	if len(page.Sessions) != 10 {
		t.Fatalf("%d sessions, want 10", len(page.Sessions))
	}
	for _, s := range page.Sessions {
		var id struct{ ID string }
		if err := json.Unmarshal(s, &id); err != nil {
			t.Fatal(err)
		}
		var one struct{ Session json.RawMessage }
		k.mustDo(t, `query($id: ID!) { session(id: $id) { `+fields+` } }`, map[string]any{"id": id.ID}, &one)
		if string(one.Session) != string(s) {
			t.Errorf("in the page:\n  %s\nalone:\n  %s", s, one.Session)
		}
	}
}
