package sdk

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// TraceparentKey is the gRPC metadata key (and HTTP header) carrying the
// W3C trace context of the kernel's span that made a call: the turn, the
// model call or the tool call (docs/telemetry.md).
const TraceparentKey = "traceparent"

type traceparentKey struct{}

// Traceparent returns the W3C traceparent of the kernel span a call
// belongs to ("" when the kernel exports no traces). A plugin that makes
// HTTP requests sends it on as the traceparent header (the built-in
// providers do), or starts its own spans under it.
func Traceparent(ctx context.Context) string {
	s, _ := ctx.Value(traceparentKey{}).(string)
	return s
}

// WithTraceparent returns ctx carrying tp (for tests and in-process use).
func WithTraceparent(ctx context.Context, tp string) context.Context {
	if tp == "" {
		return ctx
	}
	return context.WithValue(ctx, traceparentKey{}, tp)
}

func traceFromMetadata(ctx context.Context) context.Context {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return ctx
	}
	if v := md.Get(TraceparentKey); len(v) == 1 && validTraceparent(v[0]) {
		return context.WithValue(ctx, traceparentKey{}, v[0])
	}
	return ctx
}

// validTraceparent checks the shape 00-<32 hex>-<16 hex>-<2 hex>.
func validTraceparent(s string) bool {
	if len(s) != 55 || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i == 2 || i == 35 || i == 52 {
			continue
		}
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// traceServerOptions put the caller's traceparent into the context of
// every call a plugin serves.
func traceServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			return h(traceFromMetadata(ctx), req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			return h(srv, tracedStream{ss, traceFromMetadata(ss.Context())})
		}),
	}
}

type tracedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s tracedStream) Context() context.Context { return s.ctx }
