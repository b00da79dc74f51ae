package sdk

import (
	"context"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
)

// idleWatch calls fn once no foya.v1 call has been in progress for after.
// go-plugin's own services (health, stdio, broker, controller) hold
// long-lived streams and do not count.
type idleWatch struct {
	mu     sync.Mutex
	active int
	timer  *time.Timer
	after  time.Duration
	fn     func()
}

func newIdleWatch(after time.Duration, fn func()) *idleWatch {
	if after <= 0 {
		after = DefaultIdleAfter
	}
	w := &idleWatch{after: after, fn: fn}
	w.timer = time.AfterFunc(after, w.fire) // idle since start-up
	return w
}

func (w *idleWatch) begin() {
	w.mu.Lock()
	w.active++
	w.timer.Stop()
	w.mu.Unlock()
}

func (w *idleWatch) end() {
	w.mu.Lock()
	w.active--
	if w.active == 0 {
		w.timer.Reset(w.after)
	}
	w.mu.Unlock()
}

// fire runs fn unless a call began after the timer expired.
func (w *idleWatch) fire() {
	w.mu.Lock()
	idle := w.active == 0
	w.mu.Unlock()
	if idle {
		w.fn()
	}
}

// counted reports whether a gRPC method is one of the plugin's own calls.
func counted(fullMethod string) bool { return strings.HasPrefix(fullMethod, "/foya.v1.") }

func (w *idleWatch) serverOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if !counted(info.FullMethod) {
				return h(ctx, req)
			}
			w.begin()
			defer w.end()
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if !counted(info.FullMethod) {
				return h(srv, ss)
			}
			w.begin()
			defer w.end()
			return h(srv, ss)
		}),
	}
}
