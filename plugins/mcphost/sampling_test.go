package mcphost

import (
	"strings"
	"testing"

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
