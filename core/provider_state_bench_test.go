package core

import "testing"

// BenchmarkClientPayload is the cost of hiding native state from clients
// per event payload resolved: a message without state (the fast path) and
// one with state (decoded, stripped, re-encoded).
func BenchmarkClientPayload(b *testing.B) {
	msg := Message{Role: RoleAssistant, Text: "Here is the plan: read the file, then edit it.", Reasoning: "The user wants the plan.",
		ToolCalls: []ToolCall{{ID: "toolu_1", Name: "read", Input: []byte(`{"path":"main.go"}`)}}}
	plain, _ := NewEvent("ses_1", EventMessageEnd, MessagePayload{Message: msg})
	msg.ProviderState = &ProviderState{Route: "rt_0123456789abcdef0123456789abcdef", Data: make([]byte, 2048)}
	withState, _ := NewEvent("ses_1", EventMessageEnd, MessagePayload{Message: msg})
	b.Run("without_state", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			_ = ClientPayload(&plain)
		}
	})
	b.Run("with_state", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = ClientPayload(&withState)
		}
	})
}
