package host

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/foya-dev/foya/plugins/internal/lines"
)

// logWriter receives a plugin's stderr and re-emits each line through the
// kernel logger with a plugin attribute. JSON lines from slog (time, level,
// msg) or hclog (@timestamp, @level, @message) keep their level and fields;
// other lines (a panic trace, say) are logged as they are.
type logWriter struct {
	log *slog.Logger
}

func newLogWriter(log *slog.Logger, plugin string) *lines.Writer {
	w := &logWriter{log: log.With("plugin", plugin)}
	return lines.NewWriter(w.emit)
}

func (w *logWriter) emit(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	var m map[string]any
	if line[0] != '{' || json.Unmarshal(line, &m) != nil {
		w.log.Info("plugin output", "line", string(line))
		return
	}
	msg, _ := pop(m, "msg", "@message").(string)
	lvl, _ := pop(m, "level", "@level").(string)
	pop(m, "time", "@timestamp")
	attrs := make([]slog.Attr, 0, len(m))
	for k, v := range m {
		if k == "plugin" {
			k = "plugin_attr"
		}
		attrs = append(attrs, slog.Any(k, v))
	}
	w.log.LogAttrs(context.Background(), parseLevel(lvl), msg, attrs...)
}

func pop(m map[string]any, keys ...string) any {
	var v any
	for _, k := range keys {
		if x, ok := m[k]; ok {
			v = x
			delete(m, k)
		}
	}
	return v
}

func parseLevel(s string) slog.Level {
	switch strings.ToLower(s) {
	case "trace", "debug":
		return slog.LevelDebug
	case "warn", "warning":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}
