package host

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/foya-dev/foya/core/telemetry"
	"github.com/foya-dev/foya/plugins/sdk"
)

// traceDialOptions send the W3C traceparent of the calling span (the turn,
// model call or tool call) with every call to a plugin, so that what the
// plugin does joins the turn's trace (sdk.Traceparent on its side). With
// tracing off nothing is added.
func traceDialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return invoker(withTraceparent(ctx), method, req, reply, cc, opts...)
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			return streamer(withTraceparent(ctx), desc, cc, method, opts...)
		}),
	}
}

func withTraceparent(ctx context.Context) context.Context {
	if tp := telemetry.Traceparent(ctx); tp != "" {
		return metadata.AppendToOutgoingContext(ctx, sdk.TraceparentKey, tp)
	}
	return ctx
}
