package edge

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/foya-dev/foya/core"
)

// admission decides whether the kernel takes a request now. Two bounds,
// both refused at once (never queued) with HTTP 429, Retry-After and a
// GraphQL error coded RATE_LIMITED:
//
//   - perPeer: the requests one peer (an IP address, or a /64 for IPv6, as
//     the authentication limiter counts) has in flight, from the first byte
//     of the headers having arrived to the last byte of the answer.
//     WebSocket connections are not counted, and SSE requests only until
//     their body is read: they live as long as their subscriptions, which
//     have their own bounds (subscriptionCap).
//   - expensive: the expensive requests of the whole kernel: multipart
//     uploads, JSON bodies over ExpensiveBodyBytes (not SSE), and operations that
//     export, import or upload, or whose estimated cost is at least
//     ExpensiveCost (checked by expensiveOps once the operation is parsed).
//
// The memory one request may cost is bounded by the request limits; these
// bound how many run at once.
type admission struct {
	perPeer    int
	retryAfter time.Duration

	mu    sync.Mutex
	peers map[string]int

	expensive chan struct{} // a slot per running expensive request
}

func newAdmission(lim Limits) *admission {
	return &admission{
		perPeer:    lim.MaxInFlightPerPeer,
		retryAfter: RateLimitRetryAfter,
		peers:      map[string]int{},
		expensive:  make(chan struct{}, lim.MaxExpensive),
	}
}

// enter counts a request of peer in; false when the peer is at its limit.
func (a *admission) enter(peer string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.peers[peer] >= a.perPeer {
		return false
	}
	a.peers[peer]++
	return true
}

func (a *admission) leave(peer string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.peers[peer] <= 1 {
		delete(a.peers, peer) // the map holds only peers with requests in flight
		return
	}
	a.peers[peer]--
}

// tryExpensive takes an expensive slot; the returned func gives it back
// (at most once).
func (a *admission) tryExpensive() (func(), bool) {
	select {
	case a.expensive <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-a.expensive }) }, true
	default:
		return nil, false
	}
}

// admitState is the admission of one HTTP request, for expensiveOps.
type admitState struct {
	a       *admission
	holds   atomic.Bool // the request already holds an expensive slot
	limited atomic.Bool // an operation was refused: answer 429
	// bodyRead, for an SSE request, ends its count once the body is read.
	bodyRead func()
}

type admitKey struct{}

// admit wraps the request side: the peer's in-flight count, and an
// expensive slot for a multipart upload or a large JSON body (a body
// without a Content-Length is classified once read, by readBody).
func (a *admission) admit(w http.ResponseWriter, r *http.Request, next func(http.ResponseWriter, *http.Request)) {
	if isUpgrade(r) {
		next(w, r)
		return
	}
	peer := peerKey(r.RemoteAddr)
	if !a.enter(peer) {
		a.refuse(w, fmt.Sprintf("%s already has %d requests in flight, the limit per peer; wait for one to finish", peer, a.perPeer))
		return
	}
	st := &admitState{a: a}
	if isSSE(r) {
		// An SSE request counts until its body is read (bodyRead); its
		// stream then lives as long as its subscription, bounded by
		// subscriptionCap.
		var once sync.Once
		st.bodyRead = func() { once.Do(func() { a.leave(peer) }) }
		defer st.bodyRead()
	} else {
		defer a.leave(peer)
		if r.Method == http.MethodPost && (isMultipart(r) || r.ContentLength > ExpensiveBodyBytes) {
			release, ok := a.tryExpensive()
			if !ok {
				a.refuse(w, a.busy())
				return
			}
			defer release()
			st.holds.Store(true)
		}
	}
	next(&limitedWriter{ResponseWriter: w, st: st}, r.WithContext(context.WithValue(r.Context(), admitKey{}, st)))
}

// bodyRead tells the admission that the body of r has been read.
func bodyRead(r *http.Request) {
	if st, _ := r.Context().Value(admitKey{}).(*admitState); st != nil && st.bodyRead != nil {
		st.bodyRead()
	}
}

