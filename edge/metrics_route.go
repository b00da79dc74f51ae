package edge

import (
	"net/http"

	"github.com/foya-dev/foya/core"
)

// MetricsPath serves the kernel's metrics in the Prometheus text format
// (docs/telemetry.md), with the token like every route.
const MetricsPath = "/metrics"

// metricsRoute guards cfg.Metrics like /graphql: the bearer token, the
// browser origin and Host checks; GET only.
func metricsRoute(cfg Config) http.Handler {
	inner := cfg.Metrics
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isUpgrade(r) || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			writeCodedError(w, http.StatusMethodNotAllowed, core.CodeBadInput, "/metrics answers GET only (the Prometheus text format)")
			return
		}
		inner.ServeHTTP(w, r)
	})
	if cfg.Auth != nil {
		h = cfg.Auth.middleware(h)
	}
	return codedErrors(browserGuard(h, cfg.Auth, cfg.OriginPatterns, cfg.HostPatterns))
}
