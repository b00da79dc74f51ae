package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// otlpSink is a local OTLP/HTTP receiver: it keeps every body it is sent
// (raw, to look for leaked content) and the spans decoded.
type otlpSink struct {
	*httptest.Server
	mu    sync.Mutex
	raw   [][]byte
	spans []sinkSpan
}

// sinkSpan is one received span, flattened.
type sinkSpan struct {
	Name, TraceID, SpanID, ParentID string
	Attrs                           map[string]string
	Events                          []string
	Links                           []string // span ids linked
	Status                          int32
}

func newOTLPSink(t testing.TB) *otlpSink {
	s := &otlpSink{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *otlpSink) serve(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		body = zr
	}
	data, _ := io.ReadAll(body)
	s.mu.Lock()
	s.raw = append(s.raw, data)
	s.mu.Unlock()
	if r.URL.Path == "/v1/traces" {
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(data, &req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		s.add(&req)
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
}

func (s *otlpSink) add(req *coltrace.ExportTraceServiceRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				x := sinkSpan{Name: sp.Name, TraceID: hexID(sp.TraceId), SpanID: hexID(sp.SpanId), ParentID: hexID(sp.ParentSpanId),
					Attrs: map[string]string{}}
				for _, l := range sp.Links {
					x.Links = append(x.Links, hexID(l.SpanId))
				}
				if sp.Status != nil {
					x.Status = int32(sp.Status.Code)
				}
				for _, a := range sp.Attributes {
					x.Attrs[a.Key] = anyValue(a.Value.String())
				}
				for _, e := range sp.Events {
					x.Events = append(x.Events, e.Name)
				}
				s.spans = append(s.spans, x)
			}
		}
	}
}

func hexID(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// anyValue turns an AnyValue's text form (string_value:"x", int_value:3)
// into its value.
func anyValue(s string) string {
	_, v, ok := strings.Cut(s, ":")
	if !ok {
		return s
	}
	return strings.Trim(strings.TrimSpace(v), `"`)
}

// Spans returns what was received so far.
func (s *otlpSink) Spans() []sinkSpan {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sinkSpan(nil), s.spans...)
}

// Raw is every body received, concatenated.
func (s *otlpSink) Raw() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Join(s.raw, nil)
}

// Markers of content that must not be exported without capture.
const (
	telPrompt = "PROMPT-MARKER-7f3a please run the check"
	telOutput = "TOOL-OUTPUT-MARKER-91c2"
	telReply  = "REPLY-MARKER-55d0 all done"
	telKey    = "sk-telemetry-SECRET-KEY-0c41"
)

// telemetryTurn runs, on k, a turn whose first model request fails with a
// 503 and is retried, whose reply calls bash (approved by a person), and
// whose second reply ends it. It returns the session id.
func telemetryTurn(t *testing.T, k *kernelProc, fake *openaitest.Server) string {
	t.Helper()
	conn := k.createConnection(t, client.ConnectionInput{Name: ptr("fake"), BaseUrl: ptr(fake.BaseURL()), ApiKey: ptr(telKey), Models: []client.ModelInput{{Id: "gpt-t"}}})
	sid := k.createSession(t, client.CreateSessionInput{ConnectionId: ptr(conn), Title: ptr("t"), ApprovalMode: ptr(client.ApprovalModeAsk)})
	call := map[string]any{"index": 0, "id": "call_tel", "type": "function", "function": map[string]any{"name": "bash", "arguments": `{"command":"echo ` + telOutput + `"}`}}
	fake.Enqueue(
		openaitest.Error(503, "server_error", "", "the server is busy"),
		openaitest.Response{Events: []string{
			openaitest.Chunk("gpt-t", map[string]any{"role": "assistant", "tool_calls": []any{call}}, ""),
			openaitest.Chunk("gpt-t", map[string]any{}, "tool_calls"),
			openaitest.UsageChunk("gpt-t", 120, 15, 40),
		}},
		openaitest.Response{Events: []string{
			openaitest.Chunk("gpt-t", map[string]any{"role": "assistant", "content": telReply}, ""),
			openaitest.Chunk("gpt-t", map[string]any{}, "stop"),
			openaitest.UsageChunk("gpt-t", 160, 7, 0),
		}},
	)
	k.sendMessage(t, sid, telPrompt)
	k.waitEvent(t, sid, "approval_requested")
	var out struct {
		Events []struct {
			Type     string
			Approval *struct{ RequestID string }
		}
	}
	k.gql(t, `query($s: ID!) { events(sessionId: $s) { type approval { requestId } } }`, map[string]any{"s": sid}, &out)
	rid := ""
	for _, e := range out.Events {
		if e.Type == "approval_requested" {
			rid = e.Approval.RequestID
		}
	}
	k.resolveApproval(t, sid, rid, client.ApprovalDecisionApproved)
	k.waitEvent(t, sid, "turn_finished")
	return sid
}

