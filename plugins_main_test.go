package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

type pluginJSON struct {
	Name, Kind, ProviderKind string
	Healthy, Builtin         bool
	Capabilities             []string
}

// The kernel loads the built-in OpenAI-compatible provider out of process and
// lists models from a real OpenAI-compatible HTTP endpoint.
func TestRefreshModelsThroughBuiltinPlugin(t *testing.T) {
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Response{Body: `{"object":"list","data":[{"id":"gpt-x","object":"model","owned_by":"me"},{"id":"gpt-y","object":"model","owned_by":"me"}]}`})
	data := t.TempDir()
	k := startKernel(t, data)

	var pl struct{ Plugins []pluginJSON }
	k.gql(t, `{ plugins { name kind providerKind healthy builtin capabilities } }`, nil, &pl)
	// A fresh kernel offers all three provider kinds with no plugin dir.
	if len(pl.Plugins) != 4 {
		t.Fatalf("plugins = %+v, want anthropic, openai, openai-responses and tools", pl.Plugins)
	}
	for _, p := range pl.Plugins {
		if !p.Healthy || !p.Builtin || (p.Name == "tools") != (p.Kind == "tool") || (p.Kind == "provider" && p.Name != p.ProviderKind) {
			t.Fatalf("plugins = %+v", pl.Plugins)
		}
	}
	// Validation names the kinds the running plugins offer.
	body, _ := json.Marshal(map[string]any{"query": `mutation { createConnection(input: {name: "x", providerKind: "acme", baseUrl: "http://127.0.0.1:1", models: [{id: "m"}]}) { id } }`})
	resp, err := http.Post(k.url()+"/graphql", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(raw), "BAD_INPUT") || !strings.Contains(string(raw), "the running plugins offer: anthropic, openai, openai-responses") {
		t.Fatalf("unknown kind: %s", raw)
	}

	const key = "sk-live-TOPSECRET-91c3"
	var c struct{ CreateConnection struct{ ID string } }
	k.gql(t, `mutation($in: ConnectionInput!) { createConnection(input: $in) { id } }`, map[string]any{"in": map[string]any{
		"name": "fake", "baseUrl": fake.BaseURL(), "apiKey": key,
		"models": []any{map[string]any{"id": "gpt-x", "capabilities": map[string]any{"contextWindow": 8000}}},
	}}, &c)
	var rf struct {
		RefreshModels struct {
			Models []struct {
				ID           string
				Capabilities struct{ ContextWindow *int }
			}
		}
	}
	k.gql(t, `mutation($id: ID!) { refreshModels(connectionId: $id) { models { id capabilities { contextWindow } } } }`, map[string]any{"id": c.CreateConnection.ID}, &rf)
	ms := rf.RefreshModels.Models
	if len(ms) != 2 || ms[0].ID != "gpt-x" || ms[1].ID != "gpt-y" || ms[0].Capabilities.ContextWindow == nil || *ms[0].Capabilities.ContextWindow != 8000 {
		t.Fatalf("models = %+v", ms)
	}
	req := fake.LastRequest()
	if req.Path != "/v1/models" || req.Header.Get("Authorization") != "Bearer "+key {
		t.Fatalf("endpoint saw %s %s auth set: %v", req.Method, req.Path, req.Header.Get("Authorization") != "")
	}

	// The key is stored only in connections.json (0600) and nowhere else.
	fi, err := os.Stat(filepath.Join(data, "connections.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("connections.json: %v %v", fi, err)
	}
	k.stop(t)
	if strings.Contains(k.Logs(), key) {
		t.Fatal("the API key appears in the kernel log")
	}
	db, _ := os.ReadFile(filepath.Join(data, "foya.db"))
	wal, _ := os.ReadFile(filepath.Join(data, "foya.db-wal"))
	if strings.Contains(string(db)+string(wal), key) {
		t.Fatal("the API key appears in the database")
	}
}

// A third party adds a provider by dropping a binary into the plugins
// directory.
func TestThirdPartyProviderPlugin(t *testing.T) {
	data := t.TempDir()
	dir := filepath.Join(data, "plugins")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "foya-echo"), "./providers/echo").CombinedOutput(); err != nil {
		t.Fatalf("build echo: %v\n%s", err, out)
	}
	k := startKernel(t, data)
	var pl struct{ Plugins []pluginJSON }
	k.gql(t, `{ plugins { name kind providerKind healthy builtin capabilities } }`, nil, &pl)
	var echo *pluginJSON
	for i, p := range pl.Plugins {
		if p.ProviderKind == "echo" {
			echo = &pl.Plugins[i]
		}
	}
	if echo == nil || !echo.Healthy || echo.Builtin {
		t.Fatalf("plugins = %+v", pl.Plugins)
	}
	var c struct {
		CreateConnection struct{ ID, ProviderKind string }
	}
	k.gql(t, `mutation { createConnection(input: {name: "echo", providerKind: "echo", baseUrl: "http://127.0.0.1:1/v1", models: [{id: "echo-1"}]}) { id providerKind } }`, nil, &c)
	if c.CreateConnection.ProviderKind != "echo" {
		t.Fatalf("connection = %+v", c.CreateConnection)
	}
}
