//go:build unix

// Package terminal starts the processes of background terminals (core's
// TerminalLauncher) under the same confinement as the bash tool: `bash -c`
// under the sandbox helper (plugins/sandbox) with the session's directory,
// its TMPDIR and /tmp writable, reads confined, the data directory and the
// kernel's secrets masked, the tool limits, in a process group of its own
// that dies with the kernel (Pdeathsig on the helper, and the helper's PID
// namespace takes every process of the terminal with it).
package terminal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/plugins/sandbox"
)

// drainWait is how long output is still read after the terminal's process
// group ended; only a process that left the group keeps the pipe open
// longer.
const drainWait = 2 * time.Second

// Launcher implements core.TerminalLauncher.
type Launcher struct {
	cfg        Config
	log        *slog.Logger
	exe        string // the sandbox helper; "" runs unconfined
	namespaces bool
}

// New probes the sandbox once and returns a launcher using it when it
// works; otherwise terminals run unconfined and a warning says so.
func New(cfg Config) *Launcher {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	l := &Launcher{cfg: cfg, log: log}
	if cfg.NoSandbox || !sandbox.Supported() {
		log.Warn("terminals run unconfined: no sandbox")
		return l
	}
	exe, err := os.Executable()
	if err != nil {
		log.Warn("terminals run unconfined: no sandbox helper", "err", err)
		return l
	}
	base := sandbox.Policy{Network: !cfg.NetworkOff, ConfineReads: true, Devices: sandbox.DefaultDevices, UID: os.Getuid(), GID: os.Getgid(), Limits: cfg.Limits}
	if cfg.DataDir != "" {
		base.Hidden = []string{cfg.DataDir}
	}
	rep, err := sandbox.Probe(exe, base)
	if err != nil {
		log.Warn("terminals run unconfined: the sandbox helper failed", "err", err)
		return l
	}
	l.exe, l.namespaces = exe, rep.Namespaces
	return l
}

// Confined reports whether terminals run under the sandbox helper.
func (l *Launcher) Confined() bool { return l.exe != "" }

// StartTerminal implements core.TerminalLauncher.
func (l *Launcher) StartTerminal(_ context.Context, spec core.TerminalStart) (core.TerminalProcess, error) {
	tmp, err := l.tempDir(spec.SessionID)
	if err != nil {
		return nil, err
	}
	env := commandEnv(tmp, spec.Env)
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("create input pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("create output pipe: %w", err)
	}
	cmd, confined, err := l.start(spec, tmp, env, inR, outW)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	return &process{cmd: cmd, confined: confined, in: inW, out: outR}, nil
}

// start starts `bash -c command` reading in and writing out, under the
// sandbox helper when there is one.
func (l *Launcher) start(spec core.TerminalStart, tmp string, env []string, in, out *os.File) (*exec.Cmd, *sandbox.Process, error) {
	if l.exe == "" {
		cmd := exec.Command("bash", "-c", spec.Command)
		cmd.Dir, cmd.Env = spec.Dir, env
		cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			return nil, nil, fmt.Errorf("start terminal: %w", err)
		}
		_ = sandbox.LowerPriority(cmd.Process.Pid) // best effort, as under the helper
		return cmd, nil, nil
	}
	p := l.policy(spec, tmp, env)
	proc, err := sandbox.StartWithInput(l.exe, p, in, out)
	if errors.Is(err, sandbox.ErrNoNamespaces) {
		p.Namespaces = false
		proc, err = sandbox.StartWithInput(l.exe, p, in, out)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("start confined terminal: %w", err)
	}
	return proc.Cmd, proc, nil
}

