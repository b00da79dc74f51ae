package host_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/plugins/host"
)

// bootEcho starts a Manager on data (no built-ins) and returns it with the
// echo plugin's listing right after Start.
func bootEcho(t *testing.T, data string) (*host.Manager, host.PluginInfo, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	m, err := host.NewManager(host.Config{DataDir: data, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m, pluginInfo(t, m, "echo"), logs
}

// A third-party plugin describes itself once: the next Start registers it
// from the cached description without starting it, the first call starts
// it, a stale cached description is replaced when the process describes
// itself otherwise, and a changed executable is described again at Start.
func TestThirdPartyDescriptionCached(t *testing.T) {
	data := t.TempDir()
	pdir := filepath.Join(data, "plugins")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(echoBin)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(pdir, "echo")
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cacheFile := filepath.Join(pdir, ".descriptions.json")

	// First Start: started to describe itself, description cached.
	m, info, logs := bootEcho(t, data)
	if info.PID == 0 || info.ProviderKind != "echo" || info.Version != "0.1.0" {
		t.Fatalf("first start: %+v\n%s", info, logs.String())
	}
	raw, err := os.ReadFile(cacheFile)
	if err != nil || !bytes.Contains(raw, []byte(`"echo"`)) {
		t.Fatalf("cache after first start: %s, %v", raw, err)
	}
	_ = m.Close()

	// Second Start: registered from the cache, not started.
	m, info, logs = bootEcho(t, data)
	if info.PID != 0 || !info.Healthy || info.ProviderKind != "echo" || info.Version != "0.1.0" || info.Kind != "provider" {
		t.Fatalf("second start: %+v\n%s", info, logs.String())
	}
	time.Sleep(300 * time.Millisecond)
	if pid := pluginInfo(t, m, "echo").PID; pid != 0 {
		t.Fatalf("echo started without a call: pid %d", pid)
	}
	p, err := m.Provider("echo")
	if err != nil {
		t.Fatal(err)
	}
	if got := streamText(t, p, core.Endpoint{}, userMsg("on demand")); got != "on demand" {
		t.Fatalf("stream %q", got)
	}
	if pid := pluginInfo(t, m, "echo").PID; pid == 0 {
		t.Fatal("the first call did not start echo")
	}
	_ = m.Close()

	// A stale cached description (same executable): registered from it,
	// then registered again from what the started process says.
	stale := bytes.ReplaceAll(raw, []byte(`"0.1.0"`), []byte(`"0.0.9"`))
	if bytes.Equal(stale, raw) {
		t.Fatalf("cache holds no version: %s", raw)
	}
	if err := os.WriteFile(cacheFile, stale, 0o600); err != nil {
		t.Fatal(err)
	}
	m, info, logs = bootEcho(t, data)
	if info.PID != 0 || info.Version != "0.0.9" {
		t.Fatalf("stale start: %+v", info)
	}
	p, _ = m.Provider("echo")
	streamText(t, p, core.Endpoint{}, userMsg("hi"))
	deadline := time.Now().Add(30 * time.Second)
	for pluginInfo(t, m, "echo").Version != "0.1.0" {
		if time.Now().After(deadline) {
			t.Fatalf("stale description kept: %+v\n%s", pluginInfo(t, m, "echo"), logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for {
		raw, _ = os.ReadFile(cacheFile)
		if bytes.Contains(raw, []byte(`"0.1.0"`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cache not rewritten: %s", raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = m.Close()

	// A changed executable (new modification time) describes itself again.
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(exe, later, later); err != nil {
		t.Fatal(err)
	}
	_, info, logs = bootEcho(t, data)
	if info.PID == 0 || info.Version != "0.1.0" {
		t.Fatalf("changed executable: %+v\n%s", info, logs.String())
	}
	if !strings.Contains(logs.String(), "plugin ready") {
		t.Fatalf("changed executable not described:\n%s", logs.String())
	}
}

// BenchmarkThirdPartyStart: Manager.Start with the echo plugin in its
// plugin directory, described by a process (no cache entry: the cache is
// removed before each Start) or registered from its cached description.
func BenchmarkThirdPartyStart(b *testing.B) {
	for _, cached := range []bool{false, true} {
		name := "describe"
		if cached {
			name = "cached"
		}
		b.Run(name, func(b *testing.B) {
			m := echoManager(b)
			data := filepath.Dir(filepath.Dir(m.RunDir()))
			if err := m.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			_ = m.Close()
			for b.Loop() {
				if !cached {
					_ = os.Remove(filepath.Join(data, "plugins", ".descriptions.json"))
				}
				m, err := host.NewManager(host.Config{DataDir: data})
				if err != nil {
					b.Fatal(err)
				}
				if err := m.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
				if _, err := m.Provider("echo"); err != nil {
					b.Fatal(err)
				}
				_ = m.Close()
			}
		})
	}
}
