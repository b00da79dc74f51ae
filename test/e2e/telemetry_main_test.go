package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// The spans a turn with a retried model call, an approved tool call and a
// final answer exports over OTLP/HTTP to a local receiver: one trace, the
// turn at its root, the model calls and the tool call under it, with the
// GenAI attributes; no prompt, reply, tool output or key without
// --otel-capture-content; /metrics agrees with the usage ledger.
func TestTelemetryTurnTrace(t *testing.T) {
	sink := newOTLPSink(t)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "500")
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir(), "--otlp-endpoint", sink.URL)
	telemetryTurn(t, k, fake)
	checkMetricsMatchLedger(t, k)

	var spans []sinkSpan
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if spans = sink.Spans(); hasSpan(spans, "foya.turn") {
			break
		}
	}
	turn := checkTurnTrace(t, spans)
	// The trace crossed the plugin protocol: the provider plugin sent each
	// model request with the traceparent of its model call span.
	chatIDs := map[string]bool{}
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "chat ") {
			chatIDs[s.SpanID] = true
		}
	}
	for i, r := range fake.Requests() {
		tp := strings.Split(r.Header.Get("traceparent"), "-")
		if len(tp) != 4 || tp[1] != turn.TraceID || !chatIDs[tp[2]] {
			t.Fatalf("model request %d: traceparent %q (turn trace %s)", i, r.Header.Get("traceparent"), turn.TraceID)
		}
	}
	noContent(t, "the OTLP export", sink.Raw())
	if !strings.Contains(k.Logs(), "trace_id=") {
		t.Fatalf("no log record carries a trace id:\n%s", k.Logs())
	}
}

func hasSpan(spans []sinkSpan, name string) bool {
	for _, s := range spans {
		if s.Name == name {
			return true
		}
	}
	return false
}

// checkTurnTrace checks the span tree of telemetryTurn's turn.
func checkTurnTrace(t *testing.T, spans []sinkSpan) sinkSpan {
	t.Helper()
	var turn *sinkSpan
	for i := range spans {
		if spans[i].Name == "foya.turn" {
			turn = &spans[i]
		}
	}
	if turn == nil {
		t.Fatalf("no turn span among %s", mustJSON(spans))
	}
	if turn.ParentID != "" || turn.Attrs["foya.turn.status"] != "completed" || turn.Attrs["foya.approval.mode"] == "" || turn.Attrs["foya.session.id"] == "" {
		t.Fatalf("turn span %+v", *turn)
	}
	var chats, tools []sinkSpan
	for _, s := range spans {
		if s.TraceID != turn.TraceID {
			continue
		}
		switch {
		case strings.HasPrefix(s.Name, "chat "):
			chats = append(chats, s)
		case strings.HasPrefix(s.Name, "execute_tool "):
			tools = append(tools, s)
		}
	}
	if len(chats) != 2 || len(tools) != 1 {
		t.Fatalf("%d model call and %d tool call spans in the turn's trace: %s", len(chats), len(tools), mustJSON(spans))
	}
	first, second := chats[0], chats[1]
	if first.Attrs["gen_ai.usage.input_tokens"] != "120" {
		first, second = second, first
	}
	for _, c := range []sinkSpan{first, second} {
		if c.ParentID != turn.SpanID || c.Attrs["gen_ai.operation.name"] != "chat" || c.Attrs["gen_ai.request.model"] != "gpt-t" ||
			c.Attrs["gen_ai.provider.name"] != "openai" || c.Attrs["gen_ai.response.model"] != "gpt-t" || c.Attrs["foya.time_to_first_token"] == "" {
			t.Fatalf("model call span %+v (turn %s)", c, turn.SpanID)
		}
	}
	if first.Attrs["gen_ai.usage.output_tokens"] != "15" || first.Attrs["gen_ai.usage.cache_read.input_tokens"] != "40" ||
		first.Attrs["gen_ai.response.finish_reasons"] != "tool_calls" || strings.Join(first.Events, ",") != "gen_ai.retry" {
		t.Fatalf("first model call (retried, tool call) %+v", first)
	}
	if second.Attrs["gen_ai.usage.input_tokens"] != "160" || second.Attrs["gen_ai.response.finish_reasons"] != "stop" {
		t.Fatalf("second model call %+v", second)
	}
	tool := tools[0]
	if tool.ParentID != turn.SpanID || tool.Name != "execute_tool bash" || tool.Attrs["gen_ai.tool.name"] != "bash" ||
		tool.Attrs["foya.approval.decided_by"] != "user" || tool.Attrs["foya.approval.decision"] != "approved" ||
		tool.Attrs["foya.approval.wait"] == "" || tool.Attrs["foya.tool.outcome"] != "ok" || tool.Attrs["foya.tool.class"] != "write" {
		t.Fatalf("tool call span %+v", tool)
	}
	return *turn
}

// /metrics requires the kernel's token like every route.
func TestTelemetryMetricsNeedToken(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	req, _ := http.NewRequest(http.MethodGet, k.url()+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer wrong")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/metrics with a wrong token: %d", resp.StatusCode)
	}
	fams := scrapeMetrics(t, k)
	if len(fams) == 0 {
		t.Fatal("no metric families")
	}
}

// With --otel-capture-content the prompt, the reply and the tool's
// arguments and output are on the spans; the API key still is not.
func TestTelemetryCaptureContent(t *testing.T) {
	sink := newOTLPSink(t)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir(), "--otlp-endpoint", sink.URL, "--otel-capture-content")
	telemetryTurn(t, k, fake)
	want := []string{"PROMPT-MARKER", telOutput, "REPLY-MARKER"}
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		raw := string(sink.Raw())
		missing := false
		for _, w := range want {
			missing = missing || !strings.Contains(raw, w)
		}
		if !missing && hasSpan(sink.Spans(), "foya.turn") {
			break
		}
	}
	raw := string(sink.Raw())
	for _, w := range want {
		if !strings.Contains(raw, w) {
			t.Errorf("captured content lacks %q", w)
		}
	}
	if strings.Contains(raw, telKey) || strings.Contains(raw, "SECRET-KEY") {
		t.Fatal("the API key was exported")
	}
}
