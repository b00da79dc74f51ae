package host_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/plugins/host"
	"github.com/foya-dev/foya/plugins/host/hosttest"
	"github.com/foya-dev/foya/plugins/sdk"
)

const deltasPerStream = 1000

// floodProvider streams deltasPerStream small text deltas.
type floodProvider struct{ fakeProvider }

func (floodProvider) Stream(_ context.Context, _ sdk.Endpoint, _ sdk.Request, out sdk.StreamSender) (string, error) {
	for range deltasPerStream {
		if err := out.Text("token "); err != nil {
			return "", err
		}
	}
	return "stop", nil
}

func countEvents(b *testing.B, p core.Provider, req core.ProviderRequest) int {
	s, err := p.Stream(context.Background(), core.Endpoint{}, req)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	n := 0
	for {
		_, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
}

// BenchmarkStreamEventsInProcess: events through the gRPC plugin boundary
// (in-process connection, real gRPC + proto + adapters).
func BenchmarkStreamEventsInProcess(b *testing.B) {
	p, _ := hosttest.NewInProcess(b, sdk.ServeConfig{Provider: &floodProvider{}, Logger: slog.New(slog.DiscardHandler)})
	b.ResetTimer()
	events := 0
	for b.Loop() {
		events += countEvents(b, p, core.ProviderRequest{Model: "m"})
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}

// nopSender is the baseline: the same provider loop without any boundary.
type nopSender struct{}

func (nopSender) Text(string) error                { return nil }
func (nopSender) Reasoning(string) error           { return nil }
func (nopSender) ToolCall(sdk.ToolCallDelta) error { return nil }
func (nopSender) Usage(sdk.Usage) error            { return nil }
func (nopSender) State([]byte) error               { return nil }

// BenchmarkStreamEventsDirect is the per-delta baseline without gRPC; the
// per-delta overhead of the boundary is the difference in ns/event.
func BenchmarkStreamEventsDirect(b *testing.B) {
	p := &floodProvider{}
	events := 0
	for b.Loop() {
		if _, err := p.Stream(context.Background(), sdk.Endpoint{}, sdk.Request{}, nopSender{}); err != nil {
			b.Fatal(err)
		}
		events += deltasPerStream
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}

// BenchmarkUnaryRoundTrip: one ListModels call through the boundary.
func BenchmarkUnaryRoundTrip(b *testing.B) {
	p, _ := hosttest.NewInProcess(b, sdk.ServeConfig{Provider: &fakeProvider{caps: []sdk.Capability{sdk.CapModelLister}}, Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	for b.Loop() {
		if _, err := p.ListModels(ctx, core.Endpoint{}); err != nil {
			b.Fatal(err)
		}
	}
}

func echoManager(b *testing.B) *host.Manager {
	data := b.TempDir()
	pdir := filepath.Join(data, "plugins")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.Symlink(echoBin, filepath.Join(pdir, "echo")); err != nil {
		b.Fatal(err)
	}
	m, err := host.NewManager(host.Config{DataDir: data})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkPluginStart: launch the echo plugin process, handshake, Describe,
// and kill it.
func BenchmarkPluginStart(b *testing.B) {
	for b.Loop() {
		m := echoManager(b)
		if err := m.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		if _, err := m.Provider("echo"); err != nil {
			b.Fatal(err)
		}
		_ = m.Close()
	}
}

// BenchmarkStreamEventsProcess: events from a real plugin process (echo
// streams one delta per word).
func BenchmarkStreamEventsProcess(b *testing.B) {
	m := echoManager(b)
	if err := m.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	p, err := m.Provider("echo")
	if err != nil {
		b.Fatal(err)
	}
	req := userMsg(strings.Repeat("word ", deltasPerStream))
	b.ResetTimer()
	events := 0
	for b.Loop() {
		events += countEvents(b, p, req)
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}
