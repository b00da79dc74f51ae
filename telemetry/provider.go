package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	core "github.com/foya-dev/foya/core/telemetry"
)

// Tracing implements core.Provider.
func (t *Telemetry) Tracing() bool { return t.tracer != nil }

// CaptureContent implements core.Provider.
func (t *Telemetry) CaptureContent() bool { return t.capture }

// Start implements core.Provider.
func (t *Telemetry) Start(ctx context.Context, name string, link context.Context, attrs []core.Attr) (context.Context, core.SpanImpl) {
	opts := []trace.SpanStartOption{trace.WithAttributes(kvs(attrs)...)}
	if link != nil {
		if sc := trace.SpanContextFromContext(link); sc.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
			if !trace.SpanContextFromContext(ctx).IsValid() {
				opts = append(opts, trace.WithNewRoot())
			}
		}
	}
	if name == core.SpanTurn {
		opts = append(opts, trace.WithSpanKind(trace.SpanKindServer))
	} else if len(name) > 5 && name[:5] == "chat " {
		opts = append(opts, trace.WithSpanKind(trace.SpanKindClient))
	}
	ctx, s := t.tracer.Start(ctx, name, opts...)
	return ctx, span{s}
}

// IDs implements core.Provider.
func (t *Telemetry) IDs(ctx context.Context) (string, string, bool) {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return "", "", false
	}
	return sc.TraceID().String(), sc.SpanID().String(), sc.IsSampled()
}

// Add implements core.Provider.
func (t *Telemetry) Add(m core.Metric, v float64, attrs []core.Attr) {
	if m >= core.NumMetrics {
		return
	}
	opt := metric.WithAttributes(kvs(attrs)...)
	if c := t.updowns[m]; c != nil {
		c.Add(context.Background(), v, opt)
	} else if c := t.counters[m]; c != nil {
		c.Add(context.Background(), v, opt)
	}
}

// Record implements core.Provider.
func (t *Telemetry) Record(m core.Metric, v float64, attrs []core.Attr) {
	if m >= core.NumMetrics || t.hists[m] == nil {
		return
	}
	t.hists[m].Record(context.Background(), v, metric.WithAttributes(kvs(attrs)...))
}

func kvs(attrs []core.Attr) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(attrs))
	for _, a := range attrs {
		switch a.Kind {
		case core.KindString:
			out = append(out, attribute.String(a.Key, a.Str))
		case core.KindInt:
			out = append(out, attribute.Int64(a.Key, a.Num))
		case core.KindFloat:
			out = append(out, attribute.Float64(a.Key, a.Flt))
		case core.KindBool:
			out = append(out, attribute.Bool(a.Key, a.Num != 0))
		}
	}
	return out
}

type span struct{ s trace.Span }

func (s span) SetAttrs(attrs []core.Attr) { s.s.SetAttributes(kvs(attrs)...) }

func (s span) Event(name string, attrs []core.Attr) {
	s.s.AddEvent(name, trace.WithAttributes(kvs(attrs)...))
}

func (s span) Fail(desc string) { s.s.SetStatus(codes.Error, desc) }

func (s span) End() { s.s.End() }
