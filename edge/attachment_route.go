package edge

import (
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/graph"
)

// AttachmentRoute is the pattern of an attachment's bytes (docs/web.md):
// GET /attachments/{id} answers the stored file, HEAD its headers, a Range
// request part of it.
const AttachmentRoute = "/attachments/{id}"

// inlineTypes are the media types a browser may show in place: raster
// images and videos, which run no script. Anything else (HTML, SVG, PDF,
// text, unknown) is sent as application/octet-stream to be saved, never
// rendered on the kernel's origin.
var inlineTypes = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true,
	"video/mp4": true, "video/webm": true, "video/quicktime": true,
}

type attachmentHandler struct {
	engine *engine.Engine
	log    *slog.Logger
}

func (h attachmentHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isUpgrade(r) {
		writeCodedError(w, http.StatusBadRequest, core.CodeBadInput, "the attachment route is a plain GET (no WebSocket)")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeCodedError(w, http.StatusMethodNotAllowed, core.CodeBadInput, "the attachment route answers GET and HEAD only")
		return
	}
	id := r.PathValue("id")
	if !strings.HasPrefix(id, "att_") || len(id) > 128 || strings.ContainsAny(id, "/\x00") {
		writeCodedError(w, http.StatusBadRequest, core.CodeBadInput, "the attachment route is /attachments/<attachment id, att_…>")
		return
	}
	a, f, err := h.engine.OpenAttachment(r.Context(), id)
	if err != nil {
		var ce *core.Error
		if errors.As(err, &ce) {
			writeCodedError(w, exportStatus(ce.Code), ce.Code, graph.ClipKernelMessage(ce.Message))
			return
		}
		h.log.Error("open attachment", "attachment_id", id, "err", err)
		writeCodedError(w, http.StatusInternalServerError, core.CodeInternal, "internal error; see the kernel log")
		return
	}
	defer f.Close()
	hd := w.Header()
	disposition, mediaType := "inline", a.MediaType
	if !inlineTypes[mediaType] || r.URL.Query().Get("download") != "" {
		disposition = "attachment"
	}
	if !inlineTypes[mediaType] {
		mediaType = "application/octet-stream"
	}
	hd.Set("Content-Type", mediaType)
	hd.Set("Content-Disposition", contentDisposition(disposition, a.Name))
	hd.Set("X-Content-Type-Options", "nosniff")
	// Even an inline file is a document of its own: no script, no
	// requests, no same-origin access, wherever a browser opens it.
	hd.Set("Content-Security-Policy", "default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'; sandbox")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	// An attachment never changes: its id names one stored file.
	hd.Set("Cache-Control", "private, max-age=31536000, immutable")
	hd.Set("ETag", `"`+a.SHA256+`"`)
	http.ServeContent(w, r, "", time.Time{}, f) // Range, HEAD, If-None-Match
}

// contentDisposition names the file for a browser: the name as given in
// UTF-8 (RFC 6266 filename*), with quotes and control characters dropped.
func contentDisposition(disposition, name string) string {
	clean := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\\' {
			return -1
		}
		return r
	}, name)
	if clean == "" {
		clean = "attachment"
	}
	if v := mime.FormatMediaType(disposition, map[string]string{"filename": clean}); v != "" {
		return v
	}
	return disposition
}