// scrapeMetrics reads k's /metrics (with its token) and parses it with
// prometheus/common/expfmt.
func scrapeMetrics(t *testing.T, k *kernelProc) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(k.url() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("/metrics: %d %s", resp.StatusCode, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// counterSum adds the values of a counter family's series whose labels
// include want.
func counterSum(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	var sum float64
next:
	for _, m := range f.Metric {
		for k, v := range want {
			found := false
			for _, l := range m.Label {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		if c := m.GetCounter(); c != nil {
			sum += c.GetValue()
		}
	}
	return sum
}

// checkMetricsMatchLedger waits until /metrics' token counters equal the
// usage ledger's totals (usageTotals).
func checkMetricsMatchLedger(t *testing.T, k *kernelProc) map[string]*dto.MetricFamily {
	t.Helper()
	var fams map[string]*dto.MetricFamily
	var in, outTok float64
	var ledger struct {
		UsageTotals struct{ InputTokens, OutputTokens, CachedTokens float64 }
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		k.gql(t, `{ usageTotals { inputTokens outputTokens cachedTokens } }`, nil, &ledger)
		fams = scrapeMetrics(t, k)
		in = counterSum(fams, "gen_ai_client_token_usage_total", map[string]string{"gen_ai_token_type": "input"})
		outTok = counterSum(fams, "gen_ai_client_token_usage_total", map[string]string{"gen_ai_token_type": "output"})
		if (in == ledger.UsageTotals.InputTokens && outTok == ledger.UsageTotals.OutputTokens && in > 0) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if in != ledger.UsageTotals.InputTokens || outTok != ledger.UsageTotals.OutputTokens || in == 0 {
		names := make([]string, 0, len(fams))
		for n := range fams {
			names = append(names, n)
		}
		t.Fatalf("token counters input %v output %v, ledger %+v (families %v)", in, outTok, ledger.UsageTotals, names)
	}
	if c := counterSum(fams, "gen_ai_client_token_usage_total", map[string]string{"gen_ai_token_type": "cached"}); c != ledger.UsageTotals.CachedTokens {
		t.Fatalf("cached token counter %v, ledger %v", c, ledger.UsageTotals.CachedTokens)
	}
	return fams
}

// noContent fails when an exported document holds a prompt, a reply, a
// tool output or the API key.
func noContent(t *testing.T, where string, data []byte) {
	t.Helper()
	for _, m := range []string{"PROMPT-MARKER", telOutput, "REPLY-MARKER", telKey, "SECRET-KEY"} {
		if bytes.Contains(data, []byte(m)) {
			i := bytes.Index(data, []byte(m))
			t.Fatalf("%s holds %q (capture is off): …%s…", where, m, data[max(0, i-80):min(len(data), i+80)])
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// benchTelemetryArgs are the serve flags of -telemetry for the delta-path
// benchmarks.
func benchTelemetryArgs(b *testing.B) []string {
	switch *benchTelemetry {
	case "":
		return nil
	case "off":
		return []string{"--no-metrics"}
	case "otlp":
		sink := newOTLPSink(b)
		b.Setenv("OTEL_BSP_SCHEDULE_DELAY", "1000")
		b.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "5000")
		b.Cleanup(func() { b.Logf("telemetry: %d spans exported to the local receiver", len(sink.Spans())) })
		return []string{"--otlp-endpoint", sink.URL}
	}
	b.Fatalf("-telemetry %q: use off, otlp or nothing", *benchTelemetry)
	return nil
}
