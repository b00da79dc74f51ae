package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/foya-dev/foya/plugins/sandbox"
	"github.com/foya-dev/foya/plugins/sdk"
)

// drainWait is how long output is still read after the process group was
// killed; only a process that left the group (setsid) keeps the pipe open
// longer.
const drainWait = 2 * time.Second

func bashInfo(cfg Config) sdk.Tool {
	return sdk.Tool{
		Name: "bash",
		Description: fmt.Sprintf("Run a shell command with `bash -c` in the project directory and return its "+
			"combined stdout and stderr (over %d bytes, the middle is cut) and exit code. There is no TTY and no "+
			"stdin; the environment is minimal (PATH, HOME, LANG, TERM=dumb, TMPDIR). Default timeout %s, "+
			"at most %s; on timeout the command and every process it started are killed, and background "+
			"processes do not outlive the command. Files the command creates, changes or deletes are reported.",
			cfg.MaxOutputBytes, cfg.DefaultBashTimeout, cfg.MaxBashTimeout),
		Schema: schema([]string{"command"}, map[string]any{
			"command":     prop("string", "The command line to run."),
			"timeout":     prop("number", fmt.Sprintf("Timeout in seconds (default %d, max %d).", int(cfg.DefaultBashTimeout.Seconds()), int(cfg.MaxBashTimeout.Seconds()))),
			"description": prop("string", "A few words on what the command does, shown to the user."),
		}),
	}
}

type bashInput struct {
	Command     string  `json:"command"`
	Timeout     float64 `json:"timeout"`
	Description string  `json:"description"`
}

func (s *Set) bash(ctx context.Context, c *call) (sdk.ToolResult, error) {
	var in bashInput
	if err := decode(c, &in); err != nil {
		return sdk.ToolResult{}, err
	}
	if strings.TrimSpace(in.Command) == "" {
		return sdk.ToolResult{}, errors.New("command is empty")
	}
	if in.Timeout < 0 {
		return sdk.ToolResult{}, errors.New("timeout must not be negative")
	}
	timeout := s.cfg.DefaultBashTimeout
	switch {
	case in.Timeout > s.cfg.MaxBashTimeout.Seconds():
		timeout = s.cfg.MaxBashTimeout
	case in.Timeout > 0:
		timeout = time.Duration(in.Timeout * float64(time.Second))
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = max(time.Until(dl).Round(100*time.Millisecond), 0) // the call's own timeout is shorter
	}
	log := s.log.With("session_id", c.req.SessionID, "tool_call_id", c.req.ToolCallID)

	var note string
	before, err := takeSnapshot(ctx, c.scope, nil, s.cfg.SnapshotMaxFiles, s.cfg.SnapshotMaxBytes, s.cfg.MaxFileBytes)
	if lim, ok := isSnapshotLimit(err); ok {
		note = "file change detection skipped: " + lim.msg
		err = nil
	}
	if err != nil {
		return sdk.ToolResult{}, fmt.Errorf("snapshot %s: %w", c.scope.dir, err)
	}

	run := s.runCommand(ctx, c, in.Command, timeout)
	log.Info("bash finished", "exit_code", run.exitCode, "timed_out", run.timedOut, "cpu_exceeded", run.cpuExceeded, "cancelled", run.cancelled, "output_bytes", run.total, "duration", run.duration)
	if run.err != nil {
		return sdk.ToolResult{}, run.err
	}
	if run.cancelled && c.outer.Err() != nil {
		return sdk.ToolResult{}, c.outer.Err()
	}
	res := sdk.ToolResult{Text: run.text(timeout), IsError: run.exitCode != 0 || run.timedOut || run.cancelled || run.cpuExceeded}

	cs := newChangeSet(s.cfg)
	if before != nil {
		// Detect changes even after a timeout: the command may have written
		// files before it was killed.
		after, err := takeSnapshot(context.WithoutCancel(ctx), c.scope, before, s.cfg.SnapshotMaxFiles, s.cfg.SnapshotMaxBytes, s.cfg.MaxFileBytes)
		switch lim, ok := isSnapshotLimit(err); {
		case ok:
			note = "file change detection skipped: " + lim.msg + " after the command"
		case err != nil:
			note = "file change detection failed: " + err.Error()
			log.Warn("snapshot after bash", "err", err)
		default:
			compareSnapshots(cs, before, after)
		}
	}
	res = cs.result(res)
	res.Note = note
	return res, nil
}

// cmdRun is the outcome of one command.
type cmdRun struct {
	output    string
	total     int64 // bytes of output produced
	exitCode  int
	timedOut  bool
	cancelled bool
	duration  time.Duration
	// leftover names the processes the command left running when it
	// ended; they were killed.
	leftover []string
	// cpuExceeded says the call used its CPU budget (cpuSeconds) and
	// was killed.
	cpuExceeded bool
	cpuSeconds  uint64
	err         error // could not run at all
}

func (r cmdRun) text(timeout time.Duration) string {
	var b strings.Builder
	b.WriteString(r.output)
	if r.output != "" && !strings.HasSuffix(r.output, "\n") {
		b.WriteByte('\n')
	}
	if r.output == "" {
		b.WriteString("(no output)\n")
	}
	switch {
	case r.timedOut:
		fmt.Fprintf(&b, "[command timed out after %s; it and every process it started were killed]", timeout)
	case r.cancelled:
		b.WriteString("[command cancelled; it and every process it started were killed]")
	case r.cpuExceeded:
		b.WriteString("[" + sandbox.CPUExceededText(r.cpuSeconds) + "]")
	default:
		fmt.Fprintf(&b, "[exit code: %d]", r.exitCode)
	}
	if len(r.leftover) > 0 {
		fmt.Fprintf(&b, "\n[the command left %d background process(es) running; they were killed when it ended: %s]", len(r.leftover), strings.Join(r.leftover, "; "))
	}
	return b.String()
}

