package telemetry

import (
	"context"
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
