package edge

import (
	"context"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// nonStreaming wraps a transport that answers with one response (POST, GET,
// multipart). A subscription, which needs a streaming transport, is refused
// there instead of blocking the request until its first event. The codes of
// the errors such a transport writes itself are added by codedErrors.
type nonStreaming struct{ graphql.Transport }

func (t nonStreaming) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	t.Transport.Do(w, r, noSubscriptions{exec})
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
