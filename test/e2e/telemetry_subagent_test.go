//go:build linux

package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// A sub-agent's turn (the task tool) is a trace of its own whose turn span
// links the parent's execute_tool task span.
func TestTelemetrySubAgentLinked(t *testing.T) {
	sink := newOTLPSink(t)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir(), "--otlp-endpoint", sink.URL)
	sid := k.session(t, fake.BaseURL(), "", "BYPASS")
	fake.Enqueue(
		toolCall("t1", "task", map[string]any{"prompt": "look around"}),
		openaitest.TextStream("gpt-t", "child done"),
		openaitest.TextStream("gpt-t", "all done"))
	k.sendMessage(t, sid, "delegate")
	k.waitEvent(t, sid, "turn_finished")
	var turns []sinkSpan
	var task *sinkSpan
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		turns, task = nil, nil
		for _, s := range sink.Spans() {
			switch {
			case s.Name == "foya.turn":
				turns = append(turns, s)
			case s.Name == "execute_tool task":
				task = &s
			}
		}
		if len(turns) == 2 && task != nil {
			break
		}
	}
	if len(turns) != 2 || task == nil {
		t.Fatalf("turns %s, task span %v", mustJSON(turns), task)
	}
	parent, child := turns[0], turns[1]
	if child.Attrs["foya.session.parent_id"] == "" {
		parent, child = child, parent
	}
	if child.Attrs["foya.session.parent_id"] != sid || child.TraceID == parent.TraceID || task.TraceID != parent.TraceID ||
		!slices.Contains(child.Links, task.SpanID) || !strings.HasPrefix(task.Attrs["foya.tool.class"], "kernel") {
		t.Fatalf("parent turn %+v\nchild turn %+v\ntask %+v", parent, child, *task)
	}
}
