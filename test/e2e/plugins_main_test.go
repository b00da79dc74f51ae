package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// pluginJSON is one plugin as the kernel lists it.
type pluginJSON = client.PluginsPluginsPluginInfo

// The kernel loads the built-in OpenAI-compatible provider out of process and
// lists models from a real OpenAI-compatible HTTP endpoint.
func TestRefreshModelsThroughBuiltinPlugin(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Response{Body: `{"object":"list","data":[{"id":"gpt-x","object":"model","owned_by":"me"},{"id":"gpt-y","object":"model","owned_by":"me"}]}`})
	data := t.TempDir()
	k := startKernel(t, data)

	pl := k.listPlugins(t)
	// A fresh kernel offers all three provider kinds with no plugin dir.
	if len(pl.Plugins) != 4 {
		t.Fatalf("plugins = %+v, want anthropic, openai, openai-responses and tools", pl.Plugins)
	}
	for _, p := range pl.Plugins {
		if !p.Healthy || !p.Builtin || (p.Name == "tools") != (p.Kind == "tool") || (p.Kind == "provider" && p.Name != p.ProviderKind) {
			t.Fatalf("plugins = %+v", pl.Plugins)
		}
	}
	// Validation names the kinds the plugins offer (running or not). Raw: the check
	// reads the whole response body.
	body, _ := json.Marshal(map[string]any{"query": `mutation { createConnection(input: {name: "x", providerKind: "acme", baseUrl: "http://127.0.0.1:1", models: [{id: "m"}]}) { id } }`})
	resp, err := http.Post(k.url()+"/graphql", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(raw), "BAD_INPUT") || !strings.Contains(string(raw), "the plugins offer: anthropic, openai, openai-responses") {
		t.Fatalf("unknown kind: %s", raw)
	}

	const key = "sk-live-TOPSECRET-91c3"
	c := k.createConnection(t, client.ConnectionInput{
		Name: ptr("fake"), BaseUrl: ptr(fake.BaseURL()), ApiKey: ptr(key),
		Models: []client.ModelInput{{Id: "gpt-x", Capabilities: &client.CapabilitiesInput{ContextWindow: ptr(8000)}}},
	})
	rf := k.refreshModels(t, c)
	ms := rf.RefreshModels.Models
	if len(ms) != 2 || ms[0].Id != "gpt-x" || ms[1].Id != "gpt-y" || ms[0].Capabilities.ContextWindow == nil || *ms[0].Capabilities.ContextWindow != 8000 {
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
	t.Parallel()
	data := t.TempDir()
	dir := filepath.Join(data, "plugins")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	installBuilt(t, "echo", filepath.Join(dir, "foya-echo"))
	k := startKernel(t, data)
	pl := k.listPlugins(t)
	var echo *pluginJSON
	for i, p := range pl.Plugins {
		if p.ProviderKind == "echo" {
			echo = &pl.Plugins[i]
		}
	}
	if echo == nil || !echo.Healthy || echo.Builtin {
		t.Fatalf("plugins = %+v", pl.Plugins)
	}
	c, err := client.CreateConnection(context.Background(), k.client(), client.ConnectionInput{Name: ptr("echo"), ProviderKind: ptr("echo"), BaseUrl: ptr("http://127.0.0.1:1/v1"), Models: []client.ModelInput{{Id: "echo-1"}}})
	if err != nil {
		t.Fatalf("createConnection: %v", err)
	}
	if c.CreateConnection.ProviderKind != "echo" {
		t.Fatalf("connection = %+v", c.CreateConnection)
	}
}

// With --plugin-idle-stop, the built-in plugins stop once idle (listed
// healthy without a pid, no child process left) and a turn with a tool
// call afterwards starts both again transparently.
func TestPluginIdleStopEndToEnd(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir(), "--plugin-idle-stop", "1s")
	sid := k.chatSession(t, fake.BaseURL())
	fake.Enqueue(openaitest.TextStream("gpt-t", "first"))
	k.sendMessage(t, sid, "hi")
	k.waitEvents(t, sid, "turn_finished", 1)
	// The turn started the openai plugin; this listing asks for the tool
	// plugin's sandbox, which starts it (once: the answer is kept).
	k.listPlugins(t)

	deadline := time.Now().Add(60 * time.Second)
	for len(childPIDs(k.cmd.Process.Pid)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("plugin processes still running: %v\n%s", childPIDs(k.cmd.Process.Pid), k.Logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
	out := k.listPlugins(t)
	for _, p := range out.Plugins {
		if p.Pid != nil || !p.Healthy {
			t.Fatalf("stopped plugin listed as %+v", p)
		}
	}

	args, _ := json.Marshal(map[string]any{"command": "printf again"})
	fake.Enqueue(openaitest.Response{Events: []string{
		openaitest.Chunk("gpt-t", map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "c1", "type": "function", "function": map[string]any{"name": "bash", "arguments": string(args)}}}}, ""),
		openaitest.Chunk("gpt-t", map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream("gpt-t", "second"))
	k.sendMessage(t, sid, "again")
	k.waitEvents(t, sid, "turn_finished", 2)
	s := k.getSession(t, sid)
	ms := s.Session.Messages
	if len(ms) != 6 || ms[4].IsError || !strings.Contains(ms[4].Text, "again") || ms[5].Text != "second" {
		t.Fatalf("messages after the idle stop %+v\n%s", ms, k.Logs())
	}
}

// --plugin-idle-stop takes a duration, 0 or more.
func TestPluginIdleStopFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ value, want string }{
		{"-1s", "must not be negative"},
		{"soon", "invalid value"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			out, err := exec.Command(foyaBin, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--plugin-idle-stop", tc.value).CombinedOutput()
			if code := exitCode(err); code != 2 || !strings.Contains(string(out), tc.want) {
				t.Fatalf("--plugin-idle-stop %s: exit %d, %s", tc.value, code, out)
			}
		})
	}
}
