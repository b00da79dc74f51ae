//go:build linux

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// BenchmarkTerminalOutputSubscriber measures new terminal output through
// the real kernel: a writeTerminal mutation sends one byte to a confined
// `cat` terminal (started by the fake model with terminal_start), and the
// clock stops when a sessionEvents subscriber on the kernel's WebSocket
// receives it as a terminal_output event. It includes the HTTP request,
// the trip through cat and the WebSocket frame.
func BenchmarkTerminalOutputSubscriber(b *testing.B) {
	ctx := context.Background()
	fake := openaitest.New(b)
	k := startKernel(b, b.TempDir())
	proj := filepath.Join(b.TempDir(), "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		b.Fatal(err)
	}
	conn := k.createConnection(b, client.ConnectionInput{Name: ptr("fake"), BaseUrl: ptr(fake.BaseURL()), ApiKey: ptr("sk-x"), Models: []client.ModelInput{{Id: "gpt-t"}}})
	sid := k.createSession(b, client.CreateSessionInput{ConnectionId: ptr(conn), Title: ptr("bench"), ApprovalMode: ptr(client.ApprovalModeBypass), ProjectId: ptr(k.createProject(b, proj).Id)})
	fake.Enqueue(toolCall("b1", "terminal_start", map[string]any{"command": "cat"}), openaitest.TextStream("gpt-t", "ok"))
	k.sendMessage(b, sid, "start cat")
	var id string
	for deadline := time.Now().Add(30 * time.Second); id == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("no terminal:\n%s", k.Logs())
		}
		r, err := client.SessionTerminals(ctx, k.client(), sid)
		if err != nil {
			b.Fatal(err)
		}
		if len(r.Session.Terminals) == 1 {
			id = r.Session.Terminals[0].Id
		}
	}
	sub, err := k.client().SessionEvents(ctx, sid, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Close()
	c := k.client()
	for b.Loop() {
		if _, err := client.WriteTerminal(ctx, c, sid, id, "z"); err != nil {
			b.Fatal(err)
		}
		for ev := range sub.Events {
			if o := ev.Data.SessionEvents.TerminalOutput; o != nil && o.TerminalId == id {
				break
			}
		}
	}
}
