package host_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	builtintools "github.com/foya-dev/foya/plugins/builtin/tools"
	"github.com/foya-dev/foya/plugins/host"
	foyav1 "github.com/foya-dev/foya/plugins/proto/foya/v1"
	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/openai/openaitest"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
)

// Binaries built once by TestMain: a stand-in kernel (serves built-ins as
// `foyatest plugin <name>`) and the example echo plugin.
var (
	kernelBin string
	echoBin   string
	// openaiBin is the openai built-in's own executable
	// (cmd/foya-plugin-openai).
	openaiBin string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "foya-host-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kernelBin = filepath.Join(dir, "foyatest")
	echoBin = filepath.Join(dir, "echo")
	openaiBin = filepath.Join(dir, "foya-plugin-openai")
	// One go build for the three (each named after its package's
	// directory): the go command builds their packages in parallel, once.
	out, err := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./testdata/foyatest", "../../providers/echo", "../../cmd/foya-plugin-openai").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build the test's plugins: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// syncBuffer collects kernel logs for assertions.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startManager runs the openai built-in and, from the data dir's plugin
// directory, the echo plugin plus any extra executables.
func startManager(t *testing.T, extra map[string]string) (*host.Manager, *syncBuffer) {
	t.Helper()
	return newTestManager(t, host.Config{}, extra)
}

// allBuiltins are the built-in plugins of the kernel (daemon.BuiltinPlugins),
// which the stand-in kernel serves.
var allBuiltins = []host.Builtin{{Name: "anthropic"}, {Name: "openai"}, {Name: "openai-responses"}, {Name: "tools"}}

// kernelTools is the built-in tool plugin configured as the kernel
// configures it (daemon): its configuration in its environment, the data
// directory masked and the scratch directory bound back.
func kernelTools(t testing.TB, data string) host.Builtin {
	t.Helper()
	pc := builtintools.PluginConfig{DataDir: data, ScratchDir: filepath.Join(data, "scratch")}
	env, err := pc.Env()
	if err != nil {
		t.Fatal(err)
	}
	return host.Builtin{Name: "tools", Env: []string{env}, Mask: &host.Mask{Hidden: []string{data}, Expose: []string{pc.ScratchDir}}}
}

// newTestManager starts a manager with cfg (its data directory, executable
// and logger filled in; all built-ins unless cfg names some, the tool
// plugin configured as the kernel configures it) whose plugin directory holds the echo plugin and
// the extra executables (name → script).
func newTestManager(t *testing.T, cfg host.Config, extra map[string]string) (*host.Manager, *syncBuffer) {
	t.Helper()
	data := t.TempDir()
	pdir := filepath.Join(data, "plugins")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(echoBin, filepath.Join(pdir, "echo")); err != nil {
		t.Fatal(err)
	}
	for name, script := range extra {
		if err := os.WriteFile(filepath.Join(pdir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	logs := &syncBuffer{}
	if cfg.Builtins == nil {
		cfg.Builtins = slices.Clone(allBuiltins)
	}
	for i, b := range cfg.Builtins {
		if b.Name == "tools" {
			cfg.Builtins[i] = kernelTools(t, data)
		}
	}
	cfg.DataDir, cfg.Executable, cfg.Logger = data, kernelBin, slog.New(slog.NewJSONHandler(logs, nil))
	m, err := host.NewManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m, logs
}

func userMsg(text string) core.ProviderRequest {
	return core.ProviderRequest{Model: "m", Messages: []core.ProviderMessage{{Role: core.RoleUser, Content: []core.ContentPart{{Type: "text", Text: text}}}}}
}

func streamText(t *testing.T, p core.Provider, ep core.Endpoint, req core.ProviderRequest) string {
	t.Helper()
	s, err := p.Stream(ctxT(t), ep, req)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, ev := range drain(t, s) {
		if ev.Kind == core.StreamError {
			t.Fatalf("error event %+v", ev.Err)
		}
		text.WriteString(ev.Text)
	}
	return text.String()
}

func pluginInfo(t *testing.T, m *host.Manager, name string) host.PluginInfo {
	t.Helper()
	for _, p := range m.Plugins() {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("plugin %s not listed", name)
	return host.PluginInfo{}
}

func TestRealPluginProcesses(t *testing.T) {
	m, logs := startManager(t, nil)
	srv := openaitest.New(t)
	srv.Enqueue(openaitest.TextStream("gpt-x", "from ", "openai"))

	oa, err := m.Provider("openai")
	if err != nil {
		t.Fatal(err)
	}
	if got := streamText(t, oa, core.Endpoint{ConnectionID: "c1", BaseURL: srv.BaseURL(), APIKey: "sk-secret"}, userMsg("hi")); got != "from openai" {
		t.Fatalf("openai text %q", got)
	}
	if srv.LastRequest().Header.Get("Authorization") != "Bearer sk-secret" {
		t.Fatal("key did not reach the endpoint")
	}
	echo, err := m.Provider("echo")
	if err != nil {
		t.Fatal(err)
	}
	if got := streamText(t, echo, core.Endpoint{}, userMsg("say this back")); got != "say this back" {
		t.Fatalf("echo text %q", got)
	}
	info := pluginInfo(t, m, "openai")
	if !info.Healthy || !info.Builtin || info.Kind != "provider" || info.ProviderKind != "openai" || info.PID == 0 || len(info.Capabilities) == 0 {
		t.Fatalf("openai info %+v", info)
	}
	if e := pluginInfo(t, m, "echo"); !e.Healthy || e.Builtin || e.Version != "0.1.0" {
		t.Fatalf("echo info %+v", e)
	}
	if _, err := echo.(core.WebSearcher).WebSearch(ctxT(t), core.Endpoint{}, core.WebSearchRequest{}); !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("echo web search: %v", err)
	}
	if _, err := m.Provider("nope"); !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("unknown kind: %v", err)
	}
	if strings.Contains(logs.String(), "sk-secret") {
		t.Fatal("api key appeared in the kernel log")
	}
	if !strings.Contains(logs.String(), `"plugin":"openai"`) {
		t.Fatalf("no plugin log lines: %s", logs.String())
	}
}

// The built-in tool plugin runs as `<kernel> plugin tools` and its file
// changes cross the process boundary intact.
func TestRealBuiltinToolsProcess(t *testing.T) {
	m, _ := startManager(t, nil)
	info := pluginInfo(t, m, "tools")
	if !info.Healthy || !info.Builtin || info.Kind != "tool" || info.PID == 0 || len(info.Tools) != 6 {
		t.Fatalf("tools info %+v", info)
	}
	r, ok := m.ToolRunners()["tools"]
	if !ok {
		t.Fatal("no tools runner")
	}
	scope := t.TempDir()
	res, err := r.Call(ctxT(t), core.ToolCallRequest{Name: "bash", ScopeDir: scope, Input: []byte(`{"command":"printf hi > a.txt; env"}`)})
	if err != nil || res.IsError {
		t.Fatalf("bash %+v %v", res, err)
	}
	if strings.Contains(res.Text, "FOYA_PLUGIN") || !strings.Contains(res.Text, "TERM=dumb") {
		t.Fatalf("bash environment:\n%s", res.Text)
	}
	want := core.ToolFileChange{Path: "a.txt", Action: core.FileCreate, After: []byte("hi"), AfterSHA256: "8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4"}
	if len(res.FileChanges) != 1 || !reflect.DeepEqual(res.FileChanges[0], want) || !strings.Contains(res.Diff, "+++ b/a.txt") {
		t.Fatalf("file changes %+v diff %q", res.FileChanges, res.Diff)
	}
}

func TestKilledPluginFailsFastAndRestarts(t *testing.T) {
	m, _ := startManager(t, nil)
	srv := openaitest.New(t)
	srv.Enqueue(openaitest.Response{Hang: true, Events: []string{openaitest.Chunk("m", map[string]any{"content": "first"}, "")}})
	oa, err := m.Provider("openai")
	if err != nil {
		t.Fatal(err)
	}
	ep := core.Endpoint{BaseURL: srv.BaseURL()}
	s, err := oa.Stream(ctxT(t), ep, userMsg("hi"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ev, err := s.Recv(); err != nil || ev.Text != "first" {
		t.Fatalf("first event %+v %v", ev, err)
	}
	pid := pluginInfo(t, m, "openai").PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	_, err = s.Recv()
	if elapsed := time.Since(killed); elapsed > time.Second {
		t.Fatalf("in-flight call took %v to fail", elapsed)
	}
	if core.ErrorCode(err) != core.CodeUnavailable {
		t.Fatalf("in-flight call: %v (code %s)", err, core.ErrorCode(err))
	}

	srv.Enqueue(openaitest.TextStream("m", "again"))
	if got := streamText(t, oa, ep, userMsg("hi")); got != "again" {
		t.Fatalf("after restart %q", got)
	}
	if info := pluginInfo(t, m, "openai"); !info.Healthy || info.PID == pid || info.PID == 0 {
		t.Fatalf("after restart %+v (old pid %d)", info, pid)
	}
}

func TestHandshakeVersionMismatch(t *testing.T) {
	script := "#!/bin/sh\nexec " + kernelBin + " plugin badversion\n"
	m, _ := startManager(t, map[string]string{"future": script})
	info := pluginInfo(t, m, "future")
	if info.Healthy || !strings.Contains(info.Error, "could not start") {
		t.Fatalf("future plugin %+v", info)
	}
	if _, err := m.Provider("echo"); err != nil {
		t.Fatalf("other plugins must still run: %v", err)
	}
}

func TestHandshakeErrorMessage(t *testing.T) {
	data := t.TempDir()
	pdir := filepath.Join(data, "plugins")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pdir, "future"), []byte("#!/bin/sh\nexec "+kernelBin+" plugin badversion\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	m, err := host.NewManager(host.Config{DataDir: data, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if !strings.Contains(strings.ToLower(logs.String()), "incompatible api version") {
		t.Fatalf("log does not explain the mismatch: %s", logs.String())
	}
}

func TestPluginsDieWithKernel(t *testing.T) {
	data := t.TempDir()
	pdir := filepath.Join(data, "plugins")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(echoBin, filepath.Join(pdir, "echo")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(kernelBin, "host", data, kernelBin)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("read pids: %v", err)
	}
	var pids []int
	for _, f := range strings.Fields(strings.TrimPrefix(line, "PIDS ")) {
		pid, err := strconv.Atoi(f)
		if err != nil || pid == 0 {
			t.Fatalf("bad pid line %q", line)
		}
		pids = append(pids, pid)
	}
	if len(pids) != 5 {
		t.Fatalf("want anthropic, openai, openai-responses, tools and echo pids, got %q", line)
	}
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("plugin %d not running before the kill", pid)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("plugin %d survived the kernel", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// A plugin built with the protocol 1 SDK (no provider-native state, no
// native compactor) still loads and streams next to protocol 2 plugins.
func TestProtocolV1PluginStillWorks(t *testing.T) {
	data := t.TempDir()
	pdir := filepath.Join(data, "plugins")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pdir, "old"), []byte("#!/bin/sh\nexec "+kernelBin+" plugin v1openai\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	m, err := host.NewManager(host.Config{DataDir: data, Builtins: []host.Builtin{{Name: "anthropic"}}, Executable: kernelBin, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if !strings.Contains(logs.String(), `"plugin":"anthropic","pid":`) || !strings.Contains(logs.String(), `"protocol":2`) {
		t.Fatalf("the built-in did not negotiate protocol 2: %s", logs.String())
	}
	if info := pluginInfo(t, m, "old"); !info.Healthy || info.ProviderKind != "openai" {
		t.Fatalf("old plugin %+v", info)
	}
	if !strings.Contains(logs.String(), `"protocol":1`) {
		t.Fatalf("protocol 1 was not negotiated: %s", logs.String())
	}
	p, err := m.Provider("openai")
	if err != nil {
		t.Fatal(err)
	}
	srv := openaitest.New(t)
	srv.Enqueue(openaitest.TextStream("m", "still ", "works"))
	ep := core.Endpoint{ConnectionID: "c", ProviderKind: "openai", BaseURL: srv.BaseURL()}
	req := userMsg("hi")
	req.Messages = append(req.Messages, core.ProviderMessage{Role: core.RoleAssistant, Content: []core.ContentPart{{Type: "text", Text: "x"}}, State: []byte("native state a v1 plugin never sees")})
	if got := streamText(t, p, ep, req); got != "still works" {
		t.Fatalf("stream %q", got)
	}
	if _, err := m.Provider("acme"); err == nil || !strings.Contains(err.Error(), "the plugins offer: anthropic, openai") {
		t.Fatalf("unknown kind error %v", err)
	}
}

// A plugin built with this SDK still runs under a kernel that speaks only
// protocol 1.
func TestNewPluginUnderProtocolV1Host(t *testing.T) {
	cmd := exec.Command(kernelBin, "plugin", "anthropic")
	hs := sdk.Handshake
	hs.ProtocolVersion = 1
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig: hs, Plugins: sdk.ClientPlugins(), Cmd: cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           hclog.New(&hclog.LoggerOptions{Level: hclog.Off}),
	})
	defer client.Kill()
	rpc, err := client.Client()
	if err != nil {
		t.Fatal(err)
	}
	if v := client.NegotiatedVersion(); v != 1 {
		t.Fatalf("negotiated %d", v)
	}
	raw, err := rpc.Dispense(sdk.ProviderPluginName)
	if err != nil {
		t.Fatal(err)
	}
	info, err := raw.(foyav1.ProviderClient).Describe(ctxT(t), &foyav1.DescribeRequest{})
	if err != nil || info.GetKind() != "anthropic" {
		t.Fatalf("describe %v %v", info, err)
	}
}

// A request far beyond gRPC's 4 MiB default (long history, images,
// native state) crosses the process boundary both ways.
func TestLargeRequestCrossesTheBoundary(t *testing.T) {
	m, _ := startManager(t, nil)
	p, err := m.Provider("echo")
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 6<<20)
	req := userMsg(big)
	req.Messages = append([]core.ProviderMessage{{Role: core.RoleAssistant, Content: []core.ContentPart{{Type: "text", Text: "earlier"}}, State: make([]byte, 2<<20)}}, req.Messages...)
	if got := streamText(t, p, core.Endpoint{ProviderKind: "echo"}, req); len(got) != len(big) {
		t.Fatalf("echoed %d bytes, want %d", len(got), len(big))
	}
}

// exeRSS is the resident size, in KiB, of a process's read-only mappings of
// its executable (code and read-only data).
func exeRSS(t *testing.T, pid int) int64 {
	t.Helper()
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		t.Fatal(err)
	}
	var kb int64
	mine := false
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 6 && strings.Contains(f[0], "-") && len(f[1]) == 4:
			mine = f[1][1] == '-' && strings.TrimSuffix(strings.Join(f[5:], " "), " (deleted)") == exe
		case len(f) >= 2 && f[0] == "Rss:" && mine:
			n, _ := strconv.ParseInt(f[1], 10, 64)
			kb += n
		}
	}
	return kb
}

