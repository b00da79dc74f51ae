package edge

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
//
// The counts are exact. A WebSocket subscription takes its slots in
// MutateOperationContext, which gqlgen runs in the connection's read loop,
// so subscribes are counted in the order they arrive (the operation itself
// runs in a goroutine of its own, in no particular order); a client's
// complete frees its slots in the read loop too (countingWS), before the
// next message is read. A burst of 101 subscribes on one connection is 100
// subscriptions and the 101st refused; complete one and the next subscribe
// is taken. It must be the last OperationContextMutator registered: a
// mutator after it could refuse an operation that holds slots.
type subscriptionCap struct {
	perConn int64
	total   int64
	running *atomic.Int64
}

var (
	_ graphql.HandlerExtension        = subscriptionCap{}
	_ graphql.OperationContextMutator = subscriptionCap{}
	_ graphql.OperationInterceptor    = subscriptionCap{}
)

// subSlot is the slots one subscription holds; release frees them once.
type subSlot struct {
	once    sync.Once
	release func()
	// stopConn unregisters the free on the connection's end, once freed.
	stopConn atomic.Pointer[func() bool]
}

func (s *subSlot) free() {
	s.once.Do(func() {
		s.release()
		if stop := s.stopConn.Load(); stop != nil {
			(*stop)()
		}
	})
}

// connSubscriptions counts the subscriptions of one WebSocket connection
// and maps the ids of its running subscriptions to their slots.
type connSubscriptions struct {
	n atomic.Int64

	mu      sync.Mutex
	current string // the id of the subscribe message being handled
	slots   map[string]*subSlot
}

type connSubsKey struct{}

func withConnSubscriptions(ctx context.Context) context.Context {
	return context.WithValue(ctx, connSubsKey{}, &connSubscriptions{slots: map[string]*subSlot{}})
}

// subscribing records the id of the subscribe message the read loop hands
// to gqlgen next.
func (c *connSubscriptions) subscribing(id string) {
	c.mu.Lock()
	c.current = id
	c.mu.Unlock()
}

// completed frees the slots of subscription id at once.
func (c *connSubscriptions) completed(id string) {
	c.mu.Lock()
	s := c.slots[id]
	c.mu.Unlock()
	if s != nil {
		s.free()
	}
}

func (c subscriptionCap) ExtensionName() string                          { return "SubscriptionCap" }
func (c subscriptionCap) Validate(schema graphql.ExecutableSchema) error { return nil }

func isSubscription(oc *graphql.OperationContext) bool {
	return oc != nil && oc.Operation != nil && oc.Operation.Operation == ast.Subscription
}

// MutateOperationContext takes the slots of a WebSocket subscription.
func (c subscriptionCap) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	conn, _ := ctx.Value(connSubsKey{}).(*connSubscriptions)
	if conn == nil || !isSubscription(oc) {
		return nil
	}
	if conn.n.Add(1) > c.perConn {
		conn.n.Add(-1)
		return codedError(core.CodeBadInput, fmt.Sprintf("this WebSocket connection already runs %d subscriptions, the limit per connection; complete one first or open another connection", c.perConn))
	}
	if c.running.Add(1) > c.total {
		c.running.Add(-1)
		conn.n.Add(-1)
		return codedError(core.CodeUnavailable, c.kernelFull())
	}
	conn.mu.Lock()
	id := conn.current
	s := &subSlot{}
	s.release = func() {
		c.running.Add(-1)
		conn.n.Add(-1)
		conn.mu.Lock()
		if conn.slots[id] == s {
			delete(conn.slots, id)
		}
		conn.mu.Unlock()
	}
	// A reused id replaces the map entry: gqlgen's complete reaches the
	// newest subscription of an id; an older one frees its slots when it
	// ends or the connection closes.
	conn.slots[id] = s
	conn.mu.Unlock()
	oc.Stats.SetExtension(c.ExtensionName(), s)
	stop := context.AfterFunc(ctx, s.free) // the connection's end frees it in any case
	s.stopConn.Store(&stop)
	return nil
}

func (c subscriptionCap) kernelFull() string {
	return fmt.Sprintf("the kernel already runs %d subscriptions, its limit; try again when some have ended", c.total)
}

func (c subscriptionCap) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if !isSubscription(oc) {
		return next(ctx)
	}
	s, _ := oc.Stats.GetExtension(c.ExtensionName()).(*subSlot)
	if s == nil { // SSE: one subscription per request
		if c.running.Add(1) > c.total {
			c.running.Add(-1)
			return refusal(core.CodeUnavailable, c.kernelFull())
		}
		s = &subSlot{release: func() { c.running.Add(-1) }}
	}
	stop := context.AfterFunc(ctx, s.free)
	responses := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		resp := responses(ctx)
		if resp == nil {
			stop()
			s.free()
		}
		return resp
	}
}

func codedError(code core.Code, msg string) *gqlerror.Error {
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": string(code)}}
}

func refusal(code core.Code, msg string) graphql.ResponseHandler {
	return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{codedError(code, msg)}})
}
