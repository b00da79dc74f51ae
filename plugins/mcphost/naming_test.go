package mcphost

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foya-dev/foya/core"
)

func TestExposeNames(t *testing.T) {
	long := strings.Repeat("x", 80)
	lists := []serverTools{
		{id: "1", name: "a.b", tools: []*mcp.Tool{{Name: "c"}, {Name: "read file"}}},
		{id: "2", name: "a_b", tools: []*mcp.Tool{{Name: "c"}}},
		{id: "3", name: "long", tools: []*mcp.Tool{{Name: long + "1"}, {Name: long + "2"}}},
	}
	got, clashes := exposeNames(lists)
	want := map[string]string{
		"1/c": "mcp__a_b__c", "1/read file": "mcp__a_b__read_file", "2/c": "mcp__a_b__c_2",
	}
	seen := map[string]bool{}
	for _, n := range got {
		if w, ok := want[n.serverID+"/"+n.tool]; ok && n.exposed != w {
			t.Errorf("%s/%s: %s, want %s", n.serverID, n.tool, n.exposed, w)
		}
		if len(n.exposed) > MaxToolName || seen[n.exposed] {
			t.Errorf("bad or duplicate name %s", n.exposed)
		}
		seen[n.exposed] = true
	}
	if len(got) != 5 || len(clashes) != 1 {
		t.Fatalf("names %+v clashes %v", got, clashes)
	}
	// Deterministic.
	again, _ := exposeNames(lists)
	for i := range got {
		if got[i].exposed != again[i].exposed {
			t.Fatalf("not deterministic: %s vs %s", got[i].exposed, again[i].exposed)
		}
	}
}

func TestConvertResult(t *testing.T) {
	res := convertResult(&mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{
			&mcp.TextContent{Text: "one"},
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte("png")},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "x://r", Text: "resource text"}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "x://b", MIMEType: "application/zip", Blob: []byte{1, 2}}},
		},
		StructuredContent: map[string]any{"k": 1},
	})
	if !res.IsError || len(res.Attachments) != 1 || res.Attachments[0].Name != "mcp-content-2.png" || string(res.Structured) != `{"k":1}` {
		t.Fatalf("result %+v", res)
	}
	for _, s := range []string{"one", "resource text", "x://b: application/zip, 2 bytes"} {
		if !strings.Contains(res.Text, s) {
			t.Fatalf("text %q lacks %q", res.Text, s)
		}
	}
}

func TestSecretsScrubbed(t *testing.T) {
	s := &server{secrets: secretsOf(core.MCPServerConfig{
		URL:     "https://h.example/mcp?key=query-secret&x=ab",
		Env:     []core.KeyValue{{Key: "A", Value: "env-secret"}},
		Headers: []core.KeyValue{{Key: "Authorization", Value: "Bearer tok-secret"}},
	})}
	got := s.scrub(`Post "https://h.example/mcp?key=query-secret": env-secret tok-secret Bearer tok-secret x=ab`)
	for _, secret := range []string{"query-secret", "env-secret", "tok-secret"} {
		if strings.Contains(got, secret) {
			t.Fatalf("%q not scrubbed: %s", secret, got)
		}
	}
	if !strings.Contains(got, "x=ab") { // values under 4 bytes are left alone
		t.Fatalf("scrubbed too much: %s", got)
	}
}
