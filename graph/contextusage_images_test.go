package graph_test

import (
	"testing"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// contextUsage after a turn whose input held an image: the image counts
// as in the request the route took (about 1,000 tokens), so the estimate
// is the route's reported input plus what changed since, not zero.
func TestContextUsageWithImages(t *testing.T) {
	k := newTestKernel(t)
	p1, _ := k.uploadFile(t, "dot.png", pngBytes(t))
	p2, _ := k.uploadFile(t, "dot2.png", pngBytes(t))
	tokens := map[int]int{}
	for _, n := range []int{0, 1, 2} {
		sid := k.chatSession(t, nil, "BYPASS")
		w := k.watch(t, sid)
		k.fake.Enqueue(openaitest.TextStream(testModel, "ok"))
		atts := []string{p1, p2}[:n]
		k.mustDo(t, `mutation($s: ID!, $a: [ID!]) { sendMessage(sessionId: $s, input: {text: "look", attachmentIds: $a}) { turnStarted } }`, map[string]any{"s": sid, "a": atts}, nil)
		w.turnEnd()
		var out struct {
			Session struct {
				ContextUsage struct {
					Tokens    int
					Estimated bool
				}
			}
		}
		k.mustDo(t, `query($id: ID!) { session(id: $id) { contextUsage { tokens estimated } } }`, map[string]any{"id": sid}, &out)
		tokens[n] = out.Session.ContextUsage.Tokens
	}
	// The fake reports the same input tokens for each first request, so
	// the three estimates are alike: the images are in both the baseline
	// and the estimate.
	if tokens[0] <= 0 || tokens[1] != tokens[0] || tokens[2] != tokens[0] {
		t.Fatalf("contextUsage tokens by images in the history: %v", tokens)
	}
}
