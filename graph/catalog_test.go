package graph_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

const connFields = `id name type providerKind baseUrl authKind apiKeyConfigured videoProtocol order models { id capabilities { contextWindow maxInputTokens maxOutputTokens imageInput toolCalling reasoningEfforts webSearch generation { image video audio } } }`

type connJSON struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	Type             string `json:"type"`
	ProviderKind     string `json:"providerKind"`
	BaseURL          string `json:"baseUrl"`
	AuthKind         string `json:"authKind"`
	APIKeyConfigured bool   `json:"apiKeyConfigured"`
	Order            int    `json:"order"`
	Models           []struct {
		ID           string `json:"id"`
		Capabilities struct {
			ContextWindow *int  `json:"contextWindow"`
			ImageInput    *bool `json:"imageInput"`
			ToolCalling   *bool `json:"toolCalling"`
		} `json:"capabilities"`
	} `json:"models"`
}

const secretKey = "sk-test-SECRET-4f9a2c7e1b"

func (k *testKernel) createConn(t testing.TB, in map[string]any) connJSON {
	t.Helper()
	var out struct{ CreateConnection connJSON }
	k.mustDo(t, `mutation($in: ConnectionInput!) { createConnection(input: $in) { `+connFields+` } }`, map[string]any{"in": in}, &out)
	return out.CreateConnection
}

func TestConnectionValidation(t *testing.T) {
	k := newTestKernel(t)
	const create = `mutation($in: ConnectionInput!) { createConnection(input: $in) { id } }`
	for name, tc := range map[string]struct {
		in   map[string]any
		code string
		want string
	}{
		"unknown type":           {map[string]any{"name": "a", "baseUrl": "http://x/v1", "type": "AUDIO"}, "BAD_INPUT", "AUDIO"},
		"unknown auth kind":      {map[string]any{"name": "a", "baseUrl": "http://x/v1", "authKind": "OAUTH"}, "BAD_INPUT", "OAUTH"},
		"unknown provider kind":  {map[string]any{"name": "a", "baseUrl": "http://x/v1", "providerKind": "martian"}, "BAD_INPUT", "providerKind"},
		"video without protocol": {map[string]any{"name": "a", "baseUrl": "http://x/v1", "type": "VIDEO"}, "BAD_INPUT", "videoProtocol"},
		"video unknown protocol": {map[string]any{"name": "a", "baseUrl": "http://x/v1", "type": "VIDEO", "videoProtocol": "vhs"}, "BAD_INPUT", "videoProtocol"},
		"negative limit": {map[string]any{"name": "a", "baseUrl": "http://x/v1",
			"models": []any{map[string]any{"id": "m", "capabilities": map[string]any{"maxOutputTokens": -1}}}}, "BAD_INPUT", "maxOutputTokens"},
		"output above window": {map[string]any{"name": "a", "baseUrl": "http://x/v1",
			"models": []any{map[string]any{"id": "m", "capabilities": map[string]any{"contextWindow": 1000, "maxOutputTokens": 2000}}}}, "BAD_INPUT", "maxOutputTokens"},
		"input above window": {map[string]any{"name": "a", "baseUrl": "http://x/v1",
			"models": []any{map[string]any{"id": "m", "capabilities": map[string]any{"contextWindow": 1000, "maxInputTokens": 2000}}}}, "BAD_INPUT", "maxInputTokens"},
		"base url not http": {map[string]any{"name": "a", "baseUrl": "ftp://x/v1"}, "BAD_INPUT", "baseUrl"},
		"base url empty":    {map[string]any{"name": "a", "baseUrl": ""}, "BAD_INPUT", "baseUrl"},
		"duplicate models":  {map[string]any{"name": "a", "baseUrl": "http://x/v1", "models": []any{map[string]any{"id": "m"}, map[string]any{"id": "m"}}}, "BAD_INPUT", "duplicate"},
		"empty name":        {map[string]any{"name": "", "baseUrl": "http://x/v1"}, "BAD_INPUT", "name"},
	} {
		t.Run(name, func(t *testing.T) {
			msg := k.mustFail(t, tc.code, create, map[string]any{"in": tc.in})
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("message %q does not name %q", msg, tc.want)
			}
		})
	}
	var list struct{ Connections []connJSON }
	k.mustDo(t, `{ connections { id } }`, nil, &list)
	if len(list.Connections) != 0 {
		t.Fatalf("a rejected connection was stored: %+v", list.Connections)
	}
}

