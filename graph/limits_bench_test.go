package graph_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// BenchmarkSessionMessagesQuery reads a 100-message session through POST
// /graphql: the path every request bound sits on (body read, cost, field
// and response interceptors, error presenter).
func BenchmarkSessionMessagesQuery(b *testing.B) {
	k := newTestKernel(b)
	sid := k.chatSession(b, nil, "BYPASS")
	w := k.watch(b, sid)
	text := strings.Repeat("word ", 200)
	for i := range 50 {
		k.fake.Enqueue(openaitest.TextStream(testModel, fmt.Sprint("reply ", i, " ", text)))
		k.send(b, sid, text)
		w.turnEnd()
	}
	q := `query($s: ID!) { session(id: $s) { id title messages { seq role text toolCalls { id name } } } }`
	vars := map[string]any{"s": sid}
	b.ResetTimer()
	for range b.N {
		k.mustDo(b, q, vars, nil)
	}
}
