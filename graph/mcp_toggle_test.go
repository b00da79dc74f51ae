package graph_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
)

// setSessionMcpServerEnabled turns a kernel-wide server off for one
// session only: its tools leave that session's requests (and calls to them
// are unknown tools) while another session keeps them; on again restores.
func TestMCPSessionToggle(t *testing.T) {
	t.Parallel()
	k := newMCPKernel(t)
	srv := k.createMCP(t, stdioServer(t, "kw"))
	k.waitStatus(t, srv.ID, "READY")
	s1, s2 := k.chatSession(t, nil, "BYPASS"), k.chatSession(t, nil, "BYPASS")
	const toggle = `mutation($s: ID!, $id: ID!, $on: Boolean!) { setSessionMcpServerEnabled(sessionId: $s, serverId: $id, enabled: $on) { id name status } }`
	const disabled = `query($s: ID!) { session(id: $s) { disabledMcpServerIds } }`
	type disabledJSON struct {
		Session struct{ DisabledMcpServerIds []string }
	}

	var out struct{ SetSessionMcpServerEnabled mcpServerJSON }
	k.mustDo(t, toggle, map[string]any{"s": s1, "id": srv.ID, "on": false}, &out)
	if out.SetSessionMcpServerEnabled.ID != srv.ID || out.SetSessionMcpServerEnabled.Status != "READY" {
		t.Fatalf("toggle returned %+v", out.SetSessionMcpServerEnabled)
	}
	var d disabledJSON
	if k.mustDo(t, disabled, map[string]any{"s": s1}, &d); len(d.Session.DisabledMcpServerIds) != 1 || d.Session.DisabledMcpServerIds[0] != srv.ID {
		t.Fatalf("disabled in s1: %+v", d)
	}
	if k.mustDo(t, disabled, map[string]any{"s": s2}, &d); len(d.Session.DisabledMcpServerIds) != 0 {
		t.Fatalf("disabled in s2: %+v", d)
	}

	// offered runs one turn in which the model calls mcp__kw__echo and
	// reports whether the tool was offered and the call ran.
	offered := func(sid string) (bool, bool) {
		t.Helper()
		w := k.watch(t, sid)
		before := len(k.fake.Requests())
		k.fake.Enqueue(callStream("c_echo", "mcp__kw__echo", `{"text":"hi"}`), openaitest_TextStream("ok"))
		k.send(t, sid, "echo")
		w.turnEnd()
		req := k.fake.Requests()[before]
		m := lastToolMessage(t, k.messages(t, sid))
		return bytes.Contains(req.Body, []byte(`"mcp__kw__echo"`)), !m.IsError && strings.Contains(m.Text, "echo: hi")
	}
	if o, ran := offered(s1); o || ran {
		t.Fatalf("off in s1: offered %v, ran %v", o, ran)
	}
	if o, ran := offered(s2); !o || !ran {
		t.Fatalf("s2: offered %v, ran %v", o, ran)
	}
	k.mustDo(t, toggle, map[string]any{"s": s1, "id": srv.ID, "on": true}, nil)
	if k.mustDo(t, disabled, map[string]any{"s": s1}, &d); len(d.Session.DisabledMcpServerIds) != 0 {
		t.Fatalf("after on: %+v", d)
	}
	if o, ran := offered(s1); !o || !ran {
		t.Fatalf("on again in s1: offered %v, ran %v", o, ran)
	}

	k.mustFail(t, "NOT_FOUND", toggle, map[string]any{"s": "ses_missing", "id": srv.ID, "on": false})
	if msg := k.mustFail(t, "NOT_FOUND", toggle, map[string]any{"s": s1, "id": "mcp_missing", "on": false}); !strings.Contains(msg, "mcp_missing") {
		t.Fatalf("unknown server: %q", msg)
	}
	// A server attached to s2 cannot be toggled in s1.
	var att struct{ AttachSessionMcpServer struct{ ID string } }
	k.mustDo(t, `mutation($s: ID!, $in: McpServerInput!) { attachSessionMcpServer(sessionId: $s, input: $in) { id } }`,
		map[string]any{"s": s2, "in": stdioServer(t, "own")}, &att)
	k.mustFail(t, "BAD_INPUT", toggle, map[string]any{"s": s1, "id": att.AttachSessionMcpServer.ID, "on": false})
}

// The kernel-wide servers are bounded (MaxMCPServers), disabled ones
// included; removing one makes room.
func TestMCPServerCountLimit(t *testing.T) {
	t.Parallel()
	k := newMCPKernel(t)
	const create = `mutation($in: McpServerInput!) { createMcpServer(input: $in) { id } }`
	in := func(i int) map[string]any {
		return map[string]any{"name": fmt.Sprintf("s%d", i), "transport": "HTTP", "url": "http://127.0.0.1:1/mcp", "enabled": false}
	}
	var first string
	for i := range core.MaxMCPServers {
		var out struct{ CreateMcpServer struct{ ID string } }
		k.mustDo(t, create, map[string]any{"in": in(i)}, &out)
		if i == 0 {
			first = out.CreateMcpServer.ID
		}
	}
	if msg := k.mustFail(t, "BAD_INPUT", create, map[string]any{"in": in(core.MaxMCPServers)}); !strings.Contains(msg, "limit (MaxMCPServers)") {
		t.Fatalf("over the limit: %q", msg)
	}
	k.mustDo(t, `mutation($id: ID!) { deleteMcpServer(id: $id) }`, map[string]any{"id": first}, nil)
	k.mustDo(t, create, map[string]any{"in": in(core.MaxMCPServers)}, nil)
}
