package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// waitTitleRequest waits until one of the requests the fake received from
// the from-th on is a title request: a new session's title is asked of the
// model after its first turn completes, and it takes the fake's next
// scripted response, so a test that scripts the next turn's response waits
// for it first.
func waitTitleRequest(t testing.TB, fake *openaitest.Server, from int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		rs := fake.Requests()
		for _, r := range rs[min(from, len(rs)):] {
			if strings.Contains(string(r.Body), "Write a title") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no title request among the %d requests since the %d-th", len(rs)-from, from)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
