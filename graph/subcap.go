package graph

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/foya-dev/foya/core"
)

// subscriptionCap bounds the subscriptions running at once: perConn on one
// WebSocket connection, total in the kernel (WebSocket and SSE). A
// subscription over a bound is refused with BAD_INPUT (one connection) or
// UNAVAILABLE (the kernel) before its resolver runs; a slot is freed when
// the subscription ends, however it ends.
type subscriptionCap struct {
	perConn int64
	total   int64
	running *atomic.Int64
}

var (
	_ graphql.HandlerExtension     = subscriptionCap{}
	_ graphql.OperationInterceptor = subscriptionCap{}
)

// connSubscriptions counts the subscriptions of one WebSocket connection.
type connSubscriptions struct{ n atomic.Int64 }

type connSubsKey struct{}

func withConnSubscriptions(ctx context.Context) context.Context {
	return context.WithValue(ctx, connSubsKey{}, &connSubscriptions{})
}

func (c subscriptionCap) ExtensionName() string                          { return "SubscriptionCap" }
func (c subscriptionCap) Validate(schema graphql.ExecutableSchema) error { return nil }

func (c subscriptionCap) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc == nil || oc.Operation == nil || oc.Operation.Operation != ast.Subscription {
		return next(ctx)
	}
	conn, _ := ctx.Value(connSubsKey{}).(*connSubscriptions)
	if conn != nil {
		if conn.n.Add(1) > c.perConn {
			conn.n.Add(-1)
			return refusal(core.CodeBadInput, fmt.Sprintf("this WebSocket connection already runs %d subscriptions, the limit per connection; complete one first or open another connection", c.perConn))
		}
	}
	if c.running.Add(1) > c.total {
		c.running.Add(-1)
		if conn != nil {
			conn.n.Add(-1)
		}
		return refusal(core.CodeUnavailable, fmt.Sprintf("the kernel already runs %d subscriptions, its limit; try again when some have ended", c.total))
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			c.running.Add(-1)
			if conn != nil {
				conn.n.Add(-1)
			}
		})
	}
	stop := context.AfterFunc(ctx, release)
	responses := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		resp := responses(ctx)
		if resp == nil {
			stop()
			release()
		}
		return resp
	}
}

func refusal(code core.Code, msg string) graphql.ResponseHandler {
	return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{{
		Message: msg, Extensions: map[string]any{"code": string(code)},
	}}})
}
