// Package telemetry is what the kernel's services call to trace and measure
// their work: spans (a turn, a model call, a tool call, an MCP call, a hook
// run, a compaction) and metrics (tokens, cost, durations, gauges). It
// imports only the standard library; the OpenTelemetry implementation lives
// in the top-level telemetry package and is installed by the daemon
// (docs/telemetry.md).
//
// Nothing is installed by default: every call is then a nil check, with no
// allocation (BenchmarkOff). A Provider, once installed, stays for the life
// of the process, like slog's default logger.
package telemetry

import (
	"context"
	"sync/atomic"
	"time"
)

// Kind is the type of an attribute's value.
type Kind uint8

// Attribute kinds.
const (
	KindString Kind = iota
	KindInt
	KindFloat
	KindBool
)

// Attr is one span or metric attribute.
type Attr struct {
	Key  string
	Kind Kind
	Str  string
	Num  int64
	Flt  float64
}

// String is a string attribute.
func String(k, v string) Attr { return Attr{Key: k, Kind: KindString, Str: v} }

// Int is an integer attribute.
func Int(k string, v int64) Attr { return Attr{Key: k, Kind: KindInt, Num: v} }

// Float is a floating-point attribute.
func Float(k string, v float64) Attr { return Attr{Key: k, Kind: KindFloat, Flt: v} }

// Bool is a boolean attribute.
func Bool(k string, v bool) Attr {
	a := Attr{Key: k, Kind: KindBool}
	if v {
		a.Num = 1
	}
	return a
}

// SpanImpl is one started span of a Provider.
type SpanImpl interface {
	SetAttrs(attrs []Attr)
	Event(name string, attrs []Attr)
	// Fail marks the span failed with a short description (never content).
	Fail(desc string)
	End()
}

// Provider implements tracing and metrics (the OpenTelemetry SDK in the
// daemon). attrs slices are not kept after a call returns.
type Provider interface {
	// Tracing reports whether spans are recorded (an exporter is set).
	Tracing() bool
	// CaptureContent reports whether prompts, replies, tool arguments and
	// outputs may be put on spans (--otel-capture-content).
	CaptureContent() bool
	// Start starts a span as a child of ctx's span; link, when it holds a
	// span, is linked (a sub-agent's turn links its parent's tool call).
	Start(ctx context.Context, name string, link context.Context, attrs []Attr) (context.Context, SpanImpl)
	// IDs returns the trace and span ids of ctx's span, hex, or "".
	IDs(ctx context.Context) (traceID, spanID string, sampled bool)
	// Add adds v to a counter or up-down counter.
	Add(m Metric, v float64, attrs []Attr)
	// Record records v in a histogram.
	Record(m Metric, v float64, attrs []Attr)
}

var current atomic.Pointer[providerBox]

type providerBox struct{ p Provider }

// Install makes p the process's provider (nil: none).
func Install(p Provider) {
	if p == nil {
		current.Store(nil)
		return
	}
	current.Store(&providerBox{p})
}

func get() Provider {
	if b := current.Load(); b != nil {
		return b.p
	}
	return nil
}

// On reports whether a provider is installed (metrics are recorded).
// Callers building many attributes check it first.
func On() bool { return current.Load() != nil }

// Tracing reports whether spans are recorded.
func Tracing() bool {
	p := get()
	return p != nil && p.Tracing()
}

// CaptureContent reports whether content may go on spans.
func CaptureContent() bool {
	p := get()
	return p != nil && p.Tracing() && p.CaptureContent()
}

// Span is a started span; its zero value (tracing off) does nothing.
type Span struct{ s SpanImpl }

// Recording reports whether the span is recorded.
func (s Span) Recording() bool { return s.s != nil }

// Set adds attributes.
func (s Span) Set(attrs ...Attr) {
	if s.s != nil {
		s.s.SetAttrs(attrs)
	}
}

// Event adds a timed event (a retry, a fallback, an approval).
func (s Span) Event(name string, attrs ...Attr) {
	if s.s != nil {
		s.s.Event(name, attrs)
	}
}

// Fail marks the span failed; desc is a short reason without content.
func (s Span) Fail(desc string) {
	if s.s != nil {
		s.s.Fail(desc)
	}
}

// End ends the span.
func (s Span) End() {
	if s.s != nil {
		s.s.End()
	}
}

// Start starts a span as a child of ctx's span. With tracing off it
// returns ctx and a zero Span.
func Start(ctx context.Context, name string, attrs ...Attr) (context.Context, Span) {
	return StartLinked(ctx, name, nil, attrs...)
}

// StartLinked is Start with a link to link's span (when it has one).
func StartLinked(ctx context.Context, name string, link context.Context, attrs ...Attr) (context.Context, Span) {
	p := get()
	if p == nil || !p.Tracing() {
		return ctx, Span{}
	}
	c, s := p.Start(ctx, name, link, attrs)
	return context.WithValue(c, spanKey{}, s), Span{s}
}

type spanKey struct{}

// FromContext is the span Start put in ctx (a zero Span when none).
func FromContext(ctx context.Context) Span {
	if ctx == nil || current.Load() == nil {
		return Span{}
	}
	s, _ := ctx.Value(spanKey{}).(SpanImpl)
	return Span{s}
}

// IDs returns the hex trace and span ids of ctx's span, or "".
func IDs(ctx context.Context) (traceID, spanID string) {
	p := get()
	if p == nil || !p.Tracing() {
		return "", ""
	}
	t, s, _ := p.IDs(ctx)
	return t, s
}

// Traceparent is the W3C traceparent header of ctx's span, or "" (for
// propagation to plugins and providers).
func Traceparent(ctx context.Context) string {
	p := get()
	if p == nil || !p.Tracing() {
		return ""
	}
	t, s, sampled := p.IDs(ctx)
	if t == "" {
		return ""
	}
	flags := "00"
	if sampled {
		flags = "01"
	}
	return "00-" + t + "-" + s + "-" + flags
}

// Add adds v to metric m (a counter or an up-down counter).
func Add(m Metric, v float64, attrs ...Attr) {
	if p := get(); p != nil {
		p.Add(m, v, attrs)
	}
}

// Record records v in histogram m.
func Record(m Metric, v float64, attrs ...Attr) {
	if p := get(); p != nil {
		p.Record(m, v, attrs)
	}
}

// Since records the seconds since start in histogram m.
func Since(m Metric, start time.Time, attrs ...Attr) {
	if p := get(); p != nil {
		p.Record(m, time.Since(start).Seconds(), attrs)
	}
}

var gauges [NumMetrics]atomic.Pointer[func() float64]

// Observe makes f the source of gauge m, read when metrics are collected
// (the last call wins).
func Observe(m Metric, f func() float64) {
	if m < NumMetrics {
		gauges[m].Store(&f)
	}
}

// Gauge reads gauge m (false: no source).
func Gauge(m Metric) (float64, bool) {
	if m >= NumMetrics {
		return 0, false
	}
	f := gauges[m].Load()
	if f == nil {
		return 0, false
	}
	return (*f)(), true
}