// expensiveBody takes an expensive slot for a JSON body found to be large
// once read; false when none is free (the request has been answered).
func (a *admission) expensiveBody(w http.ResponseWriter, r *http.Request, size int) (func(), bool) {
	st, _ := r.Context().Value(admitKey{}).(*admitState)
	if st == nil || st.bodyRead != nil || st.holds.Load() || size <= ExpensiveBodyBytes {
		return func() {}, true
	}
	release, ok := a.tryExpensive()
	if !ok {
		a.refuse(w, a.busy())
		return nil, false
	}
	st.holds.Store(true)
	return release, true
}

func (a *admission) busy() string {
	return fmt.Sprintf("the kernel already runs %d expensive requests (uploads, imports, exports, large or costly operations), its limit; retry in %s", cap(a.expensive), a.retryAfter)
}

func (a *admission) refuse(w http.ResponseWriter, msg string) {
	w.Header().Set("Retry-After", strconv.Itoa(int(max(1, a.retryAfter.Round(time.Second)/time.Second))))
	writeCodedError(w, http.StatusTooManyRequests, core.CodeRateLimited, msg)
}

func isSSE(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		if strings.Contains(strings.ToLower(v), "text/event-stream") {
			return true
		}
	}
	return false
}

// limitedWriter answers 429 with Retry-After when an operation of the
// request was refused by expensiveOps.
type limitedWriter struct {
	http.ResponseWriter
	st    *admitState
	wrote bool
}

func (w *limitedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *limitedWriter) WriteHeader(status int) {
	if w.wrote {
		return
	}
	w.wrote = true
	if w.st.limited.Load() {
		w.Header().Set("Retry-After", strconv.Itoa(int(max(1, w.st.a.retryAfter.Round(time.Second)/time.Second))))
		status = http.StatusTooManyRequests
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *limitedWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *limitedWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// expensiveFields are root fields whose operation is expensive whatever
// its estimated cost.
var expensiveFields = map[string]bool{
	"backupDatabase":    true, // copies the whole database
	"exportSession":     true,
	"importSession":     true,
	"importSessionFile": true,
	"uploadAttachment":  true,
}

// expensiveOps takes an expensive slot for an expensive operation (see
// admission) that does not hold one yet, over any transport, until its
// response is built; none free: RATE_LIMITED (HTTP 429 with Retry-After
// over HTTP). Subscriptions are bounded by subscriptionCap instead.
type expensiveOps struct {
	a *admission
}

var (
	_ graphql.HandlerExtension     = expensiveOps{}
	_ graphql.OperationInterceptor = expensiveOps{}
)

func (e expensiveOps) ExtensionName() string                          { return "ExpensiveOps" }
func (e expensiveOps) Validate(schema graphql.ExecutableSchema) error { return nil }

func (e expensiveOps) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc == nil || oc.Operation == nil || oc.Operation.Operation == ast.Subscription {
		return next(ctx)
	}
	st, _ := ctx.Value(admitKey{}).(*admitState)
	if st != nil && st.holds.Load() {
		return next(ctx)
	}
	if !isExpensive(oc) {
		return next(ctx)
	}
	release, ok := e.a.tryExpensive()
	if !ok {
		if st != nil {
			st.limited.Store(true)
		}
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{{
			Message: e.a.busy(), Extensions: map[string]any{"code": string(core.CodeRateLimited)},
		}}})
	}
	responses := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		defer release() // a query or mutation has one response
		return responses(ctx)
	}
}

func isExpensive(oc *graphql.OperationContext) bool {
	return hasExpensiveField(oc.Operation.SelectionSet, 0) || operationCost(oc.Operation.SelectionSet, oc.Variables) >= ExpensiveCost
}

// hasExpensiveField looks for expensiveFields among the root fields,
// fragments included.
func hasExpensiveField(set ast.SelectionSet, depth int) bool {
	if depth > MaxDepth {
		return false
	}
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if expensiveFields[s.Name] {
				return true
			}
		case *ast.InlineFragment:
			if hasExpensiveField(s.SelectionSet, depth+1) {
				return true
			}
		case *ast.FragmentSpread:
			if s.Definition != nil && hasExpensiveField(s.Definition.SelectionSet, depth+1) {
				return true
			}
		}
	}
	return false
}

// useAdmission registers the operation side of the admission bounds on srv
// and returns the admission for requestLimits.
func useAdmission(srv *handler.Server, lim Limits) *admission {
	a := newAdmission(lim)
	srv.Use(expensiveOps{a})
	return a
}
