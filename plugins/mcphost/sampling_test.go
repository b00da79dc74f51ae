//lint:file-ignore SA1019 sampling is deprecated by protocol 2026-07-28 (SEP-2577) and still served to servers of older protocol versions during the deprecation window

package mcphost

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foya-dev/foya/core"
)

// What a server may ask to sample is bounded and shaped before any person
// or model sees it.
func TestSamplingOf(t *testing.T) {
	text := func(role, s string) *mcp.SamplingMessage {
		return &mcp.SamplingMessage{Role: mcp.Role(role), Content: &mcp.TextContent{Text: s}}
	}
	ok, err := samplingOf("srv", &mcp.CreateMessageParams{SystemPrompt: "be brief", MaxTokens: 50, Messages: []*mcp.SamplingMessage{
		text("user", "hi"), text("assistant", "hello"),
		{Role: "user", Content: &mcp.ImageContent{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}}},
	}})
	if err != nil || ok.Server != "srv" || ok.SystemPrompt != "be brief" || ok.MaxTokens != 50 || len(ok.Messages) != 3 ||
		ok.Messages[1].Role != core.RoleAssistant || ok.Messages[2].Content[0].Type != "image" || ok.Messages[2].Content[0].MediaType != "image/png" {
		t.Fatalf("%+v %v", ok, err)
	}
	many := make([]*mcp.SamplingMessage, MaxSamplingMessages+1)
	for i := range many {
		many[i] = text("user", "x")
	}
	for name, c := range map[string]struct {
		msgs []*mcp.SamplingMessage
		want string
	}{
		"none":     {nil, "none"},
		"too many": {many, "over the limit"},
		"role":     {[]*mcp.SamplingMessage{text("system", "x")}, "neither user nor assistant"},
		"audio":    {[]*mcp.SamplingMessage{{Role: "user", Content: &mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")}}}, "only text and images"},
		"null":     {[]*mcp.SamplingMessage{nil}, "null"},
		"too big":  {[]*mcp.SamplingMessage{text("user", strings.Repeat("x", MaxSamplingBytes+1))}, "bytes"},
	} {
		if _, err := samplingOf("srv", &mcp.CreateMessageParams{MaxTokens: 10, Messages: c.msgs}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want …%s…", name, err, c.want)
		}
	}
}

type stubSampler struct{ n int }

func (s *stubSampler) Sample(context.Context, core.Sampling) (core.SamplingResult, error) {
	s.n++
	return core.SamplingResult{Text: "ok", Model: "m", FinishReason: "stop"}, nil
}

// A server that keeps asking to sample during one call is stopped after
// MaxSamplesPerCall requests; the session's model is not called again.
func TestSamplesPerCallBounded(t *testing.T) {
	m := New(Config{ElicitationTimeout: time.Minute})
	s := &server{m: m, cfg: core.MCPServerConfig{Name: "loop"}, log: m.log}
	ctx, timer := startCallTimer(context.Background(), time.Minute)
	stub := &stubSampler{}
	call := &inflight{ctx: ctx, asker: nil, sampler: stub, sessionID: "ses_1", timer: timer}
	req := &mcp.CreateMessageRequest{Params: &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "again"}}}}}
	cctx := context.WithValue(context.Background(), inflightKey{}, call)
	for i := range MaxSamplesPerCall {
		res, err := s.sample(cctx, req)
		if err != nil || res.StopReason != "endTurn" || res.Model != "m" {
			t.Fatalf("request %d: %+v %v", i, res, err)
		}
	}
	if _, err := s.sample(cctx, req); err == nil || !strings.Contains(err.Error(), "at most 16 sampling requests") || stub.n != MaxSamplesPerCall {
		t.Fatalf("request %d: %v (%d sampled)", MaxSamplesPerCall+1, err, stub.n)
	}
}
