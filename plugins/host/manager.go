// Package host runs Foya plugins out of process with hashicorp/go-plugin
// over gRPC and adapts them to core interfaces: provider plugins become
// core.Provider values, tool plugins core.ToolRunner values.
//
// The host knows no plugin: the kernel's composition root (package daemon)
// names the built-in plugins compiled into the binary, and serves one when
// the Manager re-executes the binary as `<exe> plugin <name>`:
//
//	// `foya plugin <name>`: the kernel re-executed as a built-in plugin
//	serve, ok := builtins[name] // name → func(onIdle func()) error
//	return serve.Run(serve) // package plugins/builtin/serve
//
//	m, err := host.NewManager(host.Config{DataDir: dataDir, Builtins: []host.Builtin{{Name: "openai"}}, Logger: log})
//	if err := m.Start(ctx); err != nil { ... }
//	defer m.Close()
//	p, err := m.Provider(conn.ProviderKind)
package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/internal/memtrim"
	"github.com/foya-dev/foya/plugins/internal/pluginenv"
)

// Config configures a Manager.
type Config struct {
	// DataDir is the kernel's private data directory. Third-party plugins
	// are discovered in <DataDir>/plugins; sockets live in
	// <DataDir>/run/plugins, which Start empties.
	DataDir string
	// PluginDirs are extra directories searched for plugin executables.
	PluginDirs []string
	// Builtins are the built-in plugins to run: Executable serves each as
	// `<Executable> plugin <name>` (plugins/builtin/serve), or as its own Builtin.Exec. Empty: none.
	Builtins []Builtin
	// Executable is the kernel binary that serves built-ins as
	// `<Executable> plugin <name>`; empty means os.Executable().
	Executable string
	// StartTimeout bounds one plugin launch; default 20s.
	StartTimeout time.Duration
	// ParkUnusedAfter, when positive, stops each built-in provider plugin
	// that nothing called in that time after Start (no connection of its
	// kind listed models or streamed): it starts again on first use and
	// stays listed as healthy meanwhile. Zero keeps every plugin running.
	ParkUnusedAfter time.Duration
	// IdleStopAfter, when positive, stops a built-in plugin (provider or
	// tools) once no call or stream of it has been in progress for that
	// long; the next call starts it again, and it stays listed as healthy
	// without a pid meanwhile. A call or stream in progress is never
	// interrupted. Third-party plugins keep running. Zero: never stopped.
	IdleStopAfter time.Duration
	// OnIdleStop, when set, is called after a plugin was stopped for
	// idleness (the kernel hands its own memory back then: stopping the
	// process ran code in the kernel).
	OnIdleStop func()
	Logger     *slog.Logger
}

// Builtin is a plugin compiled into the kernel binary. The host knows none
// by itself: the kernel's composition root names them.
type Builtin struct {
	Name string
	// Env is added to the environment of its process (the configuration of
	// the tool plugin, for instance).
	Env []string
	// Mask, when not nil, confines its process (see Mask).
	Mask *Mask
	// Exec, when set, is the plugin's own executable, run without
	// arguments instead of `<Config.Executable> plugin <name>`.
	Exec string
	// Describe, when set, says what it serves without starting it: it
	// then starts at its first call, not at Start (ondemand.go).
	Describe *Description
}

// Mask starts a built-in plugin in its own user and mount namespaces with
// Hidden masked and Expose (and the plugin's run directory) bound back, so
// that none of its path tools can reach the hidden paths whatever a race
// makes them open. Where user namespaces or the masks do not work here, the
// plugin runs unmasked (logged) and relies on its own checks.
type Mask struct {
	Hidden []string // the kernel's data directory, secret files
	Expose []string // directories inside Hidden it works in; created when missing
}

// PluginInfo describes a plugin for the `plugins` query.
type PluginInfo = core.PluginInfo

// Manager owns the plugin processes.
type Manager struct {
	cfg Config
	log *slog.Logger

	mu        sync.Mutex
	parkTimer *time.Timer
	plugins   []*managed
	providers map[string]*providerAdapter
	tools     map[string]*toolRunner
	// cacheMu serialises writes of the description cache (desccache.go).
	cacheMu sync.Mutex
}

type managed struct {
	proc *process
	info PluginInfo
	// describeTools: registered from a Description, its tools not yet
	// described by a running process (ondemand.go); guarded by Manager.mu.
	describeTools bool
	// desc is the Builtin's Description (nil: described at Start).
	desc *Description
	// live is what a third-party plugin last described (cached or by a
	// running process); guarded by Manager.mu.
	live liveDescription
}

// NewManager validates cfg; Start launches the plugins.
func NewManager(cfg Config) (*Manager, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("plugin manager: data dir is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 20 * time.Second
	}
	if cfg.Executable == "" && len(cfg.Builtins) > 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("plugin manager: find own executable: %w", err)
		}
		cfg.Executable = exe
	}
	return &Manager{cfg: cfg, log: cfg.Logger, providers: map[string]*providerAdapter{}, tools: map[string]*toolRunner{}}, nil
}

