package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/foya-dev/foya/core"
)

// codedTransport wraps a non-streaming transport (POST, GET, multipart).
// Errors such a transport writes itself (undecodable variables, a mutation
// over GET, a malformed multipart form) bypass the error presenter; the
// wrapper gives each of them extensions.code BAD_INPUT like every other
// error. A subscription, which needs a streaming transport, is refused
// instead of blocking the request until its first event.
type codedTransport struct{ graphql.Transport }

func (t codedTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	t.Transport.Do(&codingWriter{ResponseWriter: w}, r, noSubscriptions{exec})
}

// noSubscriptions refuses subscription operations.
type noSubscriptions struct{ graphql.GraphExecutor }

func (e noSubscriptions) DispatchOperation(ctx context.Context, oc *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	if oc == nil || oc.Operation == nil || oc.Operation.Operation != ast.Subscription {
		return e.GraphExecutor.DispatchOperation(ctx, oc)
	}
	resp := e.DispatchError(graphql.WithOperationContext(ctx, oc), gqlerror.List{gqlerror.Errorf(
		"subscriptions need a streaming transport: a WebSocket (graphql-transport-ws) or POST with Accept: text/event-stream")})
	sent := false
	return func(context.Context) *graphql.Response {
		if sent {
			return nil
		}
		sent = true
		return resp
	}, ctx
}

// codingWriter adds extensions.code BAD_INPUT to the errors of an error
// status response that lack one, and labels such a response as JSON. The wrapped transports write such a
// response whole, in one Write.
type codingWriter struct {
	http.ResponseWriter
	status int
}

func (w *codingWriter) WriteHeader(status int) {
	w.status = status
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json") // gqlgen leaves it unset on some errors
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *codingWriter) Write(b []byte) (int, error) {
	if w.status < http.StatusBadRequest {
		return w.ResponseWriter.Write(b)
	}
	var resp graphql.Response
	if json.Unmarshal(b, &resp) != nil || len(resp.Errors) == 0 {
		return w.ResponseWriter.Write(b)
	}
	changed := false
	for _, e := range resp.Errors {
		if e == nil {
			continue
		}
		if _, ok := e.Extensions["code"]; !ok {
			if e.Extensions == nil {
				e.Extensions = map[string]any{}
			}
			e.Extensions["code"] = string(core.CodeBadInput)
			changed = true
		}
	}
	if !changed {
		return w.ResponseWriter.Write(b)
	}
	out, err := json.Marshal(&resp)
	if err != nil {
		return w.ResponseWriter.Write(b)
	}
	if _, err := w.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Flush lets a wrapped transport flush through the wrapper.
func (w *codingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// unsupportedTransport answers every request no other transport took,
// with a coded error instead of gqlgen's uncoded "transport not supported".
// It must be added last.
type unsupportedTransport struct{}

func (unsupportedTransport) Supports(*http.Request) bool { return true }

func (unsupportedTransport) Do(w http.ResponseWriter, r *http.Request, _ graphql.GraphExecutor) {
	status, msg := http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not served on /graphql; use POST, GET (queries only) or a WebSocket", clip(r.Method, 20))
	if r.Method == http.MethodPost {
		status = http.StatusUnsupportedMediaType
		msg = fmt.Sprintf("content type %q is not served; send application/json, or multipart/form-data for uploads", clip(r.Header.Get("Content-Type"), 100))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []any{map[string]any{
		"message": msg, "extensions": map[string]any{"code": string(core.CodeBadInput)},
	}}})
}

// clip shortens client input quoted in an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
