// Package telemetry implements core/telemetry with OpenTelemetry: spans
// exported over OTLP (HTTP or gRPC) when an endpoint is configured, metrics
// served in the Prometheus text format on GET /metrics and, with an
// endpoint, exported over OTLP too. The daemon sets it up (docs/telemetry.md).
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	core "github.com/foya-dev/foya/core/telemetry"
)

// Config is how telemetry is exported.
type Config struct {
	// Endpoint is the OTLP endpoint URL (serve --otlp-endpoint), e.g.
	// http://127.0.0.1:4318 (HTTP) or http://127.0.0.1:4317 (gRPC). Empty:
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT;
	// none of them: no export (metrics are still served on /metrics).
	Endpoint string
	// Protocol is grpc or http/protobuf (serve --otlp-protocol; default
	// OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf).
	Protocol string
	// CaptureContent puts prompts, replies, tool arguments and outputs on
	// spans (serve --otel-capture-content). Secrets never go there.
	CaptureContent bool
	// Version is the service.version resource attribute.
	Version string
	// Env reads the environment (default os.Getenv).
	Env func(string) string
}

// Telemetry is the installed OpenTelemetry provider.
type Telemetry struct {
	tp       *sdktrace.TracerProvider
	mp       *sdkmetric.MeterProvider
	tracer   trace.Tracer
	registry *prometheus.Registry
	capture  bool
	counters [core.NumMetrics]metric.Float64Counter
	updowns  [core.NumMetrics]metric.Float64UpDownCounter
	hists    [core.NumMetrics]metric.Float64Histogram
	// Exporting says where spans go ("" when they are not exported).
	Exporting string
}

// Setup builds the providers from cfg and the standard OTEL_* variables
// and installs them into core/telemetry. Close flushes and stops them.
func Setup(ctx context.Context, cfg Config) (*Telemetry, error) {
	env := cfg.Env
	if env == nil {
		env = os.Getenv
	}
	res, err := newResource(ctx, cfg.Version)
	if err != nil {
		return nil, err
	}
	t := &Telemetry{registry: prometheus.NewRegistry(), capture: cfg.CaptureContent}
	promExp, err := otelprom.New(otelprom.WithRegisterer(t.registry), otelprom.WithoutScopeInfo())
	if err != nil {
		return nil, fmt.Errorf("prometheus exporter: %w", err)
	}
	mopts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithReader(promExp)}
	endpoint, proto := exportTarget(cfg, env)
	if exporting(endpoint, env) {
		spanExp, err := newSpanExporter(ctx, endpoint, proto)
		if err != nil {
			return nil, err
		}
		t.tp = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(spanExp))
		t.tracer = t.tp.Tracer("github.com/foya-dev/foya")
		t.Exporting = proto + " " + cmpOr(endpoint, "(from OTEL_EXPORTER_OTLP_*)")
		if env("OTEL_METRICS_EXPORTER") != "none" {
			mexp, err := newMetricExporter(ctx, endpoint, proto)
			if err != nil {
				return nil, err
			}
			mopts = append(mopts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(mexp)))
		}
	}
	t.mp = sdkmetric.NewMeterProvider(mopts...)
	if err := t.instruments(); err != nil {
		return nil, err
	}
	core.Install(t)
	return t, nil
}

// Exporting reports whether cfg (with the environment) exports spans.
func Exporting(cfg Config) bool {
	env := cfg.Env
	if env == nil {
		env = os.Getenv
	}
	return exporting(cfg.Endpoint, env)
}

