package host

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/telemetry"
	"github.com/foya-dev/foya/plugins/internal/pluginenv"
	foyav1 "github.com/foya-dev/foya/plugins/proto/foya/v1"
	"github.com/foya-dev/foya/plugins/sandbox"
	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
)

// Restart backoff: the first restart after a crash is immediate; further
// quick crashes wait restartBase, doubling up to restartMax. A process that
// ran for stableAfter before dying starts the count afresh.
const (
	restartBase = 500 * time.Millisecond
	restartMax  = 30 * time.Second
	stableAfter = time.Minute
)

// process is one plugin executable, started on demand and restarted after
// it dies. With idleStop set it is also stopped once no call or stream has
// been in progress for that long, and started again by the next call.
type process struct {
	name         string
	path         string
	args         []string
	env          []string
	runDir       string
	startTimeout time.Duration
	idleStop     time.Duration // 0: runs until the kernel stops or it dies
	onIdleStop   func()        // after an idle stop; may be nil
	log          *slog.Logger
	// wrap, when set, replaces the command before it starts (the tools
	// plugin in a masked mount namespace, mask.go).
	wrap func(*exec.Cmd) (*exec.Cmd, error)
	// onStart, when set, hears each process started (with p.mu held: it
	// must not block); a third-party plugin registered from its cached
	// description checks it still describes itself so (desccache.go).
	onStart func(*clients)

	mu        sync.Mutex
	client    *plugin.Client
	cl        *clients
	startedAt time.Time
	starts    int // processes started so far
	failures  int
	failedAt  time.Time
	lastErr   error
	closed    bool
	parked    bool // stopped while unused or idle; starts on next use
	// active counts calls and streams in progress (acquire); lastUse is
	// when the last of them ended. idleTimer runs stopIdle.
	active    int
	lastUse   time.Time
	idleTimer *time.Timer

	used    atomic.Bool // asked for its clients since Start's describe
	warming atomic.Bool // a warm start is under way
}

// acquire returns live clients for one call or stream, starting the
// process if needed, and counts the call as in progress until release is
// called (any number of times). A process is never stopped for idleness
// while a call is in progress.
func (p *process) acquire(ctx context.Context) (*clients, func(), error) {
	c, err := p.get(ctx, true)
	if err != nil {
		return nil, nil, err
	}
	var once sync.Once
	return c, func() { once.Do(p.release) }, nil
}

func (p *process) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active--
	if p.active == 0 {
		p.lastUse = time.Now()
		p.armIdle()
	}
}

// armIdle (re)starts the idle countdown; p.mu is held.
func (p *process) armIdle() {
	if p.idleStop <= 0 || p.closed {
		return
	}
	if p.idleTimer == nil {
		p.idleTimer = time.AfterFunc(p.idleStop, p.stopIdle)
		return
	}
	p.idleTimer.Reset(p.idleStop)
}

// stopIdle stops the process when nothing has used it for idleStop. It is
// not a failure: the plugin stays healthy and the next call starts it.
func (p *process) stopIdle() {
	p.mu.Lock()
	client := p.client
	if p.closed || client == nil || client.Exited() || p.active > 0 {
		p.mu.Unlock()
		return
	}
	if left := p.idleStop - time.Since(p.lastUse); left > 0 {
		p.idleTimer.Reset(left) // used again since the timer was set
		p.mu.Unlock()
		return
	}
	p.cl, p.client = nil, nil
	p.parked = true
	p.mu.Unlock()
	p.log.Info("plugin idle; stopped until its next call", "plugin", p.name, "idle_for", p.idleStop)
	client.Kill()
	if p.onIdleStop != nil {
		p.onIdleStop()
	}
}

// warm starts a stopped process in the background, so that a call about
// to come finds it running (or starting). It does nothing to a running,
// crashed or closed process.
func (p *process) warm() {
	if !p.stopped() || !p.warming.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer p.warming.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), p.startTimeout)
		defer cancel()
		if _, err := p.clients(ctx); err != nil {
			p.log.Warn("plugin warm start", "plugin", p.name, "err", err)
		}
	}()
}

// stopped reports whether the process is stopped while unused or idle (not
// crashed): what it last described still stands.
func (p *process) stopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.parked && p.client == nil && !p.closed
}

// clients returns live clients, starting the process if needed, without
// counting a call in progress (describe, warm-up).
func (p *process) clients(ctx context.Context) (*clients, error) { return p.get(ctx, false) }

// get returns live clients, starting the process if needed; with call set
// it counts a call in progress (see acquire) under the same lock, so an
// idle stop cannot come between the two.
func (p *process) get(ctx context.Context, call bool) (_ *clients, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.used.Store(true)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, core.Errorf(core.CodeUnavailable, "plugin %s is stopped", p.name)
	}
	defer func() {
		if call && err == nil {
			p.active++
			if p.idleTimer != nil {
				p.idleTimer.Stop()
			}
		}
	}()
	if p.cl != nil && !p.client.Exited() {
		return p.cl, nil
	}
	if p.cl != nil {
		p.died(fmt.Errorf("process exited"))
	}
	if wait := p.backoffLeft(); wait > 0 {
		return nil, &core.Error{Code: core.CodeUnavailable, Message: fmt.Sprintf("plugin %s crashed; next restart in %s", p.name, wait.Round(time.Millisecond)), Err: p.lastErr}
	}
	p.parked = false
	if err := p.start(); err != nil {
		p.failures++
		p.failedAt = time.Now()
		p.lastErr = err
		return nil, &core.Error{Code: core.CodeUnavailable, Message: fmt.Sprintf("plugin %s could not start", p.name), Err: err}
	}
	return p.cl, nil
}

