package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/internal/testenv"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// jaegerVersion is the Jaeger built by test/jaeger (its go.mod's tool).
const jaegerVersion = "v1.76.0"

// jaegerBinary is the Jaeger all-in-one binary .ci/run builds from
// test/jaeger (FOYA_JAEGER overrides the cached path).
func jaegerBinary() string {
	if p := os.Getenv("FOYA_JAEGER"); p != "" {
		return p
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "foya-test", "jaeger-"+jaegerVersion)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// jaegerConfig is an all-in-one configuration on loopback ports of the
// test's own: OTLP/HTTP in, memory storage, the query API out.
const jaegerConfig = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 1000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

// startJaeger runs Jaeger; it returns its OTLP/HTTP endpoint and the base
// URL of its query API.
func startJaeger(t *testing.T) (otlp, query string) {
	t.Helper()
	bin := jaegerBinary()
	if _, err := os.Stat(bin); err != nil {
		testenv.Optional(t, "Jaeger %s is not built at %s (.ci/run builds it: cd test/jaeger && go build -o %s github.com/jaegertracing/jaeger/cmd/jaeger)", jaegerVersion, bin, bin)
	}
	qport, gport, oport := freePort(t), freePort(t), freePort(t)
	cfg := filepath.Join(t.TempDir(), "jaeger.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, jaegerConfig, qport, gport, oport), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfg)
	var logs lockedBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	query = fmt.Sprintf("http://127.0.0.1:%d", qport)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(query + "/api/services")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Jaeger did not answer on %s:\n%s", query, logs.String())
		}
	}
	return fmt.Sprintf("http://127.0.0.1:%d", oport), query
}

// jaegerTrace is a trace as Jaeger's query API (/api/traces) returns it.
type jaegerTrace struct {
	TraceID string `json:"traceID"`
	Spans   []struct {
		SpanID        string `json:"spanID"`
		OperationName string `json:"operationName"`
		References    []struct {
			RefType string `json:"refType"`
			SpanID  string `json:"spanID"`
		} `json:"references"`
		Tags []struct {
			Key   string `json:"key"`
			Value any    `json:"value"`
		} `json:"tags"`
		Logs []struct {
			Fields []struct {
				Key   string `json:"key"`
				Value any    `json:"value"`
			} `json:"fields"`
		} `json:"logs"`
	} `json:"spans"`
}

// A real `foya serve` exports a turn with a retried model call, an
// approved tool call and a final answer to a real Jaeger over OTLP/HTTP:
// Jaeger's query API returns it as one trace with the expected span tree
// and GenAI attributes, and nothing Jaeger stored holds the prompt, the
// reply, the tool output or the API key (capture is off). /metrics'
// token counters equal the usage ledger.
func TestTelemetryJaeger(t *testing.T) {
	otlp, query := startJaeger(t)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	t.Setenv("OTEL_SERVICE_NAME", "foya-e2e")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir(), "--otlp-endpoint", otlp)
	telemetryTurn(t, k, fake)
	checkMetricsMatchLedger(t, k)

	var raw []byte
	var traces struct{ Data []jaegerTrace }
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		resp, err := http.Get(query + "/api/traces?service=foya-e2e&limit=50&lookback=1h")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		traces.Data = nil
		_ = json.Unmarshal(raw, &traces)
		if turnSpansIn(traces.Data) || time.Now().After(deadline) {
			break
		}
	}
	var spans []sinkSpan
	for _, tr := range traces.Data {
		for _, s := range tr.Spans {
			x := sinkSpan{Name: s.OperationName, TraceID: tr.TraceID, SpanID: s.SpanID, Attrs: map[string]string{}}
			for _, r := range s.References {
				if r.RefType == "CHILD_OF" {
					x.ParentID = r.SpanID
				}
			}
			for _, tag := range s.Tags {
				x.Attrs[tag.Key] = fmt.Sprint(tag.Value)
			}
			for _, l := range s.Logs {
				for _, f := range l.Fields {
					if f.Key == "event" {
						x.Events = append(x.Events, fmt.Sprint(f.Value))
					}
				}
			}
			spans = append(spans, x)
		}
	}
	if len(traces.Data) != 1 {
		t.Fatalf("%d traces for the service, want the turn's one: %s", len(traces.Data), raw)
	}
	checkTurnTrace(t, spans)
	noContent(t, "what Jaeger stored", raw)
}

func turnSpansIn(traces []jaegerTrace) bool {
	n := 0
	for _, tr := range traces {
		for _, s := range tr.Spans {
			if s.OperationName == "foya.turn" || strings.HasPrefix(s.OperationName, "chat ") || strings.HasPrefix(s.OperationName, "execute_tool ") {
				n++
			}
		}
	}
	return n >= 4
}
