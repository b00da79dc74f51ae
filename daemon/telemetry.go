package daemon

import (
	"context"
	"flag"
	"net/http"

	"github.com/foya-dev/foya/telemetry"
)

// addTelemetryFlags adds the flags of docs/telemetry.md.
func (c *Config) addTelemetryFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.OTLPEndpoint, "otlp-endpoint", "", "export traces and metrics over OTLP to this URL, e.g. http://127.0.0.1:4318 (default $OTEL_EXPORTER_OTLP_ENDPOINT; empty: no export; docs/telemetry.md)")
	fs.StringVar(&c.OTLPProtocol, "otlp-protocol", "", "OTLP protocol: http/protobuf or grpc (default $OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)")
	fs.BoolVar(&c.CaptureContent, "otel-capture-content", false, "put prompts, replies, tool arguments and outputs on exported spans (never secrets; off by default)")
	fs.BoolVar(&c.NoMetrics, "no-metrics", false, "record no metrics and serve no /metrics (exported spans are unaffected)")
}

// startTelemetry sets up metrics (served on /metrics) and, with an OTLP
// endpoint from --otlp-endpoint or OTEL_EXPORTER_OTLP_*, the export of
// spans and metrics (docs/telemetry.md). With --no-metrics and no endpoint
// nothing is installed: every telemetry call is a nil check.
func (m *Main) startTelemetry(ctx context.Context) error {
	c := m.Config
	cfg := telemetry.Config{Endpoint: c.OTLPEndpoint, Protocol: c.OTLPProtocol, CaptureContent: c.CaptureContent, Version: m.Version}
	if c.NoMetrics && !telemetry.Exporting(cfg) {
		return nil
	}
	t, err := telemetry.Setup(ctx, cfg)
	if err != nil {
		return err
	}
	m.tel = t
	if t.Exporting != "" {
		m.log.Info("exporting telemetry over OTLP", "to", t.Exporting, "capture_content", c.CaptureContent)
	}
	return nil
}

// metricsHandler is GET /metrics, or nil when metrics are off.
func (m *Main) metricsHandler() http.Handler {
	if m.tel == nil || m.Config.NoMetrics {
		return nil
	}
	return m.tel.MetricsHandler()
}
