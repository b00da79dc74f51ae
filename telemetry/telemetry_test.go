package telemetry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	core "github.com/foya-dev/foya/core/telemetry"
)

// scrapeNames records one value in every instrument and returns the metric
// families /metrics serves.
func scrapeNames(t *testing.T) []string {
	t.Helper()
	tel, err := Setup(context.Background(), Config{Env: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close()
	for m := range core.NumMetrics {
		in := core.Instruments[m]
		switch {
		case in.Gauge:
			core.Observe(m, func() float64 { return 1 })
		case in.Histogram:
			core.Record(m, 0.5, core.String("k", "v"))
		default:
			core.Add(m, 1, core.String("k", "v"))
		}
	}
	rec := httptest.NewRecorder()
	tel.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, rec.Body)
	}
	var names []string
	for n := range fams {
		if strings.HasPrefix(n, "foya_") || strings.HasPrefix(n, "gen_ai_") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Every instrument is served on /metrics, and docs/telemetry.md names each
// by its OpenTelemetry and its Prometheus name, and every span.
func TestDocsNameEveryMetricAndSpan(t *testing.T) {
	names := scrapeNames(t)
	if len(names) != int(core.NumMetrics) {
		t.Fatalf("%d families on /metrics for %d instruments: %v", len(names), core.NumMetrics, names)
	}
	doc, err := os.ReadFile("../docs/telemetry.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if !strings.Contains(string(doc), "`"+n+"`") {
			t.Errorf("docs/telemetry.md does not name the Prometheus metric `%s`", n)
		}
	}
	for _, in := range core.Instruments {
		if !strings.Contains(string(doc), "`"+in.Name+"`") {
			t.Errorf("docs/telemetry.md does not name the metric `%s`", in.Name)
		}
	}
	for _, s := range []string{core.SpanTurn, core.SpanChat + " <model>", core.SpanTool + " <tool>", core.SpanMCP, core.SpanHook, core.SpanCompaction} {
		if !strings.Contains(string(doc), "`"+s+"`") {
			t.Errorf("docs/telemetry.md does not name the span `%s`", s)
		}
	}
}

// turnTelemetry is what one turn with one model call and one tool call
// records (see core/engine/telemetry.go).
func turnTelemetry(ctx context.Context) {
	core.Add(core.ActiveTurns, 1)
	tctx, turn := core.Start(ctx, core.SpanTurn, core.String("foya.session.id", "ses_1"), core.String("foya.turn.id", "turn_1"))
	turn.Set(core.String("foya.project.id", "prj_1"), core.String("foya.agent.mode", "execute"), core.String("foya.approval.mode", "ask"))
	for range 2 {
		_, chat := core.Start(tctx, "chat gpt-t", core.String("gen_ai.operation.name", "chat"), core.String("gen_ai.provider.name", "openai"), core.String("gen_ai.request.model", "gpt-t"))
		attrs := []core.Attr{core.String("gen_ai.operation.name", "chat"), core.String("gen_ai.provider.name", "openai"), core.String("gen_ai.request.model", "gpt-t")}
		core.Record(core.OperationDuration, 0.03, attrs...)
		core.Record(core.TimeToFirstToken, 0.002, attrs...)
		chat.Set(core.Int("gen_ai.usage.input_tokens", 120), core.Int("gen_ai.usage.output_tokens", 2000), core.String("gen_ai.response.finish_reasons", "stop"))
		chat.End()
		for _, kind := range []string{"input", "output"} {
			core.Add(core.TokenUsage, 100, core.String("gen_ai.request.model", "gpt-t"), core.String("gen_ai.provider.name", "openai"), core.String("foya.project.id", "prj_1"), core.String("gen_ai.token.type", kind))
		}
	}
	_, tool := core.Start(tctx, "execute_tool bash", core.String("gen_ai.tool.name", "bash"))
	core.Add(core.ToolCalls, 1, core.String("gen_ai.tool.name", "bash"), core.String("foya.tool.outcome", "ok"))
	tool.End()
	core.Add(core.ActiveTurns, -1)
	turn.End()
}

// BenchmarkTurnTelemetryOn is the cost of a turn's spans and metrics with
// the SDK exporting to a local OTLP/HTTP receiver (which discards them).
//
//	go test -run '^$' -bench TurnTelemetry -benchmem ./telemetry
func BenchmarkTurnTelemetryOn(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer srv.Close()
	tel, err := Setup(context.Background(), Config{Endpoint: srv.URL, Env: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	defer tel.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		turnTelemetry(ctx)
	}
}
