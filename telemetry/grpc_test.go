package telemetry

import (
	"context"
	"net"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	core "github.com/foya-dev/foya/core/telemetry"
)

type traceReceiver struct {
	coltrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
	res   []string
}

func (r *traceReceiver) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, a := range rs.Resource.Attributes {
			r.res = append(r.res, a.Key+"="+a.Value.GetStringValue())
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				r.names = append(r.names, s.Name)
			}
		}
	}
	return &coltrace.ExportTraceServiceResponse{}, nil
}

// --otlp-protocol grpc exports over OTLP/gRPC, with the resource from
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
func TestExportOverGRPC(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	recv := &traceReceiver{}
	coltrace.RegisterTraceServiceServer(srv, recv)
	go srv.Serve(ln)
	defer srv.Stop()
	t.Setenv("OTEL_SERVICE_NAME", "foya-grpc")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "team=platform")
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	tel, err := Setup(context.Background(), Config{Endpoint: "http://" + ln.Addr().String(), Protocol: "grpc", Version: "v9"})
	if err != nil {
		t.Fatal(err)
	}
	if !core.Tracing() || tel.Exporting == "" {
		t.Fatal("not exporting")
	}
	_, sp := core.Start(context.Background(), core.SpanTurn)
	sp.End()
	if err := tel.Close(); err != nil {
		t.Fatal(err)
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.names) != 1 || recv.names[0] != core.SpanTurn {
		t.Fatalf("spans %v", recv.names)
	}
	res := map[string]bool{}
	for _, r := range recv.res {
		res[r] = true
	}
	if !res["service.name=foya-grpc"] || !res["team=platform"] || !res["service.version=v9"] {
		t.Fatalf("resource %v", recv.res)
	}
}
