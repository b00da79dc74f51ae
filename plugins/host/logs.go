package host

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
)

// logWriter receives a plugin's stderr and re-emits each line through the
// kernel logger with a plugin attribute. JSON lines from slog (time, level,
// msg) or hclog (@timestamp, @level, @message) keep their level and fields;
// other lines (a panic trace, say) are logged as they are.
type logWriter struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

func newLogWriter(log *slog.Logger, plugin string) *logWriter {
	return &logWriter{log: log.With("plugin", plugin)}
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.emit(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 { // a runaway line without newline
		w.emit(w.buf)
		w.buf = w.buf[:0]
	}
	return len(p), nil
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
