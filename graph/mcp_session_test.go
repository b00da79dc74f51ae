package graph_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/plugins/mcphost/mcptest"
)

const sessionMCPFields = `id name transport envKeys status error sessionId tools { name readOnly }`

type sessionMCPJSON struct {
	ID, Name, Transport, Status string
	EnvKeys                     []string
	Error, SessionID            *string
	Tools                       []struct {
		Name     string
		ReadOnly bool
	}
}

func (k *mcpKernel) sessionMCP(t testing.TB, sid string) []sessionMCPJSON {
	t.Helper()
	var out struct {
		Session struct{ McpServers []sessionMCPJSON }
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { mcpServers { `+sessionMCPFields+` } } }`, map[string]any{"s": sid}, &out)
	return out.Session.McpServers
}

// waitSessionMCP waits until the session's servers are all READY (20s at
// most: a bound on a hang, not a timing assertion).
func (k *mcpKernel) waitSessionMCP(t testing.TB, sid string) []sessionMCPJSON {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		list := k.sessionMCP(t, sid)
		ready := len(list) > 0
		for _, s := range list {
			ready = ready && s.Status == "READY"
		}
		if ready {
			return list
		}
		if time.Now().After(deadline) {
			t.Fatalf("session MCP servers never READY: %+v", list)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// offeredTools are the tool names of a model request body.
func offeredTools(t testing.TB, body []byte) map[string]bool {
	t.Helper()
	var b struct {
		Tools []struct{ Function struct{ Name string } }
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, tl := range b.Tools {
		out[tl.Function.Name] = true
	}
	return out
}

// pidOf reads the "pid N" line the stdio test server writes at start.
func pidOf(t testing.TB, markFile string) int {
	t.Helper()
	waitFile(t, markFile, "pid ")
	raw, _ := os.ReadFile(markFile)
	for _, l := range strings.Split(string(raw), "\n") {
		if p, ok := strings.CutPrefix(l, "pid "); ok {
			n, _ := strconv.Atoi(p)
			// A confined server has that pid in its own PID namespace:
			// find the process by the mark file in its environment.
			if host := pidByEnv("MCPTEST_MARK=" + markFile); host > 0 {
				return host
			}
			return n
		}
	}
	t.Fatal("no pid")
	return 0
}

// pidByEnv finds the process whose environment holds kv.
func pidByEnv(kv string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		for _, v := range strings.Split(string(env), "\x00") {
			if v == kv {
				return pid
			}
		}
	}
	return 0
}

// TestMCPSessionServers: an MCP server attached to one session is offered
// and callable there only, its secrets are never shown, it can be replaced
// and detached, createSession attaches servers atomically, and deleting
// the session stops its process.
func TestMCPSessionServers(t *testing.T) {
	t.Parallel()
	k := newMCPKernel(t)
	global := k.createMCP(t, stdioServer(t, "shared"))
	k.waitStatus(t, global.ID, "READY")
	sidA := k.chatSession(t, nil, "BYPASS")
	sidB := k.chatSession(t, nil, "BYPASS")
	mark := filepath.Join(t.TempDir(), "mark")
	in := stdioServer(t, "editor",
		map[string]any{"key": "MCPTEST_TOKEN", "value": "s3cret-token"},
		map[string]any{"key": "MCPTEST_MARK", "value": mark})
	const attach = `mutation($s: ID!, $in: McpServerInput!) { attachSessionMcpServer(sessionId: $s, input: $in) { ` + sessionMCPFields + ` } }`
	var out struct{ AttachSessionMcpServer sessionMCPJSON }
	k.mustDo(t, attach, map[string]any{"s": sidA, "in": in}, &out)
	srv := out.AttachSessionMcpServer
	if srv.SessionID == nil || *srv.SessionID != sidA || strings.Join(srv.EnvKeys, ",") != "FOYA_MCPTEST_STDIO,MCPTEST_TOKEN,MCPTEST_MARK" {
		t.Fatalf("attached %+v", srv)
	}
	list := k.waitSessionMCP(t, sidA)
	if len(list) != 1 || list[0].ID != srv.ID || len(list[0].Tools) == 0 {
		t.Fatalf("session A servers %+v", list)
	}
	if got := k.sessionMCP(t, sidB); len(got) != 0 {
		t.Fatalf("session B servers %+v", got)
	}
	// The kernel-wide list does not hold it, and nothing is written to disk.
	var all struct{ McpServers []mcpServerJSON }
	k.mustDo(t, `{ mcpServers { `+mcpFields+` } }`, nil, &all)
	if len(all.McpServers) != 1 || all.McpServers[0].ID != global.ID {
		t.Fatalf("mcpServers %+v", all.McpServers)
	}
	if raw, _ := os.ReadFile(filepath.Join(k.dataDir, "mcp.json")); strings.Contains(string(raw), "s3cret") || strings.Contains(string(raw), "editor") {
		t.Fatalf("mcp.json holds the session server: %s", raw)
	}

	t.Run("offered and callable in its session only", func(t *testing.T) {
		w := k.watch(t, sidA)
		n := len(k.fake.Requests())
		k.fake.Enqueue(callStream("c1", "mcp__editor__env", `{}`), openaitest_TextStream("done"))
		k.send(t, sidA, "env")
		if p := w.turnEnd(); p.Status != core.TurnCompleted {
			t.Fatalf("turn %+v", p)
		}
		tools := offeredTools(t, k.fake.Requests()[n].Body)
		if !tools["mcp__editor__echo"] || !tools["mcp__shared__echo"] {
			t.Fatalf("session A offered %v", tools)
		}
		if m := lastToolMessage(t, k.messages(t, sidA)); m.IsError || !strings.Contains(m.Text, "token_set=true") {
			t.Fatalf("session A call %+v", m)
		}

		w = k.watch(t, sidB)
		n = len(k.fake.Requests())
		k.fake.Enqueue(callStream("c1", "mcp__editor__echo", `{"text":"x"}`), openaitest_TextStream("done"))
		k.send(t, sidB, "echo")
		w.turnEnd()
		tools = offeredTools(t, k.fake.Requests()[n].Body)
		if tools["mcp__editor__echo"] || !tools["mcp__shared__echo"] {
			t.Fatalf("session B offered %v", tools)
		}
		if m := lastToolMessage(t, k.messages(t, sidB)); !m.IsError || !strings.Contains(m.Text, "unknown tool") {
			t.Fatalf("session B call %+v", m)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		k.mustFail(t, "NOT_FOUND", attach, map[string]any{"s": "ses_missing", "in": stdioServer(t, "x")})
		if msg := k.mustFail(t, "CONFLICT", attach, map[string]any{"s": sidB, "in": stdioServer(t, "shared")}); !strings.Contains(msg, "shared") {
			t.Fatalf("clash message %q", msg)
		}
		dis := stdioServer(t, "off")
		dis["enabled"] = false
		k.mustFail(t, "BAD_INPUT", attach, map[string]any{"s": sidB, "in": dis})
		k.mustFail(t, "BAD_INPUT", attach, map[string]any{"s": sidB, "in": map[string]any{"name": "x", "transport": "STDIO"}})
		k.mustFail(t, "CONFLICT", `mutation($id: ID!) { deleteMcpServer(id: $id) }`, map[string]any{"id": srv.ID})
		k.mustFail(t, "NOT_FOUND", `mutation($s: ID!, $id: ID!) { detachSessionMcpServer(sessionId: $s, id: $id) }`, map[string]any{"s": sidB, "id": srv.ID})
	})

	t.Run("re-attaching the same name keeps the server", func(t *testing.T) {
		var again struct{ AttachSessionMcpServer sessionMCPJSON }
		k.mustDo(t, attach, map[string]any{"s": sidA, "in": in}, &again)
		if again.AttachSessionMcpServer.ID != srv.ID || again.AttachSessionMcpServer.Status != "READY" {
			t.Fatalf("re-attached %+v (first %s)", again.AttachSessionMcpServer, srv.ID)
		}
	})

	t.Run("createSession with mcpServers", func(t *testing.T) {
		count := func() int {
			var s struct{ Sessions []struct{ ID string } }
			k.mustDo(t, `{ sessions { id } }`, nil, &s)
			return len(s.Sessions)
		}
		before := count()
		const create = `mutation($in: CreateSessionInput!) { createSession(input: $in) { id mcpServers { ` + sessionMCPFields + ` } } }`
		msg := k.mustFail(t, "BAD_INPUT", create, map[string]any{"in": map[string]any{"mcpServers": []any{
			stdioServer(t, "ok"), map[string]any{"name": "bad", "transport": "STDIO"}}}})
		if !strings.Contains(msg, "input.mcpServers[1].command") {
			t.Fatalf("message %q", msg)
		}
		k.mustFail(t, "BAD_INPUT", create, map[string]any{"in": map[string]any{"mcpServers": []any{stdioServer(t, "twin"), stdioServer(t, "twin")}}})
		var many []any
		for i := range core.MaxSessionMCPServers + 1 {
			many = append(many, stdioServer(t, fmt.Sprintf("s%d", i)))
		}
		if msg := k.mustFail(t, "BAD_INPUT", create, map[string]any{"in": map[string]any{"mcpServers": many}}); !strings.Contains(msg, "MaxSessionMCPServers") {
			t.Fatalf("over the limit: %q", msg)
		}
		if count() != before {
			t.Fatal("a refused createSession created a session")
		}
		var c struct {
			CreateSession struct {
				ID         string
				McpServers []sessionMCPJSON
			}
		}
		k.mustDo(t, create, map[string]any{"in": map[string]any{"mcpServers": []any{stdioServer(t, "one")}}}, &c)
		if len(c.CreateSession.McpServers) != 1 || c.CreateSession.McpServers[0].Name != "one" {
			t.Fatalf("created %+v", c.CreateSession)
		}
		k.waitSessionMCP(t, c.CreateSession.ID)
		k.mustDo(t, `mutation($s: ID!, $id: ID!) { detachSessionMcpServer(sessionId: $s, id: $id) }`,
			map[string]any{"s": c.CreateSession.ID, "id": c.CreateSession.McpServers[0].ID}, nil)
		if got := k.sessionMCP(t, c.CreateSession.ID); len(got) != 0 {
			t.Fatalf("after detach %+v", got)
		}
	})

	t.Run("a sub-agent sees its parent's session servers", func(t *testing.T) {
		w := k.watch(t, sidA)
		n := len(k.fake.Requests())
		k.fake.Enqueue(callStream("c_task", "task", `{"prompt":"echo sub"}`), callStream("c_sub", "mcp__editor__echo", `{"text":"sub"}`),
			openaitest_TextStream("child done"), openaitest_TextStream("parent done"))
		k.send(t, sidA, "delegate")
		if p := w.turnEnd(); p.Status != core.TurnCompleted {
			t.Fatalf("turn %+v", p)
		}
		if tools := offeredTools(t, k.fake.Requests()[n+1].Body); !tools["mcp__editor__echo"] {
			t.Fatalf("child offered %v", tools)
		}
		var out struct {
			Session struct {
				Children []struct {
					Messages []msgJSON
				}
			}
		}
		k.mustDo(t, `query($s: ID!) { session(id: $s) { children { messages { role text isError toolName } } } }`, map[string]any{"s": sidA}, &out)
		if len(out.Session.Children) != 1 {
			t.Fatalf("children %+v", out.Session.Children)
		}
		if m := lastToolMessage(t, out.Session.Children[0].Messages); m.IsError || m.Text != "echo: sub" {
			t.Fatalf("child's MCP call %+v", m)
		}
	})

	t.Run("deleting the session stops its server", func(t *testing.T) {
		pid := pidOf(t, mark)
		k.mustDo(t, `mutation($s: ID!) { deleteSession(id: $s) }`, map[string]any{"s": sidA}, nil)
		deadline := time.Now().Add(20 * time.Second)
		for syscall.Kill(pid, 0) == nil || !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			if time.Now().After(deadline) {
				t.Fatalf("MCP server process %d still runs after its session was deleted", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
		k.mustFail(t, "NOT_FOUND", `mutation($id: ID!) { restartMcpServer(id: $id) { id } }`, map[string]any{"id": srv.ID})
	})

	if strings.Contains(k.responses.String(), "s3cret") || strings.Contains(k.logs.String(), "s3cret") {
		t.Fatal("a response or the log shows a session MCP server's env value")
	}
}

// TestMCPSessionServerHTTP: a Streamable HTTP server attached to a session
// gets its header, and its tools run there.
func TestMCPSessionServerHTTP(t *testing.T) {
	t.Parallel()
	k := newMCPKernel(t)
	obs := &mcptest.Observer{}
	server := mcptest.NewServer(obs, "")
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(func() {
		k.host.Close()
		hs.CloseClientConnections()
		hs.Close()
	})
	sid := k.chatSession(t, nil, "EXPLORE")
	var out struct {
		AttachSessionMcpServer struct {
			ID         string
			HeaderKeys []string
			SessionID  *string
		}
	}
	k.mustDo(t, `mutation($s: ID!, $in: McpServerInput!) { attachSessionMcpServer(sessionId: $s, input: $in) { id headerKeys sessionId } }`,
		map[string]any{"s": sid, "in": map[string]any{"name": "web", "transport": "HTTP", "url": hs.URL,
			"headers": []any{map[string]any{"key": "Authorization", "value": "Bearer session-http-secret"}}}}, &out)
	if strings.Join(out.AttachSessionMcpServer.HeaderKeys, ",") != "Authorization" || out.AttachSessionMcpServer.SessionID == nil {
		t.Fatalf("attached %+v", out.AttachSessionMcpServer)
	}

	// A session holds at most MaxSessionMCPServers; replacing one by name
	// still works at the limit.
	limitSID := k.chatSession(t, nil, "EXPLORE")
	const attachLimited = `mutation($s: ID!, $in: McpServerInput!) { attachSessionMcpServer(sessionId: $s, input: $in) { id } }`
	for i := range core.MaxSessionMCPServers {
		k.mustDo(t, attachLimited, map[string]any{"s": limitSID, "in": map[string]any{"name": fmt.Sprintf("h%d", i), "transport": "HTTP", "url": hs.URL}}, nil)
	}
	if msg := k.mustFail(t, "BAD_INPUT", attachLimited, map[string]any{"s": limitSID, "in": map[string]any{"name": "one-more", "transport": "HTTP", "url": hs.URL}}); !strings.Contains(msg, "detachSessionMcpServer") {
		t.Fatalf("over the limit: %q", msg)
	}
	k.mustDo(t, attachLimited, map[string]any{"s": limitSID, "in": map[string]any{"name": "h0", "transport": "HTTP", "url": hs.URL + "/"}}, nil)
	k.waitSessionMCP(t, sid)
	w := k.watch(t, sid)
	k.fake.Enqueue(callStream("c1", "mcp__web__echo", `{"text":"over http"}`), openaitest_TextStream("ok"))
	k.send(t, sid, "echo")
	w.turnEnd()
	if m := lastToolMessage(t, k.messages(t, sid)); m.IsError || m.Text != "echo: over http" {
		t.Fatalf("echo %+v", m)
	}
	if h := obs.SeenHeaders(); len(h) == 0 || h[len(h)-1] != "Bearer session-http-secret" {
		t.Fatalf("headers seen %q", h)
	}
	if strings.Contains(k.responses.String(), "session-http-secret") || strings.Contains(k.logs.String(), "session-http-secret") {
		t.Fatal("the header value was shown or logged")
	}
}
