package host_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	builtintools "github.com/foya-dev/foya/plugins/builtin/tools"
	"github.com/foya-dev/foya/plugins/host"
	"github.com/foya-dev/foya/providers/openai"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// describedBuiltins are the openai and tools built-ins registered from
// what they serve, as the kernel registers them: exec, when set, is the
// openai plugin's own executable.
func describedBuiltins(t testing.TB, data, exec string) []host.Builtin {
	oi := openai.Info()
	tools := kernelTools(t, data)
	ti := builtintools.Info(builtintools.PluginConfig{DataDir: data, ScratchDir: filepath.Join(data, "scratch")})
	tools.Describe = &host.Description{Tools: &ti}
	return []host.Builtin{{Name: "openai", Exec: exec, Describe: &host.Description{Provider: &oi}}, tools}
}

// Built-ins registered with a Description start at their first call: Start
// starts nothing; the provider, its capabilities and the tool list are
// known; a stream starts the provider alone; listing tools does not start
// the tool plugin; DescribePlugins does, and fills in its sandbox.
func TestDescribedBuiltinsStartOnDemand(t *testing.T) {
	for name, exec := range map[string]string{"reexec": "", "own-executable": openaiBin} {
		t.Run(name, func(t *testing.T) {
			data := t.TempDir()
			logs := &syncBuffer{}
			m, err := host.NewManager(host.Config{DataDir: data, Executable: kernelBin, Builtins: describedBuiltins(t, data, exec),
				Logger: slog.New(slog.NewJSONHandler(logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Start(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = m.Close() })
			for _, p := range m.Plugins() {
				if p.PID != 0 || !p.Healthy || p.Error != "" || p.Version == "" {
					t.Fatalf("after Start %+v", p)
				}
			}
			if oa := pluginInfo(t, m, "openai"); oa.ProviderKind != "openai" || len(oa.Capabilities) == 0 || (exec != "" && oa.Path != exec) {
				t.Fatalf("openai %+v", oa)
			}
			tl, err := m.ToolRunners()["tools"].Tools(ctxT(t))
			if err != nil || len(tl) != 6 || pluginInfo(t, m, "tools").PID != 0 {
				t.Fatalf("tools %v %v (pid %d)", tl, err, pluginInfo(t, m, "tools").PID)
			}
			p, err := m.Provider("openai")
			if err != nil {
				t.Fatal(err)
			}
			srv := openaitest.New(t)
			srv.Enqueue(openaitest.TextStream("m", "on ", "demand"))
			if got := streamText(t, p, core.Endpoint{BaseURL: srv.BaseURL()}, userMsg("hi")); got != "on demand" {
				t.Fatalf("text %q", got)
			}
			if pluginInfo(t, m, "openai").PID == 0 || pluginInfo(t, m, "tools").PID != 0 {
				t.Fatalf("after a stream: %+v", m.Plugins())
			}
			var tools host.PluginInfo
			for _, p := range m.DescribePlugins(ctxT(t)) {
				if p.Name == "tools" {
					tools = p
				}
			}
			if tools.PID == 0 || tools.Sandbox == "" || tools.SandboxDetail == "" {
				t.Fatalf("tools after DescribePlugins %+v\n%s", tools, logs.String())
			}
		})
	}
}

// BenchmarkColdFirstCall measures the first call to a built-in provider
// registered from its Description (nothing started at Start): the time
// from Start to the end of the first models listing against a local HTTP
// endpoint, which starts the plugin process, as the kernel binary
// re-executed and as the plugin's own executable.
func BenchmarkColdFirstCall(b *testing.B) {
	for name, exec := range map[string]string{"reexec": "", "own-executable": openaiBin} {
		b.Run(name, func(b *testing.B) {
			srv := openaitest.New(b)
			ep := core.Endpoint{BaseURL: srv.BaseURL()}
			oi := openai.Info()
			var total time.Duration
			for b.Loop() {
				b.StopTimer()
				data := b.TempDir()
				m, err := host.NewManager(host.Config{DataDir: data, Executable: kernelBin,
					Builtins: []host.Builtin{{Name: "openai", Exec: exec, Describe: &host.Description{Provider: &oi}}}})
				if err != nil {
					b.Fatal(err)
				}
				srv.Enqueue(openaitest.Response{Body: `{"object":"list","data":[{"id":"m","object":"model"}]}`})
				b.StartTimer()
				start := time.Now()
				if err := m.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
				p, err := m.Provider("openai")
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.ListModels(context.Background(), ep); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
				b.StopTimer()
				_ = m.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms-first-call")
		})
	}
}