// policy is the confinement of one terminal: the bash tool's.
func (l *Launcher) policy(spec core.TerminalStart, tmp string, env []string) sandbox.Policy {
	scope := realOrClean(spec.ScopeDir)
	p := sandbox.Policy{
		Namespaces: l.namespaces,
		Writable:   append([]string{scope, tmp, "/tmp"}, l.cfg.Writable...),
		Devices:    sandbox.DefaultDevices,
		Network:    !l.cfg.NetworkOff,
		UID:        os.Getuid(), GID: os.Getgid(),
		Dir: spec.Dir, Env: env, Argv: []string{"bash", "-c", spec.Command},
		Stdin:  true,
		Limits: l.cfg.Limits,
	}
	if g := sandbox.WorktreeGitDir(scope); g != "" {
		p.Writable = append(p.Writable, g) // git in a session worktree (docs/worktrees.md)
	}
	for _, h := range l.cfg.Hidden {
		p.Hidden = append(p.Hidden, realOrClean(h))
	}
	if l.cfg.DataDir != "" {
		data := realOrClean(l.cfg.DataDir)
		p.Hidden = append(p.Hidden, data)
		if within(data, scope) {
			p.Expose = []string{scope}
		}
	}
	if l.cfg.TempRoot != "" {
		p.Hidden = append(p.Hidden, realOrClean(l.cfg.TempRoot))
		p.Expose = append(p.Expose, realOrClean(tmp))
	}
	home, _ := os.UserHomeDir()
	p.ConfineReads = true
	p.Readable = append(sandbox.ToolchainReadable(os.Getenv("PATH"), home, p.Hidden), sandbox.HomeReadable(home)...)
	p.Readable = append(p.Readable, l.cfg.Readable...)
	return p
}

// tempDir is the session's TMPDIR (shared with its bash calls).
func (l *Launcher) tempDir(sessionID string) (string, error) {
	if l.cfg.TempRoot == "" {
		return os.TempDir(), nil
	}
	name := sessionID
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		name = "_"
	}
	dir := filepath.Join(l.cfg.TempRoot, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create session TMPDIR: %w", err)
	}
	return dir, nil
}

// commandEnv is the bash tool's minimal environment (nothing of the
// kernel's own: no key or token) plus the terminal's own variables.
func commandEnv(tmp string, extra map[string]string) []string {
	get := func(k, def string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return def
	}
	base := map[string]string{
		"PATH": get("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
		"HOME": get("HOME", os.TempDir()), "LANG": get("LANG", "C.UTF-8"),
		"TERM": "dumb", "TMPDIR": tmp, "PAGER": "cat", "GIT_PAGER": "cat",
	}
	for k, v := range extra {
		base[k] = v
	}
	env := make([]string, 0, len(base))
	for k, v := range base {
		env = append(env, k+"="+v)
	}
	return env
}

// process is one started terminal.
type process struct {
	cmd      *exec.Cmd
	confined *sandbox.Process // nil: unconfined
	in       *os.File
	out      *os.File
	once     sync.Once
}

func (p *process) Output() io.Reader     { return p.out }
func (p *process) Input() io.WriteCloser { return p.in }

// Signal sends sig to the terminal's process group (the helper and every
// process of the command that stayed in the group); the helper's end takes
// the rest.
func (p *process) Signal(sig string) error {
	s, ok := signals[strings.TrimPrefix(strings.ToUpper(sig), "SIG")]
	if !ok {
		return core.Errorf(core.CodeBadInput, "signal %q: use TERM, INT, HUP, QUIT or KILL", sig)
	}
	if err := syscall.Kill(-p.cmd.Process.Pid, s); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal terminal: %w", err)
	}
	return nil
}

var signals = map[string]syscall.Signal{"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP, "QUIT": syscall.SIGQUIT, "KILL": syscall.SIGKILL}

// Wait waits for the command, kills what is left of its process group and
// lets the output be drained for a moment.
func (p *process) Wait() (int, error) {
	werr := p.cmd.Wait()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	_ = p.out.SetReadDeadline(time.Now().Add(drainWait))
	p.once.Do(func() { _ = p.in.Close() })
	if p.confined != nil {
		// The helper's report tells an exit code from a signal; there is
		// none when the helper itself was killed.
		rep, err := p.confined.Report()
		if err == nil && rep.Started {
			return rep.ExitCode, nil
		}
		if err != nil && werr != nil {
			return -1, nil // the helper itself was ended by a signal
		}
	}
	var ee *exec.ExitError
	switch {
	case werr == nil:
		return 0, nil
	case errors.As(werr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1, nil
		}
		return ee.ExitCode(), nil
	default:
		return -1, fmt.Errorf("wait for terminal: %w", werr)
	}
}

func realOrClean(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// within reports whether path lies inside dir.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../")
}
