package cluster

import (
	"encoding/json"
	"io"
	"log/slog"
)

func slogDiscard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
