package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// TestACPMCPControl drives a session's MCP servers from an ACP client:
// /mcp lists them with their live status, disables and enables one for the
// session, restarts one, answers unknown commands with the usage; none of
// these starts a turn. The agent offers /mcp in available_commands_update,
// and a client that presents notices hears of status changes made by
// another client.
func TestACPMCPControl(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	o.addTestMCPServer(t, k)
	st, _ := waitMCPStatus(t, k, "files", "READY")
	proj := filepath.Join(t.TempDir(), "proj")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	p := startACP(t, "--addr", k.addr)
	p.call("initialize", map[string]any{"protocolVersion": 1,
		"clientCapabilities": map[string]any{"session": map[string]any{"notices": map[string]any{}}}}, nil)
	mark := p.mark()
	var ns struct{ SessionID string }
	p.call("session/new", map[string]any{"cwd": proj, "mcpServers": []any{}}, &ns)
	sid := ns.SessionID
	p.waitFor(mark, "available commands with /mcp", func(u map[string]any) bool {
		if u["sessionUpdate"] != "available_commands_update" {
			return false
		}
		cmds, _ := u["availableCommands"].([]any)
		return slices.ContainsFunc(cmds, func(c any) bool {
			m, _ := c.(map[string]any)
			in, _ := m["input"].(map[string]any)
			return m["name"] == "mcp" && in["hint"] != nil
		})
	})

	command := func(text string) string {
		t.Helper()
		mark := p.mark()
		var res struct{ StopReason string }
		m := p.await(p.start("session/prompt", map[string]any{"sessionId": sid,
			"prompt": []any{map[string]any{"type": "text", "text": text}}}), text)
		if m.Error != nil {
			t.Fatalf("%s: %+v", text, m.Error)
		}
		if err := json.Unmarshal(m.Result, &res); err != nil || res.StopReason != "end_turn" {
			t.Fatalf("%s: result %s", text, m.Result)
		}
		return chunks(p.before(mark, m), "agent_message_chunk")
	}
	if out := command("/mcp"); !strings.Contains(out, "**files**: READY") || !strings.Contains(out, "tools") {
		t.Fatalf("/mcp:\n%s", out)
	}
	if out := command("/mcp disable files"); !strings.Contains(out, "disabled for this session") {
		t.Fatalf("/mcp disable:\n%s", out)
	}
	var ses struct {
		Session struct{ DisabledMcpServerIds []string }
	}
	k.gql(t, `query($id: ID!) { session(id: $id) { disabledMcpServerIds } }`, map[string]any{"id": sid}, &ses)
	if !slices.Contains(ses.Session.DisabledMcpServerIds, st.ID) {
		t.Fatalf("disabledMcpServerIds after /mcp disable: %v", ses.Session.DisabledMcpServerIds)
	}
	if out := command("/mcp"); !strings.Contains(out, "**files**: DISABLED for this session") {
		t.Fatalf("/mcp after disable:\n%s", out)
	}
	if out := command("/mcp enable files"); !strings.Contains(out, "enabled for this session") {
		t.Fatalf("/mcp enable:\n%s", out)
	}
	if out := command("/mcp restart files"); !strings.Contains(out, "Restarting files") {
		t.Fatalf("/mcp restart:\n%s", out)
	}
	waitMCPStatus(t, k, "files", "READY")
	if out := command("/mcp restart nope"); !strings.Contains(out, `No MCP server named "nope"`) {
		t.Fatalf("/mcp restart nope:\n%s", out)
	}
	if out := command("/mcp frobnicate files"); !strings.Contains(out, "Unknown /mcp command frobnicate") || !strings.Contains(out, "/mcp login NAME") {
		t.Fatalf("/mcp frobnicate:\n%s", out)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Fatalf("a /mcp command reached the model (%d requests)", n)
	}

	// Another client turns the server off kernel-wide: the ACP client hears it.
	mark = p.mark()
	k.gql(t, `mutation($id: ID!) { updateMcpServer(id: $id, input: {name: "files", transport: STDIO, enabled: false}) { status } }`,
		map[string]any{"id": st.ID}, nil)
	p.waitFor(mark, "a notice that files is disabled", func(u map[string]any) bool {
		return u["sessionUpdate"] == "notice" && u["title"] == "MCP server files: DISABLED"
	})
	k.gql(t, `mutation($id: ID!) { updateMcpServer(id: $id, input: {name: "files", transport: STDIO, enabled: true}) { status } }`,
		map[string]any{"id": st.ID}, nil)
	p.waitFor(mark, "a notice that files is ready again", func(u map[string]any) bool {
		return u["sessionUpdate"] == "notice" && u["title"] == "MCP server files: READY"
	})
}
