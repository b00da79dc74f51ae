package engine

import (
	"testing"

	"github.com/foya-dev/foya/core"
)

// BenchmarkClientPayload is the cost of hiding native state from clients
// per event payload resolved: a message without state (the fast path) and
// one with state (decoded, stripped, re-encoded).
func BenchmarkClientPayload(b *testing.B) {
	msg := core.Message{Role: core.RoleAssistant, Text: "Here is the plan: read the file, then edit it.", Reasoning: "The user wants the plan.",
		ToolCalls: []core.ToolCall{{ID: "toolu_1", Name: "read", Input: []byte(`{"path":"main.go"}`)}}}
	plain, _ := core.NewEvent("ses_1", core.EventMessageEnd, core.MessagePayload{Message: msg})
	msg.ProviderState = &core.ProviderState{Route: "rt_0123456789abcdef0123456789abcdef", Data: make([]byte, 2048)}
	withState, _ := core.NewEvent("ses_1", core.EventMessageEnd, core.MessagePayload{Message: msg})
	b.Run("without_state", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			_ = core.ClientPayload(&plain)
		}
	})
	b.Run("with_state", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = core.ClientPayload(&withState)
		}
	})
}
