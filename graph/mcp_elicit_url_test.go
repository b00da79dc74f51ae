package graph_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foya-dev/foya/plugins/mcphost"
)

// connectServer is a go-sdk MCP server over HTTP whose tool connect
// answers -32042 (URL elicitation required) until the test says the page
// was completed; complete sends notifications/elicitation/complete.
type connectServer struct {
	url       string
	connected atomic.Bool
	calls     atomic.Int32
	session   atomic.Pointer[mcp.ServerSession]
}

func newConnectServer(t *testing.T) *connectServer {
	t.Helper()
	cs := &connectServer{}
	server := mcp.NewServer(&mcp.Implementation{Name: "connect", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "connect"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		n := cs.calls.Add(1)
		if cs.connected.Load() {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("connected on call %d", n)}}}, nil, nil
		}
		cs.session.Store(req.Session)
		return nil, nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{
			Mode: "url", Message: "Connect your Example account", URL: "https://example.com/connect", ElicitationID: fmt.Sprintf("conn-%d", n),
		}})
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	cs.url = hs.URL
	return cs
}

// A call the server answers with -32042 shows its page as a URL question
// on the calling session; once accepted and completed (the server's
// notifications/elicitation/complete) the call is made again and its
// result is the tool's. Declined, the tool answers the model why; a
// completion that never comes ends with the elicitation timeout.
func TestMCPURLElicitationRequired(t *testing.T) {
	t.Parallel()
	k := newMCPKernelWith(t, func(c *mcphost.Config) { c.ElicitationTimeout = 5 * time.Second })
	srv := newConnectServer(t)
	st := k.createMCP(t, map[string]any{"name": "ex", "transport": "HTTP", "url": srv.url, "timeoutSeconds": 2})
	k.waitStatus(t, st.ID, "READY")
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)

	t.Run("completed", func(t *testing.T) {
		q := askTool(t, k, w, sid, "mcp__ex__connect")
		if el := q.Elicitation; el.Mode != "url" || el.URL != "https://example.com/connect" || el.ElicitationID != "conn-1" || el.Server != "ex" {
			t.Fatalf("url elicitation %+v", el)
		}
		k.mustDo(t, answerMutation, map[string]any{"s": sid, "r": q.RequestID, "a": ""}, nil)
		// Longer than the call's own 2 s timeout: it is paused while the page waits.
		time.Sleep(2500 * time.Millisecond)
		srv.connected.Store(true)
		if err := srv.session.Load().NotifyElicitationComplete(context.Background(), &mcp.ElicitationCompleteParams{ElicitationID: "conn-1"}); err != nil {
			t.Fatal(err)
		}
		w.turnEnd()
		if m := lastToolMessage(t, k.messages(t, sid)); m.IsError || !strings.Contains(m.Text, "connected on call 2") {
			t.Fatalf("tool result %+v", m)
		}
	})
	t.Run("declined", func(t *testing.T) {
		srv.connected.Store(false)
		q := askTool(t, k, w, sid, "mcp__ex__connect")
		k.mustDo(t, answerMutation, map[string]any{"s": sid, "r": q.RequestID, "a": "", "x": "DECLINE"}, nil)
		w.turnEnd()
		if m := lastToolMessage(t, k.messages(t, sid)); !m.IsError || !strings.Contains(m.Text, "the user answered decline") {
			t.Fatalf("tool result %+v", m)
		}
	})
	t.Run("never completed", func(t *testing.T) {
		q := askTool(t, k, w, sid, "mcp__ex__connect")
		k.mustDo(t, answerMutation, map[string]any{"s": sid, "r": q.RequestID, "a": ""}, nil)
		w.turnEnd()
		if m := lastToolMessage(t, k.messages(t, sid)); !m.IsError || !strings.Contains(m.Text, "did not say https://example.com/connect was completed") {
			t.Fatalf("tool result %+v", m)
		}
	})
}