// exporting reports whether spans are exported: an endpoint is set and the
// SDK is not disabled.
func exporting(endpoint string, env func(string) string) bool {
	if strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") || env("OTEL_TRACES_EXPORTER") == "none" {
		return false
	}
	return endpoint != "" || env("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// exportTarget is the endpoint given on the command line and the protocol.
func exportTarget(cfg Config, env func(string) string) (endpoint, proto string) {
	proto = cfg.Protocol
	if proto == "" {
		proto = cmpOr(env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), env("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	if proto == "" || proto == "http" {
		proto = "http/protobuf"
	}
	return cfg.Endpoint, proto
}

// CheckProtocol reports an unsupported --otlp-protocol.
func CheckProtocol(p string) error {
	switch p {
	case "", "grpc", "http/protobuf", "http":
		return nil
	}
	return fmt.Errorf("OTLP protocol %q: use grpc or http/protobuf", p)
}

func newResource(ctx context.Context, version string) (*resource.Resource, error) {
	base := resource.NewSchemaless(
		attribute.String("service.name", "foya"),
		attribute.String("service.version", version),
	)
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the defaults.
	fromEnv, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil && fromEnv == nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}
	res, err := resource.Merge(base, fromEnv)
	if err != nil {
		return resource.NewSchemaless(append(base.Attributes(), fromEnv.Attributes()...)...), nil
	}
	return res, nil
}

func newSpanExporter(ctx context.Context, endpoint, proto string) (sdktrace.SpanExporter, error) {
	var (
		exp sdktrace.SpanExporter
		err error
	)
	switch proto {
	case "grpc":
		var opts []otlptracegrpc.Option
		if endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(endpoint))
		}
		exp, err = otlptracegrpc.New(ctx, opts...)
	case "http/protobuf":
		var opts []otlptracehttp.Option
		if endpoint != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimRight(endpoint, "/")+"/v1/traces"))
		}
		exp, err = otlptracehttp.New(ctx, opts...)
	default:
		return nil, CheckProtocol(proto)
	}
	if err != nil {
		return nil, fmt.Errorf("OTLP span exporter: %w", err)
	}
	return exp, nil
}

func newMetricExporter(ctx context.Context, endpoint, proto string) (sdkmetric.Exporter, error) {
	var (
		exp sdkmetric.Exporter
		err error
	)
	if proto == "grpc" {
		var opts []otlpmetricgrpc.Option
		if endpoint != "" {
			opts = append(opts, otlpmetricgrpc.WithEndpointURL(endpoint))
		}
		exp, err = otlpmetricgrpc.New(ctx, opts...)
	} else {
		var opts []otlpmetrichttp.Option
		if endpoint != "" {
			opts = append(opts, otlpmetrichttp.WithEndpointURL(strings.TrimRight(endpoint, "/")+"/v1/metrics"))
		}
		exp, err = otlpmetrichttp.New(ctx, opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("OTLP metric exporter: %w", err)
	}
	return exp, nil
}

// instruments creates one instrument per core.Metric.
func (t *Telemetry) instruments() error {
	m := t.mp.Meter("github.com/foya-dev/foya")
	for i, in := range core.Instruments {
		var err error
		switch {
		case in.Histogram:
			opts := []metric.Float64HistogramOption{metric.WithUnit(in.Unit), metric.WithDescription(in.Desc)}
			if in.Unit == "s" {
				opts = append(opts, metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92))
			}
			t.hists[i], err = m.Float64Histogram(in.Name, opts...)
		case in.Gauge:
			mt := core.Metric(i)
			_, err = m.Float64ObservableGauge(in.Name, metric.WithUnit(in.Unit), metric.WithDescription(in.Desc),
				metric.WithFloat64Callback(func(_ context.Context, o metric.Float64Observer) error {
					if v, ok := core.Gauge(mt); ok {
						o.Observe(v)
					}
					return nil
				}))
		case in.UpDown:
			t.updowns[i], err = m.Float64UpDownCounter(in.Name, metric.WithUnit(in.Unit), metric.WithDescription(in.Desc))
		default:
			t.counters[i], err = m.Float64Counter(in.Name, metric.WithUnit(in.Unit), metric.WithDescription(in.Desc))
		}
		if err != nil {
			return fmt.Errorf("instrument %s: %w", in.Name, err)
		}
	}
	return nil
}

// MetricsHandler serves the metrics in the Prometheus text format.
func (t *Telemetry) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{})
}

// Close flushes what is buffered (5 s at most) and uninstalls.
func (t *Telemetry) Close() error {
	core.Install(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	if t.tp != nil {
		errs = append(errs, t.tp.Shutdown(ctx))
	}
	errs = append(errs, t.mp.Shutdown(ctx))
	return errors.Join(errs...)
}