// RunDir is where plugin sockets live.
func (m *Manager) RunDir() string { return filepath.Join(m.cfg.DataDir, "run", "plugins") }

// Start empties the run directory, launches the built-ins and every
// executable in the plugin directories, and asks each what it serves. A
// plugin that fails is logged and listed as unhealthy; it does not fail
// Start.
func (m *Manager) Start(ctx context.Context) error {
	runDir := m.RunDir()
	if err := os.RemoveAll(runDir); err != nil {
		return fmt.Errorf("clean plugin run dir: %w", err)
	}
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		return fmt.Errorf("create plugin run dir: %w", err)
	}
	var procs []*managed
	for _, b := range m.cfg.Builtins {
		env := append(builtinEnv(), b.Env...)
		path, args := m.cfg.Executable, []string{"plugin", b.Name}
		if b.Exec != "" {
			path, args = b.Exec, nil
		}
		proc := m.newProcess(b.Name, path, args, env)
		if b.Mask != nil {
			proc.wrap = m.lazyMask(b.Name, *b.Mask)
		}
		proc.idleStop, proc.onIdleStop = m.cfg.IdleStopAfter, m.cfg.OnIdleStop
		procs = append(procs, &managed{
			proc: proc,
			info: PluginInfo{Name: b.Name, Builtin: true, Path: path},
			desc: b.Describe,
		})
	}
	cache := m.loadDescCache()
	dirs := append([]string{filepath.Join(m.cfg.DataDir, "plugins")}, m.cfg.PluginDirs...)
	for _, dir := range dirs {
		found, err := discover(dir)
		if err != nil {
			return err
		}
		for _, path := range found {
			name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
			procs = append(procs, &managed{
				proc: m.newProcess(name, path, nil, minimalEnv()),
				info: PluginInfo{Name: name, Path: path},
			})
		}
	}
	for _, mp := range procs {
		if mp.desc != nil {
			m.registerDescribed(mp, *mp.desc)
			continue
		}
		if !mp.info.Builtin {
			m.startThirdParty(ctx, mp, cache)
			continue
		}
		m.describe(ctx, mp)
		mp.proc.used.Store(false) // describing is not a use
	}
	m.cacheMu.Lock()
	err := cache.save()
	m.cacheMu.Unlock()
	if err != nil {
		m.log.Warn("plugin description cache not saved; third-party plugins describe themselves at the next start again", "err", err)
	}
	if m.cfg.ParkUnusedAfter > 0 {
		m.mu.Lock()
		m.parkTimer = time.AfterFunc(m.cfg.ParkUnusedAfter, func() { m.parkUnused(procs) })
		m.mu.Unlock()
	}
	return nil
}

// parkUnused stops the built-in provider plugins nothing has called since
// Start (see Config.ParkUnusedAfter).
func (m *Manager) parkUnused(procs []*managed) {
	for _, mp := range procs {
		if mp.info.Builtin && mp.info.Kind == "provider" && mp.info.Error == "" {
			mp.proc.park()
		}
	}
}

func (m *Manager) newProcess(name, path string, args, env []string) *process {
	return &process{name: name, path: path, args: args, env: env, runDir: m.RunDir(), startTimeout: m.cfg.StartTimeout, log: m.log}
}

// discover lists executable regular files in dir; a missing dir is empty.
func discover(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read plugin dir %s: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			continue
		}
		out = append(out, filepath.Join(dir, e.Name()))
	}
	sort.Strings(out)
	return out, nil
}