// TestIdleBuiltinTrimsAndKeepsWorking: a built-in plugin that has been
// idle hands back its mappings of executable pages (internal/memtrim), and
// streams correctly afterwards, again and again.
func TestIdleBuiltinTrimsAndKeepsWorking(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("executable pages are only dropped on Linux")
	}
	m, _ := startManager(t, nil)
	srv := openaitest.New(t)
	oa, err := m.Provider("openai")
	if err != nil {
		t.Fatal(err)
	}
	ep := core.Endpoint{ConnectionID: "c1", BaseURL: srv.BaseURL(), APIKey: "k"}
	pid := pluginInfo(t, m, "openai").PID
	start := exeRSS(t, pid)
	deadline := time.Now().Add(60 * time.Second)
	for exeRSS(t, pid) >= start*8/10 {
		if time.Now().After(deadline) {
			t.Fatalf("executable RSS stayed at %d KiB (was %d KiB)", exeRSS(t, pid), start)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("executable RSS %d KiB → %d KiB", start, exeRSS(t, pid))
	for round := range 2 {
		srv.Enqueue(openaitest.TextStream("gpt-x", "still ", "streaming"))
		if got := streamText(t, oa, ep, userMsg("hi")); got != "still streaming" {
			t.Fatalf("round %d: text %q", round, got)
		}
		if got := pluginInfo(t, m, "openai").PID; got != pid {
			t.Fatalf("round %d: plugin restarted (pid %d → %d)", round, pid, got)
		}
		time.Sleep(sdk.DefaultIdleAfter + time.Second) // trimmed again
	}
}

// TestUnusedBuiltinProvidersPark: with ParkUnusedAfter, built-in provider
// plugins nothing called are stopped (listed healthy, no pid), a used one
// keeps running, the tool plugin is never parked, and a parked provider
// starts again on its first call.
func TestUnusedBuiltinProvidersPark(t *testing.T) {
	logs := &syncBuffer{}
	data := t.TempDir()
	m, err := host.NewManager(host.Config{DataDir: data, Executable: kernelBin, ParkUnusedAfter: 2 * time.Second,
		Builtins: []host.Builtin{{Name: "openai"}, {Name: "openai-responses"}, kernelTools(t, data)}, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	srv := openaitest.New(t)
	ep := core.Endpoint{BaseURL: srv.BaseURL()}
	resp, err := m.Provider("openai-responses")
	if err != nil {
		t.Fatal(err)
	}
	respPID := pluginInfo(t, m, "openai-responses").PID
	oaPID := pluginInfo(t, m, "openai").PID
	// Use openai-responses before the park (a models listing counts).
	_, _ = resp.ListModels(ctxT(t), ep)
	deadline := time.Now().Add(60 * time.Second)
	for pluginInfo(t, m, "openai").PID != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("unused openai plugin still running: %s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if alive(oaPID) {
		time.Sleep(2 * time.Second)
		if alive(oaPID) {
			t.Fatalf("parked process %d still alive", oaPID)
		}
	}
	if info := pluginInfo(t, m, "openai"); !info.Healthy || info.Error != "" {
		t.Fatalf("parked openai %+v", info)
	}
	if info := pluginInfo(t, m, "openai-responses"); info.PID != respPID || !info.Healthy {
		t.Fatalf("used plugin parked: %+v (pid was %d)", info, respPID)
	}
	if info := pluginInfo(t, m, "tools"); info.PID == 0 || !info.Healthy {
		t.Fatalf("tool plugin parked: %+v", info)
	}
	oa, err := m.Provider("openai")
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(openaitest.TextStream("m", "back"))
	if got := streamText(t, oa, ep, userMsg("hi")); got != "back" {
		t.Fatalf("after park %q", got)
	}
	if info := pluginInfo(t, m, "openai"); info.PID == 0 || info.PID == oaPID || !info.Healthy {
		t.Fatalf("openai after first use %+v", info)
	}
}

// A plugin process cannot hand the kernel more than it takes for a call:
// 32 MiB for an ordinary answer (go-plugin's client would take 2 GiB), the
// requested images or one video at the attachment limit each for a
// generation. The refusals name the limit, and the plugin keeps serving.
func TestPluginAnswersBounded(t *testing.T) {
	m, _ := startManager(t, map[string]string{"bloat": "#!/bin/sh\nexec " + kernelBin + " plugin bloat\n"})
	p, err := m.Provider("bloat")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ListModels(ctxT(t), core.Endpoint{}); err == nil || !strings.Contains(err.Error(), "larger than max") {
		t.Fatalf("a 40 MiB model list: %v", err)
	}
	var pe *core.ProviderError
	_, err = p.(core.ImageGenerator).GenerateImage(ctxT(t), core.Endpoint{}, core.ImageRequest{Model: "m", Prompt: "p", Count: 1})
	if !errors.As(err, &pe) || !strings.Contains(pe.Message, "images larger than 21 MiB") {
		t.Fatalf("two images of 20 MiB for one asked: %v", err)
	}
	_, err = p.(core.VideoGenerator).GenerateVideo(ctxT(t), core.Endpoint{}, core.VideoRequest{Model: "m", Prompt: "p", Protocol: "openai_video"})
	if !errors.As(err, &pe) || !strings.Contains(pe.Message, "a video larger than 21 MiB") {
		t.Fatalf("two videos of 11 MiB: %v", err)
	}
	// Two images asked for: 41 MiB; three of 20 MiB are still refused,
	// and the same process answers.
	_, err = p.(core.ImageGenerator).GenerateImage(ctxT(t), core.Endpoint{}, core.ImageRequest{Model: "m", Prompt: "p", Count: 2})
	if !errors.As(err, &pe) || !strings.Contains(pe.Message, "larger than 41 MiB") {
		t.Fatalf("three images of 20 MiB for two asked: %v", err)
	}
	if info := pluginInfo(t, m, "bloat"); !info.Healthy {
		t.Fatalf("bloat after the refusals: %+v", info)
	}
}