func TestCatalogEndToEnd(t *testing.T) {
	k := newTestKernel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws := dialWS(t, ctx, k.srv.URL)
	defer ws.conn.Close(websocket.StatusNormalClosure, "")
	ws.subscribe(ctx, "k", `subscription { kernelEvents(ready: true) { type sessionId connectionId } }`, nil)
	if m := ws.read(ctx); !strings.Contains(string(m.Payload), `"subscribed"`) {
		t.Fatalf("first kernel event %s, want subscribed", m.Payload)
	}

	t.Setenv("FOYA_TEST_API_KEY", secretKey+"-env")
	openai := k.createConn(t, map[string]any{
		"name": "OpenAI", "providerKind": "fakelist", "baseUrl": "https://api.openai.example/v1", "apiKey": secretKey,
		"models": []any{
			map[string]any{"id": "gpt-a", "capabilities": map[string]any{"contextWindow": 128000, "maxOutputTokens": 16000, "imageInput": true, "toolCalling": true, "reasoningEfforts": []string{"low", "high"}}},
			map[string]any{"id": "gpt-b"},
		},
	})
	if openai.Type != "LANGUAGE" || openai.ProviderKind != "fakelist" || openai.AuthKind != "API_KEY" || !openai.APIKeyConfigured || len(openai.Models) != 2 {
		t.Fatalf("created = %+v", openai)
	}
	if c := openai.Models[1].Capabilities; c.ImageInput != nil || c.ContextWindow != nil {
		t.Fatalf("undeclared capabilities must be null (unknown): %+v", c)
	}
	local := k.createConn(t, map[string]any{"name": "Local", "baseUrl": "http://127.0.0.1:11434/v1", "models": []any{map[string]any{"id": "llama"}}})
	if local.APIKeyConfigured {
		t.Fatal("local endpoint without key reports a key")
	}
	envConn := k.createConn(t, map[string]any{"name": "Env", "baseUrl": "https://other.example/v1", "apiKey": "env:FOYA_TEST_API_KEY", "models": []any{map[string]any{"id": "gpt-a"}}})

	// Update: null apiKey keeps, "" clears.
	var up struct{ UpdateConnection connJSON }
	k.mustDo(t, `mutation($id: ID!) { updateConnection(id: $id, input: {name: "OpenAI main"}) { `+connFields+` } }`, map[string]any{"id": openai.ID}, &up)
	if !up.UpdateConnection.APIKeyConfigured || up.UpdateConnection.Name != "OpenAI main" || len(up.UpdateConnection.Models) != 2 {
		t.Fatalf("update kept = %+v", up.UpdateConnection)
	}
	k.mustDo(t, `mutation($id: ID!) { updateConnection(id: $id, input: {apiKey: ""}) { `+connFields+` } }`, map[string]any{"id": local.ID}, &up)
	if up.UpdateConnection.APIKeyConfigured {
		t.Fatal("empty apiKey did not clear")
	}
	k.mustFail(t, "NOT_FOUND", `mutation { updateConnection(id: "conn_nope", input: {name: "x"}) { id } }`, nil)

	// Reorder: Local first.
	var ro struct{ ReorderConnections []connJSON }
	k.mustDo(t, `mutation($ids: [ID!]!) { reorderConnections(ids: $ids) { id order } }`, map[string]any{"ids": []string{local.ID, openai.ID, envConn.ID}}, &ro)
	if ro.ReorderConnections[0].ID != local.ID || ro.ReorderConnections[0].Order != 0 {
		t.Fatalf("reorder = %+v", ro.ReorderConnections)
	}
	k.mustFail(t, "BAD_INPUT", `mutation($ids: [ID!]!) { reorderConnections(ids: $ids) { id } }`, map[string]any{"ids": []string{local.ID}})

	// Without a default, a new session takes the first language connection by order.
	var s1 struct{ CreateSession sessionJSON }
	k.mustDo(t, `mutation { createSession(input: {}) { `+sessionFields+` } }`, nil, &s1)
	if deref(s1.CreateSession.ConnectionID) != local.ID || deref(s1.CreateSession.Model) != "llama" {
		t.Fatalf("session bound %v/%v, want the first connection", s1.CreateSession.ConnectionID, s1.CreateSession.Model)
	}

	// Defaults.
	var d struct {
		SetDefaultModel struct {
			Language *struct{ ConnectionID, Model string }
		}
	}
	k.mustDo(t, `mutation($c: ID) { setDefaultModel(purpose: LANGUAGE, connectionId: $c, model: "gpt-a") { language { connectionId model } } }`, map[string]any{"c": openai.ID}, &d)
	if d.SetDefaultModel.Language == nil || d.SetDefaultModel.Language.ConnectionID != openai.ID {
		t.Fatalf("default = %+v", d)
	}
	k.mustFail(t, "BAD_INPUT", `mutation($c: ID) { setDefaultModel(purpose: LANGUAGE, connectionId: $c, model: "nope") { language { model } } }`, map[string]any{"c": openai.ID})
	k.mustDo(t, `mutation($c: ID) { setDefaultModel(purpose: FAST, connectionId: $c, model: "gpt-b") { fast { model } } }`, map[string]any{"c": openai.ID}, nil)

	var s2 struct{ CreateSession sessionJSON }
	k.mustDo(t, `mutation { createSession(input: {}) { `+sessionFields+` route } }`, nil, &s2)
	if deref(s2.CreateSession.ConnectionID) != openai.ID || deref(s2.CreateSession.Model) != "gpt-a" {
		t.Fatalf("session did not take the default: %+v", s2.CreateSession)
	}
	// Changing the default never changes existing sessions.
	k.mustDo(t, `mutation($c: ID) { setDefaultModel(purpose: LANGUAGE, connectionId: $c, model: "llama") { language { model } } }`, map[string]any{"c": local.ID}, nil)
	var got struct{ Session sessionJSON }
	k.mustDo(t, `query($id: ID!) { session(id: $id) { `+sessionFields+` } }`, map[string]any{"id": s2.CreateSession.ID}, &got)
	if deref(got.Session.Model) != "gpt-a" {
		t.Fatalf("default change moved an existing session to %v", got.Session.Model)
	}
	// Explicit choices are validated: only language connections, only listed models.
	k.mustFail(t, "BAD_INPUT", `mutation($c: ID) { createSession(input: {connectionId: $c, model: "nope"}) { id } }`, map[string]any{"c": openai.ID})
	img := k.createConn(t, map[string]any{"name": "Images", "type": "IMAGE", "baseUrl": "https://img.example/v1", "models": []any{map[string]any{"id": "painter"}}})
	k.mustFail(t, "BAD_INPUT", `mutation($c: ID) { createSession(input: {connectionId: $c}) { id } }`, map[string]any{"c": img.ID})
	k.mustFail(t, "BAD_INPUT", `mutation($c: ID) { setDefaultModel(purpose: LANGUAGE, connectionId: $c, model: "painter") { language { model } } }`, map[string]any{"c": img.ID})

	// Settings changes are recorded as events.
	var moved struct{ UpdateSession sessionJSON }
	k.mustDo(t, `mutation($id: ID!, $c: ID) { updateSession(id: $id, input: {connectionId: $c, model: "gpt-a"}) { `+sessionFields+` } }`,
		map[string]any{"id": s1.CreateSession.ID, "c": envConn.ID}, &moved)
	if deref(moved.UpdateSession.ConnectionID) != envConn.ID {
		t.Fatalf("moved = %+v", moved.UpdateSession)
	}

	// Route: stable, sensitive to the base URL, never to the key.
	route := func(id string) string {
		var r struct{ Session struct{ Route *string } }
		k.mustDo(t, `query($id: ID!) { session(id: $id) { route } }`, map[string]any{"id": id}, &r)
		return deref(r.Session.Route)
	}
	r1 := route(s2.CreateSession.ID)
	if r1 == "" || r1 != route(s2.CreateSession.ID) {
		t.Fatalf("route %q not stable", r1)
	}
	k.mustDo(t, `mutation($id: ID!) { updateConnection(id: $id, input: {apiKey: "sk-other-key-value"}) { id } }`, map[string]any{"id": openai.ID}, nil)
	if r2 := route(s2.CreateSession.ID); r2 != r1 {
		t.Fatalf("changing the key changed the route: %s → %s", r1, r2)
	}
	// Another origin needs the key again in the same update (issue 28).
	k.mustDo(t, `mutation($id: ID!) { updateConnection(id: $id, input: {baseUrl: "https://proxy.example/v1", apiKey: "sk-other-key-value"}) { id } }`, map[string]any{"id": openai.ID}, nil)
	if r3 := route(s2.CreateSession.ID); r3 == r1 {
		t.Fatal("changing the base URL kept the route")
	}

	// refreshModels: provider lister, keeping declared capabilities; gpt-b disappears.
	k.lister.setModels("gpt-a", "gpt-c")
	var rf struct{ RefreshModels connJSON }
	k.mustDo(t, `mutation($id: ID!) { refreshModels(connectionId: $id) { `+connFields+` } }`, map[string]any{"id": openai.ID}, &rf)
	if len(rf.RefreshModels.Models) != 2 || rf.RefreshModels.Models[0].ID != "gpt-a" || rf.RefreshModels.Models[0].Capabilities.ContextWindow == nil || *rf.RefreshModels.Models[0].Capabilities.ContextWindow != 128000 {
		t.Fatalf("refreshed = %+v", rf.RefreshModels)
	}
	var dm struct {
		DefaultModels struct{ Fast *struct{ Model string } }
	}
	k.mustDo(t, `{ defaultModels { fast { model } } }`, nil, &dm)
	if dm.DefaultModels.Fast != nil {
		t.Fatal("default of a vanished model was kept")
	}
	nolist := k.createConn(t, map[string]any{"name": "NoList", "providerKind": "nolist", "baseUrl": "https://n.example/v1"})
	msg := k.mustFail(t, "UNAVAILABLE", `mutation($id: ID!) { refreshModels(connectionId: $id) { id } }`, map[string]any{"id": nolist.ID})
	if !strings.Contains(msg, "cannot list models") {
		t.Fatalf("message %q", msg)
	}
	k.mustFail(t, "NOT_FOUND", `mutation { refreshModels(connectionId: "conn_nope") { id } }`, nil)

	// Deleting a connection clears its defaults and unbinds its sessions.
	k.mustDo(t, `mutation($id: ID!) { deleteConnection(id: $id) }`, map[string]any{"id": local.ID}, nil)
	k.mustDo(t, `{ defaultModels { language { model } } }`, nil, &dm)
	var s1After struct{ Session sessionJSON }
	k.mustDo(t, `query($id: ID!) { session(id: $id) { `+sessionFields+` } }`, map[string]any{"id": s1.CreateSession.ID}, &s1After)
	if s1After.Session.ConnectionID == nil {
		// s1 moved to envConn above; check a session of the deleted connection instead.
		t.Fatal("session of a surviving connection was unbound")
	}
	var s3 struct{ CreateSession sessionJSON }
	k.mustDo(t, `mutation($c: ID) { createSession(input: {connectionId: $c}) { id } }`, map[string]any{"c": envConn.ID}, &s3)
	k.mustDo(t, `mutation($id: ID!) { deleteConnection(id: $id) }`, map[string]any{"id": envConn.ID}, nil)
	for _, id := range []string{s1.CreateSession.ID, s3.CreateSession.ID} {
		var after struct{ Session sessionJSON }
		k.mustDo(t, `query($id: ID!) { session(id: $id) { `+sessionFields+` route } }`, map[string]any{"id": id}, &after)
		if after.Session.ConnectionID != nil || after.Session.Model != nil {
			t.Fatalf("session %s still bound after its connection was deleted: %+v\n%s", id, after.Session, k.logs.String())
		}
	}
	var evs struct {
		Events []struct {
			Type    string
			Payload json.RawMessage
		}
	}
	k.mustDo(t, `query($id: ID!) { events(sessionId: $id) { type payload } }`, map[string]any{"id": s3.CreateSession.ID}, &evs)
	if last := evs.Events[len(evs.Events)-1]; last.Type != "session_updated" || !strings.Contains(string(last.Payload), "connectionId") {
		t.Fatalf("unbinding not recorded: %+v", evs.Events)
	}
	k.mustFail(t, "NOT_FOUND", `mutation($id: ID!) { deleteConnection(id: $id) }`, map[string]any{"id": envConn.ID})

	// Catalog changes reach kernelEvents.
	sawCatalog := false
	for range 40 {
		m := ws.read(ctx)
		if strings.Contains(string(m.Payload), "catalog_updated") {
			sawCatalog = true
			break
		}
	}
	if !sawCatalog {
		t.Fatal("no catalog_updated on kernelEvents")
	}

	// The key never leaves the kernel: not in responses, events, logs or the database.
	if p := k.lister; p.lastKey != "sk-other-key-value" {
		t.Fatalf("provider got key %q for refresh", p.lastKey)
	}
	for what, text := range map[string]string{"responses": k.responses.String(), "logs": k.logs.String(), "database": k.storedText(t)} {
		for _, key := range []string{secretKey, "sk-other-key-value"} {
			if strings.Contains(text, key) {
				t.Fatalf("API key found in %s", what)
			}
		}
	}
}

func TestNoFieldReturnsAKey(t *testing.T) {
	k := newTestKernel(t)
	var schema struct {
		Schema struct {
			Types []struct {
				Name   string
				Fields []struct{ Name string }
			}
		} `json:"__schema"`
	}
	k.mustDo(t, `{ __schema { types { name fields { name } } } }`, nil, &schema)
	for _, ty := range schema.Schema.Types {
		for _, f := range ty.Fields {
			if l := strings.ToLower(f.Name); strings.Contains(l, "apikey") && f.Name != "apiKeyConfigured" || strings.Contains(l, "secret") {
				t.Errorf("%s.%s may return a key", ty.Name, f.Name)
			}
		}
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func readAll(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
