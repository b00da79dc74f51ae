package mcphost

import (
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a hostile server asks is refused before it reaches a session's
// events when it is over a bound or names a link that is not http(s).
func TestElicitationOfRefusesGarbage(t *testing.T) {
	props := map[string]any{}
	for i := range MaxElicitationFields + 1 {
		props[fmt.Sprintf("f%d", i)] = map[string]any{"type": "string"}
	}
	for name, p := range map[string]*mcp.ElicitParams{
		"long message": {Message: strings.Repeat("x", MaxElicitationMessage+1)},
		"javascript":   {Mode: "url", Message: "open", URL: "javascript:alert(1)"},
		"file url":     {Mode: "url", Message: "open", URL: "file:///etc/passwd"},
		"long url":     {Mode: "url", Message: "open", URL: "https://example.com/" + strings.Repeat("a", MaxElicitationURL)},
		"huge schema":  {Message: "m", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string", "description": strings.Repeat("d", MaxElicitationSchema)}}}},
		"too many":     {Message: "m", RequestedSchema: map[string]any{"type": "object", "properties": props}},
	} {
		if _, err := elicitationOf("s", p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	q, err := elicitationOf("s", &mcp.ElicitParams{Mode: "url", Message: "sign in", URL: "https://example.com/auth"})
	if err != nil || q.URL != "https://example.com/auth" {
		t.Fatalf("a plain https URL: %+v, %v", q, err)
	}
}