// runCommand runs command in the call's scope, confined when the sandbox
// is usable, in its own process group, and always kills the group when bash
// returns, so background processes do not survive it.
func (s *Set) runCommand(ctx context.Context, c *call, command string, timeout time.Duration) cmdRun {
	start := time.Now()
	tmp, err := s.tempDir(c.req.SessionID)
	if err != nil {
		return cmdRun{err: err}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return cmdRun{err: fmt.Errorf("create output pipe: %w", err)}
	}
	defer pr.Close()
	cmd, confined, err := s.startBash(c, command, tmp, pw)
	pw.Close()
	if err != nil {
		return cmdRun{err: err}
	}

	out := newCapBuffer(s.cfg.MaxOutputBytes)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		_, _ = io.Copy(out, pr)
	}()
	run, werr := s.awaitBash(ctx, cmd, timeout)
	_ = pr.SetReadDeadline(time.Now().Add(drainWait))
	<-drained

	run.duration = time.Since(start)
	run.output, run.total = out.String()
	if confined != nil && !run.timedOut && !run.cancelled {
		if rep, err := confined.Report(); err == nil {
			run.leftover = rep.Leftover
			run.cpuExceeded, run.cpuSeconds = rep.CPUExceeded, s.cfg.Sandbox.Limits.CPUSeconds
		}
	}
	var exitErr *exec.ExitError
	switch {
	case werr == nil:
	case errors.As(werr, &exitErr):
		run.exitCode = exitErr.ExitCode()
	default:
		run.err = fmt.Errorf("wait for bash: %w", werr)
	}
	return run
}

// startBash starts `bash -c command` writing to pw, confined when the
// sandbox is usable (confined is then its sandbox process).
func (s *Set) startBash(c *call, command, tmp string, pw *os.File) (cmd *exec.Cmd, confined *sandbox.Process, err error) {
	env := bashEnv(tmp)
	if st := s.sandbox(); st.usable {
		confined, err = s.startConfined(st, s.policy(c.scope, tmp, env, command, st.namespaces), pw)
		if err != nil {
			return nil, nil, fmt.Errorf("start confined bash: %w", err)
		}
		return confined.Cmd, confined, nil
	}
	cmd = exec.Command("bash", "-c", command)
	cmd.Dir = c.scope.real
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = pw, pw // an *os.File: Wait does not wait for the pipe
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start bash: %w", err)
	}
	return cmd, nil, nil
}

// awaitBash waits for the started command until it exits, the timeout
// passes or ctx ends, then kills its process group. It returns the run
// (timedOut, cancelled) and the command's wait error.
func (s *Set) awaitBash(ctx context.Context, cmd *exec.Cmd, timeout time.Duration) (cmdRun, error) {
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var run cmdRun
	var werr error
	select {
	case werr = <-waited:
	case <-timer.C:
		run.timedOut = true
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			run.timedOut = true
		} else {
			run.cancelled = true
		}
	}
	if err := killGroup(cmd); err != nil {
		s.log.Warn("kill bash process group", "pid", cmd.Process.Pid, "err", err)
	}
	if run.timedOut || run.cancelled {
		werr = <-waited
	}
	return run, werr
}

// bashEnv is the whole environment a command gets: nothing of the kernel's
// own environment (no API key, FOYA_TOKEN or auth token) but these few
// variables, with TMPDIR the session's own temporary directory.
func bashEnv(tmp string) []string {
	get := func(k, def string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return def
	}
	return []string{
		"PATH=" + get("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
		"HOME=" + get("HOME", os.TempDir()),
		"LANG=" + get("LANG", "C.UTF-8"),
		"TERM=dumb",
		"TMPDIR=" + tmp,
		"PAGER=cat",
		"GIT_PAGER=cat",
	}
}

// capBuffer keeps the first and last max/2 bytes written and counts the rest.
type capBuffer struct {
	mu    sync.Mutex
	half  int
	head  []byte
	tail  []byte
	total int64
}

func newCapBuffer(max int) *capBuffer { return &capBuffer{half: max / 2} }

func (b *capBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total += int64(len(p))
	rest := p
	if room := b.half - len(b.head); room > 0 {
		n := min(room, len(rest))
		b.head = append(b.head, rest[:n]...)
		rest = rest[n:]
	}
	if len(rest) > 0 {
		b.tail = append(b.tail, rest...)
		if len(b.tail) > 2*b.half {
			b.tail = append(b.tail[:0], b.tail[len(b.tail)-b.half:]...)
		}
	}
	return len(p), nil
}

// String returns the kept output, with a marker where bytes were cut, and
// the total written.
func (b *capBuffer) String() (string, int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	tail := b.tail
	if len(tail) > b.half {
		tail = tail[len(tail)-b.half:]
	}
	cut := b.total - int64(len(b.head)) - int64(len(tail))
	if cut == 0 {
		return string(b.head) + string(tail), b.total
	}
	return fmt.Sprintf("%s\n[... %d of %d bytes of output cut ...]\n%s", b.head, cut, b.total, tail), b.total
}
