package edge

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/graph"
)

// ExportRoute is the pattern of the streamed session export
// (docs/export.md): GET /sessions/{id}/export answers the foya.session
// document as application/jsonl with no size bound.
const ExportRoute = "GET /sessions/{id}/export"

// guardedRoute serves h behind exactly the checks of /graphql: coded
// errors, the browser guard (Host and Origin) and, when the kernel requires
// one, the bearer token in the Authorization header. The plain routes
// (export, attachments) use it.
func guardedRoute(cfg Config, h http.Handler) http.Handler {
	if cfg.Auth != nil {
		h = cfg.Auth.middleware(h)
	}
	return codedErrors(browserGuard(h, cfg.Auth, cfg.OriginPatterns, cfg.HostPatterns))
}

type exportHandler struct {
	engine *engine.Engine
	log    *slog.Logger
}

func (h exportHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The auth middleware lets a WebSocket handshake through to authenticate
	// in connection_init; this route has no WebSocket, so an upgrade is
	// refused here rather than served without the token.
	if isUpgrade(r) {
		writeCodedError(w, http.StatusBadRequest, core.CodeBadInput, "the export route is a plain GET (no WebSocket)")
		return
	}
	if r.Method == http.MethodHead {
		writeCodedError(w, http.StatusMethodNotAllowed, core.CodeBadInput, "the export route answers GET only (the document is made while it is sent)")
		return
	}
	id := r.PathValue("id")
	if id == "" || len(id) > 128 || strings.ContainsAny(id, "/\x00") {
		writeCodedError(w, http.StatusBadRequest, core.CodeBadInput, "the export route is /sessions/<session id>/export")
		return
	}
	// Nothing is written before the first byte of the document, so an error
	// before it (an unknown session, a missing attachment) is a coded
	// answer with its status; after it, the connection is cut short and
	// the document's counts let an import refuse it.
	sw := &exportStartWriter{w: w, start: func() {
		hd := w.Header()
		hd.Set("Content-Type", "application/jsonl; charset=utf-8")
		hd.Set("Content-Disposition", `attachment; filename="`+exportFileName(id)+`.jsonl"`)
		hd.Set("Cache-Control", "no-store")
		hd.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
	}}
	err := h.engine.Archive().Stream(r.Context(), id, sw)
	if err == nil {
		return
	}
	if sw.started {
		h.log.Warn("session export cut short", "session_id", id, "err", err)
		panic(http.ErrAbortHandler) // the client sees a truncated transfer, not a complete document
	}
	var ce *core.Error
	switch {
	case errors.As(err, &ce):
		writeCodedError(w, exportStatus(ce.Code), ce.Code, graph.ClipKernelMessage(ce.Message))
	case r.Context().Err() != nil:
	default:
		h.log.Error("session export failed", "session_id", id, "err", err)
		writeCodedError(w, http.StatusInternalServerError, core.CodeInternal, "internal error; see the kernel log")
	}
}

// exportStatus is the HTTP status of a coded error on a plain HTTP route.
func exportStatus(c core.Code) int {
	switch c {
	case core.CodeNotFound:
		return http.StatusNotFound
	case core.CodeBadInput:
		return http.StatusBadRequest
	case core.CodeUnavailable:
		return http.StatusServiceUnavailable
	case core.CodeConflict:
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

func exportFileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}

// exportStartWriter calls start before the first byte.
type exportStartWriter struct {
	w       http.ResponseWriter
	start   func()
	started bool
}

func (s *exportStartWriter) Write(p []byte) (int, error) {
	if !s.started {
		s.started = true
		s.start()
	}
	return s.w.Write(p)
}
