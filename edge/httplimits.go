package edge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/graph"
)

// requestLimits is the HTTP side of the request bounds, in front of gqlgen's
// transports: a JSON body is read here, within lim.BodyReadTimeout and at
// most lim.MaxBodyBytes (413 BAD_INPUT, before any of it is decoded); a
// multipart body gets UploadReadTimeout and keeps the transport's own size
// limit; a WebSocket connection gets its subscription counter.
//
// Before any of that, adm admits the request or refuses it with 429
// RATE_LIMITED (admission.go).
func requestLimits(next http.Handler, lim Limits, adm *admission) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		adm.admit(w, r, func(w http.ResponseWriter, r *http.Request) {
			if isUpgrade(r) {
				next.ServeHTTP(w, r.WithContext(withConnSubscriptions(r.Context())))
				return
			}
			if r.Method == http.MethodPost && r.Body != nil && r.Body != http.NoBody {
				if isMultipart(r) {
					setReadDeadline(w, UploadReadTimeout)
					if !checkMultipart(w, r, lim) {
						return
					}
				} else {
					ok := readBody(w, r, lim)
					bodyRead(r)
					if !ok {
						return
					}
					release, ok := adm.expensiveBody(w, r, int(r.ContentLength))
					if !ok {
						return
					}
					defer release()
				}
			}
			bodyRead(r)
			next.ServeHTTP(w, r)
		})
	})
}

// codedErrors makes every error response (status 400 and above) of next a
// GraphQL error list whose errors all carry extensions.code and repeat at
// most graph.MaxEchoBytes of the input, whoever wrote it: gqlgen's
// transports, the WebSocket library, the browser guard.
func codedErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &codedWriter{ResponseWriter: w, r: r}
		defer cw.finish()
		next.ServeHTTP(cw, r)
	})
}

func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

func isMultipart(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "multipart/form-data"
}

// setReadDeadline bounds the time left to read the request body; servers
// that cannot (not a net/http connection) keep their own timeouts.
func setReadDeadline(w http.ResponseWriter, d time.Duration) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
}