// minimalEnv is all a third-party plugin inherits: no host secrets.
func minimalEnv() []string {
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	for _, k := range []string{"HOME", "TMPDIR", "LANG", "TZ", "SSL_CERT_FILE", "SSL_CERT_DIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// builtinEnv adds the proxy settings built-in providers need to reach their
// endpoints, and the kernel's garbage collector, runtime (GODEBUG: a
// memprofilerate, a gctrace), memory-trim and profiling settings;
// built-ins are the kernel's own code, and bash builds its commands' own
// environment (none of these reaches a tool command). They also get the
// kernel's PATH, so that bash finds the user's toolchains (go, cargo, node
// under their own directories); the sandbox lets a command read what its
// PATH names, never $HOME itself (docs/sandbox.md).
func builtinEnv() []string {
	env := minimalEnv()
	if p := os.Getenv("PATH"); p != "" {
		env[0] = "PATH=" + p
	}
	for _, k := range []string{"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy",
		"GOGC", "GOMEMLIMIT", "GODEBUG", pluginenv.NoTrim, memtrim.KeepFoliosEnv, memtrim.FaultAroundEnv, pluginenv.Profile} { // memory settings and profiling: see plugins/builtin/serve
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// describe starts mp and registers what it serves; ok when it described
// itself without error (what may be cached).
func (m *Manager) describe(ctx context.Context, mp *managed) (d liveDescription, ok bool) {
	log := m.log.With("plugin", mp.info.Name)
	ctx, cancel := context.WithTimeout(ctx, m.cfg.StartTimeout)
	defer cancel()
	// Describing counts as a call in progress: a plugin stopped for
	// idleness must not go away between its start and its description.
	c, release, err := mp.proc.acquire(ctx)
	if err != nil {
		log.Error("plugin did not start", "path", mp.info.Path, "err", err)
		mp.info.Error = err.Error()
		m.add(mp, nil, nil)
		return d, false
	}
	defer release()
	d, err = fetchDescription(ctx, c)
	if err != nil {
		log.Error("describe plugin", "err", err)
		mp.info.Error = err.Error()
	}
	prov, tools := m.fromDescription(mp, d, c)
	if mp.info.Kind == "" && mp.info.Error == "" {
		mp.info.Error = "plugin serves neither a provider nor tools"
		log.Error(mp.info.Error)
	}
	log.Info("plugin ready", "kind", mp.info.Kind, "provider_kind", mp.info.ProviderKind, "version", mp.info.Version, "capabilities", mp.info.Capabilities)
	m.add(mp, prov, tools)
	return d, mp.info.Error == ""
}

// fromDescription sets mp.info from d and builds its adapters; listedBy is
// the process that described it (nil: from the cache).
func (m *Manager) fromDescription(mp *managed, d liveDescription, listedBy *clients) (*providerAdapter, *toolRunner) {
	var kinds []string
	var prov *providerAdapter
	var tools *toolRunner
	mp.info.ProviderKind, mp.info.Version, mp.info.Capabilities, mp.info.Tools = "", "", nil, nil
	mp.info.Sandbox, mp.info.SandboxDetail = "", ""
	if pi := d.Provider; pi != nil {
		prov = newProviderAdapter(mp.info.Name, mp.proc, pi, d.Protocol)
		kinds = append(kinds, "provider")
		mp.info.ProviderKind, mp.info.Version, mp.info.Capabilities = pi.GetKind(), pi.GetVersion(), pi.GetCapabilities()
	}
	if ti := d.Tools; ti != nil {
		tools = &toolRunner{plugin: mp.info.Name, src: mp.proc, listedBy: listedBy, known: true}
		kinds = append(kinds, "tool")
		if mp.info.Version == "" {
			mp.info.Version = ti.GetVersion()
		}
		for _, t := range ti.GetTools() {
			mp.info.Tools = append(mp.info.Tools, t.GetName())
			tools.listed = append(tools.listed, toolInfoFromProto(t))
		}
		mp.info.Sandbox, mp.info.SandboxDetail = ti.GetSandbox(), ti.GetSandboxDetail()
		if mp.info.Sandbox == "" {
			mp.info.Sandbox, mp.info.SandboxDetail = "none", "the plugin does not say how it confines its tools"
		}
		logSandbox(m.log.With("plugin", mp.info.Name), mp.info.Sandbox, mp.info.SandboxDetail)
	}
	mp.info.Kind = strings.Join(kinds, "+")
	return prov, tools
}

func (m *Manager) add(mp *managed, prov *providerAdapter, tools *toolRunner) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.plugins = append(m.plugins, mp)
	if prov != nil {
		if _, dup := m.providers[prov.kind]; dup {
			m.log.Warn("provider kind served twice; keeping the first", "plugin", mp.info.Name, "provider_kind", prov.kind)
		} else {
			m.providers[prov.kind] = prov
		}
	}
	if tools != nil {
		m.tools[mp.info.Name] = tools
	}
}

// Provider returns the provider of kind, or UNAVAILABLE. Its plugin
// process, when stopped for idleness, starts in the background at once:
// the kernel looks a provider up when it accepts a turn, before its own
// work ahead of the model request, so the start overlaps that work.
func (m *Manager) Provider(kind string) (core.Provider, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.providers[kind]
	if ok {
		p.warm()
	}
	if !ok {
		kinds := make([]string, 0, len(m.providers))
		for k := range m.providers {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		offer := "none"
		if len(kinds) > 0 {
			offer = strings.Join(kinds, ", ")
		}
		return nil, core.Errorf(core.CodeUnavailable, "no provider plugin serves kind %q (the plugins offer: %s)", kind, offer)
	}
	return p, nil
}

// Providers returns the providers by provider kind.
func (m *Manager) Providers() map[string]core.Provider {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]core.Provider, len(m.providers))
	for k, p := range m.providers {
		out[k] = p
	}
	return out
}

// ToolRunners returns the tool runners by plugin name.
func (m *Manager) ToolRunners() map[string]core.ToolRunner {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]core.ToolRunner, len(m.tools))
	for k, t := range m.tools {
		out[k] = t
	}
	return out
}

// Plugins lists every plugin with its current health.
func (m *Manager) Plugins() []PluginInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]PluginInfo, 0, len(m.plugins))
	for _, mp := range m.plugins {
		info := mp.info
		info.Capabilities = slices.Clone(info.Capabilities)
		info.Tools = slices.Clone(info.Tools)
		info.Healthy = mp.proc.healthy()
		info.PID = mp.proc.pid()
		out = append(out, info)
	}
	return out
}

// Close kills every plugin process.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.parkTimer != nil {
		m.parkTimer.Stop()
	}
	plugins := slices.Clone(m.plugins)
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, mp := range plugins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mp.proc.kill()
		}()
	}
	wg.Wait()
	return nil
}
