package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// offPath is what a model call and a tool call do with telemetry: a span
// started and ended, a counter, a histogram, the span found in the context.
func offPath(ctx context.Context) {
	c, sp := Start(ctx, SpanTurn)
	sp.Set()
	FromContext(c).Event("x")
	sp.End()
	Add(ToolCalls, 1)
	Record(EventAppend, 0.001)
	if On() {
		Add(TokenUsage, 10, String("gen_ai.token.type", "input"))
	}
}

// With no provider installed the calls the services make allocate nothing.
func TestOffAllocatesNothing(t *testing.T) {
	Install(nil)
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() { offPath(ctx) }); n != 0 {
		t.Fatalf("%v allocations per call with telemetry off", n)
	}
	if Traceparent(ctx) != "" || Tracing() || CaptureContent() {
		t.Fatal("off, yet tracing")
	}
}

// BenchmarkOff measures the telemetry calls of one model call with no
// provider installed.
//
//	go test -run '^$' -bench Off -benchmem ./core/telemetry
func BenchmarkOff(b *testing.B) {
	Install(nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		offPath(ctx)
	}
}

// fakeProvider records spans; ids are fixed.
type fakeProvider struct{ started []string }

type fakeSpan struct{}

func (fakeSpan) SetAttrs([]Attr)      {}
func (fakeSpan) Event(string, []Attr) {}
func (fakeSpan) Fail(string)          {}
func (fakeSpan) End()                 {}

func (p *fakeProvider) Tracing() bool        { return true }
func (p *fakeProvider) CaptureContent() bool { return false }
func (p *fakeProvider) Start(ctx context.Context, name string, _ context.Context, _ []Attr) (context.Context, SpanImpl) {
	p.started = append(p.started, name)
	return context.WithValue(ctx, fakeSpan{}, name), fakeSpan{}
}
func (p *fakeProvider) IDs(ctx context.Context) (string, string, bool) {
	if ctx.Value(fakeSpan{}) == nil {
		return "", "", false
	}
	return "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", true
}
func (p *fakeProvider) Add(Metric, float64, []Attr)    {}
func (p *fakeProvider) Record(Metric, float64, []Attr) {}

// Inside a span, log records carry its ids and the traceparent is W3C's.
func TestLogHandlerAndTraceparent(t *testing.T) {
	p := &fakeProvider{}
	Install(p)
	defer Install(nil)
	var buf bytes.Buffer
	log := slog.New(LogHandler(slog.NewTextHandler(&buf, nil)))
	log.InfoContext(context.Background(), "outside")
	ctx, sp := Start(context.Background(), SpanTurn)
	defer sp.End()
	log.With("k", "v").InfoContext(ctx, "inside")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || strings.Contains(lines[0], "trace_id") ||
		!strings.Contains(lines[1], "trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7") || !strings.Contains(lines[1], "k=v") {
		t.Fatalf("log:\n%s", buf.String())
	}
	if tp := Traceparent(ctx); tp != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" {
		t.Fatalf("traceparent %q", tp)
	}
	if !FromContext(ctx).Recording() || FromContext(context.Background()).Recording() {
		t.Fatal("FromContext")
	}
}