// died records the loss of the current process; p.mu is held.
func (p *process) died(cause error) {
	if time.Since(p.startedAt) >= stableAfter {
		p.failures = 0
	}
	p.failures++
	p.failedAt = time.Now()
	p.lastErr = cause
	client := p.client
	p.cl, p.client = nil, nil
	p.log.Warn("plugin died; it restarts on next use", "plugin", p.name, "err", cause, "failures", p.failures)
	go client.Kill() // reaps the process and removes its socket directory
}

func (p *process) backoffLeft() time.Duration {
	if p.failures <= 1 {
		return 0
	}
	d := restartBase << min(p.failures-2, 10)
	d = min(d, restartMax)
	return time.Until(p.failedAt.Add(d))
}

func (p *process) broken(c *clients, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cl == c && c != nil {
		p.died(err)
	}
}

// start launches the executable; p.mu is held.
func (p *process) start() error {
	cmd := exec.Command(p.path, p.args...)
	cmd.Env = append(append([]string(nil), p.env...), "PLUGIN_UNIX_SOCKET_DIR="+p.runDir)
	if p.starts > 0 {
		cmd.Env = append(cmd.Env, pluginenv.Restart+"=1")
	}
	childSysProcAttr(cmd)
	if p.wrap != nil {
		w, err := p.wrap(cmd)
		if err != nil {
			return fmt.Errorf("launch %s: %w", p.path, err)
		}
		cmd = w
	}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		VersionedPlugins: sdk.VersionedClientPlugins(),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		SkipHostEnv:      true,
		UnixSocketConfig: &plugin.UnixSocketConfig{TempDir: p.runDir},
		StartTimeout:     p.startTimeout,
		// go-plugin's own logger is off: plugin stderr goes through
		// logWriter, and lifecycle events are logged here.
		Logger:          hclog.New(&hclog.LoggerOptions{Level: hclog.Off}),
		Stderr:          newLogWriter(p.log, p.name),
		GRPCDialOptions: append(traceDialOptions(), answerLimit),
	})
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		return fmt.Errorf("launch %s: %w", p.path, err)
	}
	prov, err := rpc.Dispense(sdk.ProviderPluginName)
	if err != nil {
		client.Kill()
		return fmt.Errorf("dispense provider: %w", err)
	}
	tools, err := rpc.Dispense(sdk.ToolsPluginName)
	if err != nil {
		client.Kill()
		return fmt.Errorf("dispense tools: %w", err)
	}
	p.starts++
	if p.starts > 1 {
		telemetry.Add(telemetry.Restarts, 1, telemetry.String("foya.component", "plugin"), telemetry.String("foya.component.name", p.name))
	}
	p.client = client
	p.cl = &clients{provider: prov.(foyav1.ProviderClient), tools: tools.(foyav1.ToolsClient), protocol: client.NegotiatedVersion()}
	p.startedAt = time.Now()
	pid := 0
	if rc := client.ReattachConfig(); rc != nil {
		pid = rc.Pid
	}
	if err := sandbox.LowerPriority(pid); err != nil {
		p.log.Warn("plugin runs at the kernel's priority", "plugin", p.name, "err", err)
	}
	p.log.Info("plugin started", "plugin", p.name, "pid", pid, "protocol", p.cl.protocol)
	p.lastUse = p.startedAt
	if p.onStart != nil {
		p.onStart(p.cl)
	}
	if p.active == 0 {
		p.armIdle() // started by a describe or a warm-up: stops again unless used
	}
	return nil
}

func (p *process) healthy() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.parked || (p.cl != nil && !p.client.Exited())
}

// park stops the running process unless it was used since Start's
// describe; the next call starts it again. It is not a failure: the plugin
// stays healthy. (clients marks the use before it takes p.mu, so a call
// either counts here or finds the process parked and starts it.)
func (p *process) park() {
	p.mu.Lock()
	client := p.client
	if p.closed || client == nil || client.Exited() || p.used.Load() || p.active > 0 {
		p.mu.Unlock()
		return
	}
	p.cl, p.client = nil, nil
	p.parked = true
	p.mu.Unlock()
	p.log.Info("plugin unused; stopped until first use", "plugin", p.name)
	client.Kill()
}

func (p *process) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client == nil || p.client.Exited() {
		return 0
	}
	if rc := p.client.ReattachConfig(); rc != nil {
		return rc.Pid
	}
	return 0
}

// kill stops the process for good.
func (p *process) kill() {
	p.mu.Lock()
	p.closed = true
	if p.idleTimer != nil {
		p.idleTimer.Stop()
	}
	client := p.client
	p.cl, p.client = nil, nil
	p.mu.Unlock()
	if client != nil {
		client.Kill()
	}
}
