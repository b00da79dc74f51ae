package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
)

// The guardian's recent context shows what the user and the model said and
// which tools were called, never what a tool returned (file contents).
func TestGuardianContextLeavesOutToolResults(t *testing.T) {
	msgs := []core.Message{
		{Role: core.RoleUser, Text: "read the config"},
		{Role: core.RoleAssistant, Text: "reading", ToolCalls: []core.ToolCall{{ID: "c1", Name: "read", Input: json.RawMessage(`{"path":"config.env"}`)}}},
		{Role: core.RoleTool, ToolName: "read", Text: "DATABASE_PASSWORD=hunter2"},
		{Role: core.RoleSystem, Text: "system detail"},
		{Role: core.RoleUser, Text: strings.Repeat("long ", 2000)},
	}
	got := recentContext(msgs)
	if strings.Contains(got, "hunter2") || strings.Contains(got, "system detail") {
		t.Fatalf("tool result or system text in the guardian's context:\n%s", got)
	}
	for _, want := range []string{"user: read the config", `[calls read {"path":"config.env"}]`, "tool read: (ok)"} {
		if !strings.Contains(got, want) {
			t.Fatalf("context lacks %q:\n%s", want, got)
		}
	}
	if n := len([]rune(got)); n > guardianContextRunes+guardianContextMsgs {
		t.Fatalf("context of %d runes", n)
	}
}

// Key-shaped tokens are removed whatever their source.
func TestGuardianScrubsKeyShapes(t *testing.T) {
	g := &guardian{dataDir: "/var/lib/foya", models: &models{}}
	in := "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz' sk-proj-abcdefghijkl ghp_abcdefghijklmnopqrstuv AKIAABCDEFGHIJKLMNOP cat /var/lib/foya/catalog.json"
	got := g.scrubText(in, nil)
	for _, leak := range []string{"abcdefghijklmnopqrstuvwxyz", "sk-proj-abcdefghijkl", "ghp_abcdefghijklmnopqrstuv", "AKIAABCDEFGHIJKLMNOP", "/var/lib/foya"} {
		if strings.Contains(got, leak) {
			t.Fatalf("%q left in %q", leak, got)
		}
	}
}