// readBody replaces r.Body by the request it carries, checked and rebuilt
// by scanRequest (a JSON body: variables within lim.MaxVariablesBytes), or
// answers the request and returns false. A body of another content type is
// left unread for the transports to refuse. Once read, the deadline is
// cleared: an SSE response may then stream for as long as the subscription
// lives.
func readBody(w http.ResponseWriter, r *http.Request, lim Limits) bool {
	if r.ContentLength > lim.MaxBodyBytes {
		writeCodedError(w, http.StatusRequestEntityTooLarge, core.CodeBadInput, tooLargeBody(lim.MaxBodyBytes, r.ContentLength))
		return false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		r.Body = http.MaxBytesReader(w, r.Body, lim.MaxBodyBytes)
		return true
	}
	setReadDeadline(w, lim.BodyReadTimeout)
	body, err := scanRequest(http.MaxBytesReader(w, r.Body, lim.MaxBodyBytes), lim.MaxVariablesBytes)
	var tooLarge *http.MaxBytesError
	var nerr net.Error
	var overVars errVariablesTooLarge
	var bad errBadJSON
	switch {
	case errors.As(err, &overVars):
		writeCodedError(w, http.StatusRequestEntityTooLarge, core.CodeBadInput, overVars.Error())
		return false
	case errors.As(err, &bad):
		writeCodedError(w, http.StatusBadRequest, core.CodeBadInput, graph.ClipMessage(bad.Error()))
		return false
	case errors.As(err, &tooLarge):
		writeCodedError(w, http.StatusRequestEntityTooLarge, core.CodeBadInput, tooLargeBody(lim.MaxBodyBytes, -1))
		return false
	case errors.As(err, &nerr) && nerr.Timeout():
		writeCodedError(w, http.StatusRequestTimeout, core.CodeBadInput,
			fmt.Sprintf("the request body did not arrive within %s (the body read timeout)", lim.BodyReadTimeout))
		return false
	case err != nil:
		writeCodedError(w, http.StatusBadRequest, core.CodeBadInput, "could not read the request body: "+graph.ClipText(err.Error(), graph.MaxEchoBytes))
		return false
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return true
}

func tooLargeBody(limit, got int64) string {
	msg := "the request body is larger than " + graph.ByteSize(limit) + ", the limit for a JSON request"
	if got > 0 {
		msg = "the request body is " + strconv.FormatInt(got, 10) + " bytes; the limit for a JSON request is " + graph.ByteSize(limit)
	}
	return msg + " (send files with a multipart request: uploadAttachment, importSessionFile)"
}

// writeCodedError writes one GraphQL error as the whole response.
func writeCodedError(w http.ResponseWriter, status int, code core.Code, msg string) {
	body, _ := json.Marshal(map[string]any{"errors": []any{map[string]any{
		"message": msg, "extensions": map[string]any{"code": string(code)},
	}}})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	if status == http.StatusRequestEntityTooLarge || status == http.StatusBadRequest {
		h.Set("Connection", "close") // the rest of the body is not read
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// maxErrorBody is how much of an error response codedWriter holds to
// rewrite; longer error bodies (none of the transports writes one) pass.
const maxErrorBody = 64 << 10

// codedWriter holds back an error response (status >= 400) until the
// handler is done, then makes sure it is a GraphQL error list whose every
// error has extensions.code and a short message. Successful responses,
// streams and hijacked connections pass straight through.
type codedWriter struct {
	http.ResponseWriter
	r       *http.Request
	status  int // held status; 0 when not holding
	held    bytes.Buffer
	wrote   bool
	spilled bool
}

func (w *codedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *codedWriter) WriteHeader(status int) {
	if w.wrote || w.status != 0 {
		return
	}
	if status >= 400 {
		w.status = status
		return
	}
	w.wrote = true
	w.ResponseWriter.WriteHeader(status)
}

func (w *codedWriter) Write(b []byte) (int, error) {
	if w.status != 0 && !w.spilled {
		if w.held.Len()+len(b) <= maxErrorBody {
			return w.held.Write(b)
		}
		w.spill()
	}
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (w *codedWriter) Flush() {
	if w.status != 0 && !w.spilled {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// spill gives up on rewriting and sends what is held as it is.
func (w *codedWriter) spill() {
	w.spilled = true
	w.wrote = true
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = w.ResponseWriter.Write(w.held.Bytes())
	w.held.Reset()
}

func (w *codedWriter) finish() {
	if w.status == 0 || w.spilled {
		return
	}
	status, body := codeErrorBody(w.r, w.status, w.held.Bytes())
	h := w.Header()
	if h.Get("Content-Type") != mediaGraphQLResponse {
		h.Set("Content-Type", "application/json")
	}
	h.Del("Content-Length")
	h.Del("X-Content-Type-Options")
	if status == http.StatusMethodNotAllowed && h.Get("Allow") == "" {
		h.Set("Allow", "GET, POST, OPTIONS")
	}
	w.ResponseWriter.WriteHeader(status)
	_, _ = w.ResponseWriter.Write(body)
}

// codeErrorBody turns an error response into a GraphQL error list where
// every error has a code and a clipped message.
func codeErrorBody(r *http.Request, status int, body []byte) (int, []byte) {
	code := core.CodeBadInput
	if status >= 500 {
		code = core.CodeInternal
	}
	var doc map[string]any
	// gqlgen writes some errors without a JSON content type: try any body.
	if json.Unmarshal(body, &doc) == nil {
		if list, ok := doc["errors"].([]any); ok && len(list) > 0 {
			for _, e := range list {
				m, ok := e.(map[string]any)
				if !ok {
					continue
				}
				msg, _ := m["message"].(string)
				switch msg {
				case "transport not supported":
					status, msg = unsupportedTransport(r)
				case "GET requests only allow query operations":
					msg = "GET runs queries only; send mutations with POST, subscriptions with POST and Accept: text/event-stream or over WebSocket"
				}
				m["message"] = graph.ClipMessage(msg)
				ext, _ := m["extensions"].(map[string]any)
				if ext == nil {
					ext = map[string]any{}
					m["extensions"] = ext
				}
				if c, _ := ext["code"].(string); !graph.KnownCode(c) {
					ext["code"] = string(code)
				}
			}
			out, err := json.Marshal(doc)
			if err == nil {
				return status, out
			}
		}
	}
	msg := strings.TrimSpace(string(body))
	if msg == "" {
		msg = http.StatusText(status)
	}
	out, _ := json.Marshal(map[string]any{"errors": []any{map[string]any{
		"message": graph.ClipMessage(msg), "extensions": map[string]any{"code": string(code)},
	}}})
	return status, out
}

// unsupportedTransport says what /graphql accepts, for a request none of
// the transports took.
func unsupportedTransport(r *http.Request) (int, string) {
	if r.Method == http.MethodPost {
		ct := r.Header.Get("Content-Type")
		if ct == "" {
			ct = "none"
		}
		return http.StatusUnsupportedMediaType, "POST /graphql needs Content-Type: application/json " +
			"(multipart/form-data for uploads; add Accept: text/event-stream for SSE); got " + strconv.Quote(graph.ClipText(ct, 64))
	}
	return http.StatusMethodNotAllowed, "/graphql answers POST (JSON, SSE, multipart), GET (queries only) and WebSocket upgrades " +
		"(graphql-transport-ws); got " + graph.ClipText(r.Method, 16)
}
