package graph_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/core/mcp"
	"github.com/foya-dev/foya/core/pubsub"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/edge"
	"github.com/foya-dev/foya/plugins/host/hosttest"
	"github.com/foya-dev/foya/plugins/mcphost"
	"github.com/foya-dev/foya/plugins/mcphost/mcptest"
	"github.com/foya-dev/foya/plugins/sandbox"
	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/openai"
	"github.com/foya-dev/foya/providers/openai/openaitest"
	"github.com/foya-dev/foya/storage/artifacts"

	"github.com/foya-dev/foya/internal/testenv"
)

// TestMain lets the test binary double as the stdio MCP test server: the
// kernel under test starts it with FOYA_MCPTEST_STDIO=1 in its env.
func TestMain(m *testing.M) {
	sandbox.MaybeHelper() // STDIO MCP servers run confined under the test binary as helper
	if os.Getenv("FOYA_MCPTEST_STDIO") == "1" {
		if err := mcptest.ServeStdio(); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := testenv.Main(m)
	if err := dropPGTemplate(); err != nil {
		fmt.Fprintln(os.Stderr, "drop the PostgreSQL template database:", err)
		code = max(code, 1)
	}
	os.Exit(code)
}

// mcpKernel is a test kernel whose tool hub holds an MCP manager.
type mcpKernel struct {
	*testKernel
	mcp     *mcp.Service
	host    *mcphost.Manager
	dataDir string
}

func newMCPKernel(t testing.TB) *mcpKernel {
	t.Helper()
	return newMCPKernelWith(t, nil)
}

// newMCPKernelWith is newMCPKernel with the MCP manager's config adjusted.
func newMCPKernelWith(t testing.TB, adjust func(*mcphost.Config)) *mcpKernel {
	t.Helper()
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dataDir := t.TempDir()
	st := openTestStorage(t, dataDir, log)
	db, catStore := st.db, st.catalog
	k := &testKernel{db: db, dbPath: st.dbPath, pgURL: st.pgURL, logs: logs, fake: openaitest.New(t)}
	openaiProvider, _ := hosttest.NewInProcess(t, sdk.ServeConfig{Provider: openai.New(openai.Config{Logger: log})})
	k.providers = &fakeProviders{kinds: map[string]core.Provider{"openai": openaiProvider}}
	cat, err := catalog.New(context.Background(), catalog.Config{
		Store: catStore, Providers: k.providers, Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	broker := pubsub.New(pubsub.Config{Logger: log})
	svc, err := session.New(session.Config{Store: db, Broker: broker, Logger: log, Models: cat, Changes: cat})
	if err != nil {
		t.Fatal(err)
	}
	k.svc, k.catalog = svc, cat
	if k.blobs, err = artifacts.New(filepath.Join(dataDir, "artifacts")); err != nil {
		t.Fatal(err)
	}
	hostCfg := mcphost.Config{
		Logger: log, Version: "test", Backoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, MaxFailures: 3,
		Sandbox: &mcphost.SandboxConfig{DataDir: dataDir}, StateDir: t.TempDir(),
		OnChange: func(id string) {
			broker.PublishKernel(core.KernelEvent{Type: core.KernelCatalogUpdated, McpServerID: id, At: time.Now().UTC()})
		},
	}
	if adjust != nil {
		adjust(&hostCfg)
	}
	host := mcphost.New(hostCfg)
	mcpStore := st.mcp
	mcpSvc, err := mcp.New(context.Background(), mcp.Config{
		Store: mcpStore, Runtime: host, Content: host, Broker: broker, Logger: log,
		SessionExists: func(ctx context.Context, id string) error { _, err := svc.Session(ctx, id); return err },
	})
	if err != nil {
		t.Fatal(err)
	}
	k.engine, err = engine.New(engine.Config{
		Sessions: svc, Catalog: cat, Providers: k.providers, Tools: engine.NewToolHub(map[string]core.ToolRunner{"mcp:servers": host}, log),
		Attachments: db, Blobs: k.blobs, Describe: artifacts.Describe, History: db, ScratchDir: t.TempDir(), Logger: log,
		MaxSteps: 8, StopWait: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	k.srv = httptest.NewServer(edge.NewHandler(edge.Config{Service: svc, Engine: k.engine, Usage: db, Catalog: cat, MCP: mcpSvc, Logger: log}))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		k.engine.Close(ctx)
		mcpSvc.Close()
		host.Close()
		k.srv.CloseClientConnections()
		k.srv.Close()
		db.Close()
		if t.Failed() {
			t.Logf("kernel log:\n%s", logs.String())
		}
	})
	return &mcpKernel{testKernel: k, mcp: mcpSvc, host: host, dataDir: dataDir}
}

const mcpFields = `id name transport command args url envKeys headerKeys enabled status error protocolVersion timeoutSeconds tools { name description readOnly }`

type mcpServerJSON struct {
	ID, Name, Transport, Status string
	Command, URL, Error         *string
	ProtocolVersion             *string
	Args, EnvKeys, HeaderKeys   []string
	Enabled                     bool
	TimeoutSeconds              int
	Tools                       []struct {
		Name        string
		Description *string
		ReadOnly    bool
	}
}

func (s mcpServerJSON) tool(name string) (bool, bool) {
	for _, t := range s.Tools {
		if t.Name == name {
			return true, t.ReadOnly
		}
	}
	return false, false
}

func (k *mcpKernel) createMCP(t testing.TB, in map[string]any) mcpServerJSON {
	t.Helper()
	var out struct{ CreateMcpServer mcpServerJSON }
	k.mustDo(t, `mutation($in: McpServerInput!) { createMcpServer(input: $in) { `+mcpFields+` } }`, map[string]any{"in": in}, &out)
	return out.CreateMcpServer
}

func (k *mcpKernel) mcpServer(t testing.TB, id string) mcpServerJSON {
	t.Helper()
	var out struct{ McpServers []mcpServerJSON }
	k.mustDo(t, `{ mcpServers { `+mcpFields+` } }`, nil, &out)
	for _, s := range out.McpServers {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no MCP server %s in %+v", id, out.McpServers)
	return mcpServerJSON{}
}

// waitMCP polls mcpServers until ok holds for the server (20s at most: a
// bound on a hang, not a timing assertion).
func (k *mcpKernel) waitMCP(t testing.TB, id string, what string, ok func(mcpServerJSON) bool) mcpServerJSON {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := k.mcpServer(t, id)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("MCP server never %s: %+v", what, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (k *mcpKernel) waitStatus(t testing.TB, id, status string) mcpServerJSON {
	t.Helper()
	return k.waitMCP(t, id, "became "+status, func(s mcpServerJSON) bool { return s.Status == status })
}

func callStream(id, name, args string) openaitest.Response {
	return openaitest.Response{Events: []string{chunk(toolCallDelta(0, id, name, args), ""), chunk(map[string]any{}, "tool_calls")}}
}

// stdioServer is the config of the test binary as a stdio MCP server.
func stdioServer(t testing.TB, name string, extraEnv ...map[string]any) map[string]any {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := []any{map[string]any{"key": "FOYA_MCPTEST_STDIO", "value": "1"}}
	for _, e := range extraEnv {
		env = append(env, e)
	}
	return map[string]any{"name": name, "transport": "STDIO", "command": exe, "args": []string{"-test.run=^$"}, "env": env}
}

// lastToolMessage is the newest tool message of the session.
func lastToolMessage(t testing.TB, msgs []msgJSON) msgJSON {
	t.Helper()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "TOOL" {
			return msgs[i]
		}
	}
	t.Fatal("no tool message")
	return msgJSON{}
}

func strOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// waitFile waits until file contains line (20s at most: a bound on a hang).
func waitFile(t testing.TB, file, line string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		raw, _ := os.ReadFile(file)
		if strings.Contains(string(raw), line) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never got %q", file, line)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
