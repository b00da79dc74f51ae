//go:build unix

package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/plugins/sandbox"
)

// Runner runs hook commands with `bash -c`, confined like the bash tool:
// writes only under the session's directory and /tmp, the data directory
// masked, in its own process group, killed (the whole group) at its
// timeout.
type Runner struct {
	// Exe is the sandbox helper (the kernel executable); "" runs hooks
	// unconfined (no sandbox on this system).
	Exe     string
	DataDir string
	Log     *slog.Logger
	// Hidden are more secret files or directories masked like DataDir
	// (the token file, the TLS key kept elsewhere).
	Hidden []string
	// Limits bound each hook's processes (docs/sandbox.md).
	Limits sandbox.Limits
	// Readable are extra read roots (`foya serve --tool-readable`): a hook
	// reads only the system directories, its PATH's toolchains, git's
	// global configuration, its session's directory, /tmp and these.
	Readable []string

	namespaces bool
}

// NewRunner probes the sandbox once and returns a runner using it when it
// works.
func NewRunner(dataDir string, log *slog.Logger) *Runner {
	r := &Runner{DataDir: dataDir, Log: log}
	if !sandbox.Supported() {
		log.Warn("hooks run unconfined: no sandbox on this system")
		return r
	}
	exe, err := os.Executable()
	if err != nil {
		log.Warn("hooks run unconfined: no sandbox helper", "err", err)
		return r
	}
	base := sandbox.Policy{Network: true, Devices: sandbox.DefaultDevices, UID: os.Getuid(), GID: os.Getgid()}
	if dataDir != "" {
		base.Hidden = []string{dataDir}
	}
	rep, err := sandbox.Probe(exe, base)
	if err != nil {
		log.Warn("hooks run unconfined: the sandbox helper failed", "err", err)
		return r
	}
	r.Exe, r.namespaces = exe, rep.Namespaces
	log.Info("hook sandbox", "landlock", rep.Landlock, "namespaces", rep.Namespaces)
	return r
}

// script feeds the input file to stdin, sends stderr to its file and runs
// the command with bash -c, so hook scripts see a normal stdin/stderr.
const script = `exec <"$1" 2>"$2"; exec bash -c "$3"`

// RunHook implements core.HookRunner.
func (r *Runner) RunHook(ctx context.Context, h core.HookRun) core.HookOutcome {
	tmp, err := os.MkdirTemp("", "foya-hook-")
	if err != nil {
		return core.HookOutcome{Err: fmt.Errorf("hook temp dir: %w", err)}
	}
	defer os.RemoveAll(tmp)
	in, errPath, outPath := filepath.Join(tmp, "stdin.json"), filepath.Join(tmp, "stderr"), filepath.Join(tmp, "stdout")
	if err := os.WriteFile(in, h.Input, 0o600); err != nil {
		return core.HookOutcome{Err: fmt.Errorf("hook input: %w", err)}
	}
	out, err := os.OpenFile(outPath, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o600)
	if err != nil {
		return core.HookOutcome{Err: fmt.Errorf("hook output: %w", err)}
	}
	defer out.Close()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TMPDIR=" + tmp,
		"CLAUDE_PROJECT_DIR=" + h.Dir, "FOYA_PROJECT_DIR=" + h.Dir, "FOYA_SESSION_ID=" + h.SessionID}
	argv := []string{"bash", "-c", script, "foya-hook", in, errPath, h.Command}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = core.DefaultHookTimeout
	}
	cmd, proc, err := r.startHook(h, tmp, env, argv, out)
	if err != nil {
		return core.HookOutcome{Err: err}
	}
	res := waitHook(ctx, cmd, timeout)
	if proc != nil && !res.TimedOut && res.Err == nil {
		if rep, rerr := proc.Report(); rerr == nil {
			if !rep.Started {
				res.Err = fmt.Errorf("hook did not start: %s", rep.Error)
			}
			res.ExitCode = rep.ExitCode
		}
	}
	res.Stdout = readCapped(outPath)
	res.Stderr = readCapped(errPath)
	return res
}

// startHook starts the hook's bash writing to out: in the sandbox when
// the runner has a helper (proc is then its sandbox process), else as a
// plain process group.
func (r *Runner) startHook(h core.HookRun, tmp string, env, argv []string, out *os.File) (*exec.Cmd, *sandbox.Process, error) {
	if r.Exe == "" {
		cmd := exec.Command("bash", argv[1:]...)
		cmd.Dir, cmd.Env, cmd.Stdout = h.Dir, env, out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			return nil, nil, fmt.Errorf("start hook: %w", err)
		}
		_ = sandbox.LowerPriority(cmd.Process.Pid) // best effort, as under the helper
		return cmd, nil, nil
	}
	p := r.hookPolicy(h, tmp, env, argv)
	proc, err := sandbox.Start(r.Exe, p, out)
	if errors.Is(err, sandbox.ErrNoNamespaces) {
		p.Namespaces = false
		proc, err = sandbox.Start(r.Exe, p, out)
	}
	if err != nil {
		return nil, nil, err
	}
	return proc.Cmd, proc, nil
}

// hookPolicy is the sandbox policy of one hook run: its project and
// temporary directories writable, the data directory and the runner's
// hidden paths hidden, reads confined to the toolchains and the home's
// readable parts.
func (r *Runner) hookPolicy(h core.HookRun, tmp string, env, argv []string) sandbox.Policy {
	p := sandbox.Policy{
		Namespaces: r.namespaces,
		Writable:   []string{h.Dir, tmp, "/tmp"}, Devices: sandbox.DefaultDevices, Network: true,
		UID: os.Getuid(), GID: os.Getgid(), Dir: h.Dir, Env: env, Argv: argv, Limits: r.Limits,
	}
	if r.DataDir != "" {
		p.Hidden = []string{r.DataDir}
		// A scratch session's directory lies under the data directory:
		// it stays visible (and writable) at its path, the rest is hidden.
		data, dir := realPath(r.DataDir), realPath(h.Dir)
		if rel, err := filepath.Rel(data, dir); err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") {
			p.Hidden, p.Expose, p.Dir = []string{data}, []string{dir}, dir
			p.Writable[0] = dir
		}
	}
	for _, h := range r.Hidden {
		p.Hidden = append(p.Hidden, realPath(h))
	}
	if g := sandbox.WorktreeGitDir(realPath(h.Dir)); g != "" {
		p.Writable = append(p.Writable, g) // git in a session worktree (docs/worktrees.md)
	}
	home, _ := os.UserHomeDir()
	p.ConfineReads = true
	p.Readable = append(sandbox.ToolchainReadable(os.Getenv("PATH"), home, p.Hidden), sandbox.HomeReadable(home)...)
	p.Readable = append(p.Readable, r.Readable...)
	return p
}

// waitHook waits for the started hook until it exits, the timeout passes
// (its process group is killed) or ctx ends.
func waitHook(ctx context.Context, cmd *exec.Cmd, timeout time.Duration) core.HookOutcome {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var res core.HookOutcome
	select {
	case werr := <-done:
		res.ExitCode = exitCode(werr)
	case <-timer.C:
		res.TimedOut = true
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		res.ExitCode = -1
		res.Err = fmt.Errorf("timed out after %s; the hook's process group was killed", timeout)
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		res.ExitCode = -1
		res.Err = fmt.Errorf("cancelled: %w", ctx.Err())
	}
	return res
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

func readCapped(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var b bytes.Buffer
	_, _ = io.Copy(&b, io.LimitReader(f, core.HookOutputLimit))
	return b.String()
}

// realPath resolves symbolic links in p, or returns it cleaned.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
