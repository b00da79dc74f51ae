package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// refusalStream is a Chat Completions reply that refuses, as OpenAI sends
// it: refusal deltas instead of content, finish_reason "stop".
func refusalStream() openaitest.Response {
	return openaitest.Response{Events: []string{
		openaitest.Chunk("gpt-t", map[string]any{"role": "assistant", "content": nil, "refusal": ""}, ""),
		openaitest.Chunk("gpt-t", map[string]any{"refusal": "I can't help "}, ""),
		openaitest.Chunk("gpt-t", map[string]any{"refusal": "with that."}, ""),
		openaitest.Chunk("gpt-t", map[string]any{}, "stop"),
		openaitest.UsageChunk("gpt-t", 12, 5, 0),
	}}
}

// A refusal reaches the clients: Message.finishReason and refusal through
// GraphQL, "refused: …" on foya exec's stderr (exit 0: the turn
// completed), and stopReason "refusal" with the explanation over ACP.
func TestRefusalReachesClients(t *testing.T) {
	t.Parallel()
	t.Run("exec", func(t *testing.T) {
		fake := openaitest.New(t)
		k := startKernel(t, t.TempDir())
		var o outputs
		o.addFakeConnection(t, k.addr, fake.BaseURL())
		fake.Enqueue(refusalStream(), openaitest.Completion("gpt-t", "Refused", "stop", 5, 2))
		r := o.runIn(t, t.TempDir(), nil, "exec", "--addr", k.addr, "--no-project", "--approval-mode", "bypass", "do something bad")
		if r.code != 0 || !strings.Contains(r.stderr, "refused: I can't help with that.") {
			t.Fatalf("exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
		}
		var ss struct {
			Sessions []struct {
				Messages []struct{ Role, Text, FinishReason, Refusal string }
			}
		}
		var views []any
		for _, s := range k.listSessions(t, false).Sessions {
			views = append(views, k.getSession(t, s.Id).Session)
		}
		decodeAs(t, map[string]any{"sessions": views}, &ss)
		if len(ss.Sessions) != 1 {
			t.Fatalf("sessions %+v", ss)
		}
		ms := ss.Sessions[0].Messages
		last := ms[len(ms)-1]
		if last.Role != "ASSISTANT" || last.FinishReason != "refusal" || last.Refusal != "I can't help with that." || last.Text != "" {
			t.Fatalf("messages %+v", ms)
		}
		if ms[0].FinishReason != "" {
			t.Fatalf("a user message with a finish reason: %+v", ms[0])
		}
	})
	t.Run("acp", func(t *testing.T) {
		fake := openaitest.New(t)
		k := startKernel(t, t.TempDir())
		var o outputs
		o.addFakeConnection(t, k.addr, fake.BaseURL())
		proj := filepath.Join(t.TempDir(), "proj")
		if err := os.Mkdir(proj, 0o755); err != nil {
			t.Fatal(err)
		}
		p := startACP(t, "--addr", k.addr)
		p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil)
		var ns struct{ SessionID string }
		p.call("session/new", map[string]any{"cwd": proj, "mcpServers": []any{}}, &ns)
		fake.Enqueue(refusalStream(), openaitest.Completion("gpt-t", "Refused", "stop", 5, 2))
		mk := p.mark()
		var pr struct{ StopReason string }
		p.call("session/prompt", map[string]any{"sessionId": ns.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "do something bad"}}}, &pr)
		if pr.StopReason != "refusal" {
			t.Fatalf("stopReason %q", pr.StopReason)
		}
		if got := chunks(p.since(mk), "agent_message_chunk"); !strings.Contains(got, "Refused:** I can't help with that.") {
			t.Fatalf("agent text %q", got)
		}
		// The next prompt, answered, ends normally again (after the title
		// request of the first turn took its answer).
		waitTitles(t, fake, 1)
		fake.Enqueue(openaitest.TextStream("gpt-t", "Fine."))
		p.call("session/prompt", map[string]any{"sessionId": ns.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "something else"}}}, &pr)
		if pr.StopReason != "end_turn" {
			t.Fatalf("second stopReason %q", pr.StopReason)
		}
	})
}
