package telemetry

import (
	"context"
	"log/slog"
)

// LogHandler wraps h so that a record logged with a context inside a span
// (slog's *Context methods) carries trace_id and span_id.
func LogHandler(h slog.Handler) slog.Handler { return logHandler{h} }

type logHandler struct{ h slog.Handler }

func (l logHandler) Enabled(ctx context.Context, lv slog.Level) bool { return l.h.Enabled(ctx, lv) }

func (l logHandler) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil {
		if t, s := IDs(ctx); t != "" {
			r = r.Clone()
			r.AddAttrs(slog.String("trace_id", t), slog.String("span_id", s))
		}
	}
	return l.h.Handle(ctx, r)
}

func (l logHandler) WithAttrs(as []slog.Attr) slog.Handler { return logHandler{l.h.WithAttrs(as)} }
func (l logHandler) WithGroup(name string) slog.Handler    { return logHandler{l.h.WithGroup(name)} }
