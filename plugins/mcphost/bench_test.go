package mcphost_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/plugins/mcphost"
	"github.com/foya-dev/foya/plugins/mcphost/mcptest"
	"github.com/foya-dev/foya/plugins/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.MaybeHelper()
	if os.Getenv("FOYA_MCPTEST_PROBE") == "1" {
		serveProbe() // the hostile server of TestConfinedStdioServer
	}
	if os.Getenv("FOYA_MCPTEST_STDIO") == "1" {
		if err := mcptest.ServeStdio(); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// readyManager runs one server and waits until it is ready.
func readyManager(tb testing.TB, c core.MCPServerConfig) *mcphost.Manager {
	tb.Helper()
	m := mcphost.New(mcphost.Config{StateDir: tb.TempDir()})
	tb.Cleanup(m.Close)
	m.Apply(context.Background(), []core.MCPServerConfig{c})
	deadline := time.Now().Add(20 * time.Second)
	for m.State(c.ID).Status != core.MCPReady {
		if time.Now().After(deadline) {
			tb.Fatalf("not ready: %+v", m.State(c.ID))
		}
		time.Sleep(5 * time.Millisecond)
	}
	return m
}

func benchCall(b *testing.B, m *mcphost.Manager, name string) {
	ctx := context.Background()
	if _, err := m.Tools(ctx); err != nil {
		b.Fatal(err)
	}
	req := core.ToolCallRequest{Name: name, Input: []byte(`{"text":"hi"}`)}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := m.Call(ctx, req)
		if err != nil || res.IsError || res.Text != "echo: hi" {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

// One tool call through the manager to a stdio server (a child process).
func BenchmarkCallStdio(b *testing.B) {
	exe, _ := os.Executable()
	m := readyManager(b, core.MCPServerConfig{ID: "s", Name: "s", Transport: core.MCPStdio, Enabled: true, Command: exe,
		Args: []string{"-test.run=^$"}, Env: []core.KeyValue{{Key: "FOYA_MCPTEST_STDIO", Value: "1"}}})
	benchCall(b, m, "mcp__s__echo")
}

// One tool call through the manager to a Streamable HTTP server on loopback.
func BenchmarkCallHTTP(b *testing.B) {
	srv := mcptest.NewServer(nil, "")
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	b.Cleanup(hs.Close)
	m := readyManager(b, core.MCPServerConfig{ID: "h", Name: "h", Transport: core.MCPHTTP, Enabled: true, URL: hs.URL})
	benchCall(b, m, "mcp__h__echo")
	b.StopTimer()
	m.Close()
	hs.CloseClientConnections()
}

// Listing the tools offered to a model (done before every model request):
// one ready server with the test server's tools.
func BenchmarkTools(b *testing.B) {
	exe, _ := os.Executable()
	m := readyManager(b, core.MCPServerConfig{ID: "s", Name: "s", Transport: core.MCPStdio, Enabled: true, Command: exe,
		Args: []string{"-test.run=^$"}, Env: []core.KeyValue{{Key: "FOYA_MCPTEST_STDIO", Value: "1"}}})
	b.ReportAllocs()
	for b.Loop() {
		tools, err := m.Tools(context.Background())
		if err != nil || len(tools) < 5 {
			b.Fatal(fmt.Sprint(len(tools), err))
		}
	}
}
