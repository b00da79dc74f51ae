package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
)

// Process is one confined command under its helper.
type Process struct {
	Cmd    *exec.Cmd
	report *os.File
	done   chan struct{}
	rep    Report
	repErr error
}

// Start runs p under the helper exe (`exe __sandbox POLICY`), writing the
// command's stdout and stderr to out. The helper gets its own process group
// and SIGKILL when the calling thread's process dies. When p.Namespaces is
// set and the kernel refuses new namespaces, Start returns an error
// matching ErrNoNamespaces and the caller may retry without them.
func Start(exe string, p Policy, out *os.File) (*Process, error) {
	return StartWithInput(exe, p, nil, out)
}

// StartWithInput is Start with in as the helper's standard input; with
// p.Stdin set the command reads it (a terminal's input).
func StartWithInput(exe string, p Policy, in, out *os.File) (*Process, error) {
	enc, err := encodePolicy(p)
	if err != nil {
		return nil, err
	}
	rr, rw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("create report pipe: %w", err)
	}
	cmd := exec.Command(exe, HelperCommand, enc)
	cmd.Env = []string{} // the helper needs nothing; the command gets p.Env
	cmd.Stdout, cmd.Stderr = out, out
	if in != nil {
		cmd.Stdin = in
	}
	cmd.ExtraFiles = []*os.File{rw} // fd 3
	cmd.SysProcAttr = sysProcAttr(p)
	if err := cmd.Start(); err != nil {
		rr.Close()
		rw.Close()
		if p.Namespaces && isNamespaceRefusal(err) {
			return nil, fmt.Errorf("%w: %v", ErrNoNamespaces, err)
		}
		return nil, fmt.Errorf("start sandbox helper: %w", err)
	}
	// Best effort: a child at the kernel's priority still works.
	_ = LowerPriority(cmd.Process.Pid)
	rw.Close()
	pr := &Process{Cmd: cmd, report: rr, done: make(chan struct{})}
	go pr.readReport()
	return pr, nil
}

// Command returns the helper command that runs p, not started, for a
// caller that wires its standard streams itself (an MCP server's stdio, a
// plugin's handshake). No report is written (p.NoReport is set); the
// helper's exit status is the command's. When p.Namespaces is set and the
// kernel refuses new namespaces, Start of the returned command fails with
// an error for which IsNamespaceRefusal is true.
func Command(exe string, p Policy) (*exec.Cmd, error) {
	p.NoReport = true
	enc, err := encodePolicy(p)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, HelperCommand, enc)
	cmd.Env = []string{}
	cmd.SysProcAttr = sysProcAttr(p)
	return cmd, nil
}

// WrapExec returns a command that runs cmd (path, arguments, directory,
// environment) in new user and mount namespaces where p.Hidden are masked
// (p.Expose bound back), with no capabilities, not confined otherwise: the
// helper sets up the mounts and then executes cmd's program in its place.
// It starts the tools plugin so that no path tool can reach the data
// directory whatever it opens. Callers probe first (Probe) and use it only
// where namespaces work.
func WrapExec(exe string, p Policy, cmd *exec.Cmd) (*exec.Cmd, error) {
	p.Namespaces, p.Exec, p.InheritEnv, p.NoLandlock = true, true, true, true
	p.Writable, p.Limits = nil, Limits{}
	p.Argv = append([]string{cmd.Path}, cmd.Args[1:]...)
	p.Dir = cmd.Dir
	w, err := Command(exe, p)
	if err != nil {
		return nil, err
	}
	w.Env = cmd.Env
	w.Stdin, w.Stdout, w.Stderr = cmd.Stdin, cmd.Stdout, cmd.Stderr
	return w, nil
}

// IsNamespaceRefusal reports whether err (from starting a helper with
// namespaces) means the kernel refused to create them.
func IsNamespaceRefusal(err error) bool { return isNamespaceRefusal(err) }

// ErrNoNamespaces says the kernel refused to create user namespaces.
var ErrNoNamespaces = errors.New("user namespaces are not available")

var reportLimit = int64(1 << 20)

func (p *Process) readReport() {
	defer close(p.done)
	defer p.report.Close()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, io.LimitReader(p.report, reportLimit)); err != nil {
		p.repErr = err
		return
	}
	if buf.Len() == 0 {
		p.repErr = errors.New("the sandbox helper ended without a report")
		return
	}
	p.repErr = json.Unmarshal(buf.Bytes(), &p.rep)
}

// Report waits for the helper's report. It returns an error when the helper
// was killed (timeout, cancel) or failed before it could write one.
func (p *Process) Report() (Report, error) {
	<-p.done
	return p.rep, p.repErr
}

var probeOnce sync.Map // exe → *probeResult

type probeResult struct {
	once sync.Once
	rep  Report
	err  error
}

// Probe runs `true` under the helper once per executable (with namespaces,
// else without) and reports what the confinement achieved on this system.
func Probe(exe string, base Policy) (Report, error) {
	v, _ := probeOnce.LoadOrStore(exe, &probeResult{})
	r := v.(*probeResult)
	r.once.Do(func() { r.rep, r.err = probe(exe, base) })
	return r.rep, r.err
}

func probe(exe string, p Policy) (Report, error) {
	p.Argv = []string{"true"}
	p.Namespaces = true
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return Report{}, err
	}
	defer devnull.Close()
	for {
		pr, err := Start(exe, p, devnull)
		if errors.Is(err, ErrNoNamespaces) {
			p.Namespaces = false
			continue
		}
		if err != nil {
			return Report{}, err
		}
		werr := pr.Cmd.Wait()
		rep, rerr := pr.Report()
		if rerr != nil {
			return Report{}, fmt.Errorf("sandbox probe: %w (helper: %v)", rerr, werr)
		}
		if !rep.Started && p.Namespaces {
			// Namespaces were created but setting them up failed (for
			// example mounts are refused): try without.
			p.Namespaces = false
			continue
		}
		if !rep.Started {
			return rep, fmt.Errorf("sandbox probe: %s", rep.Error)
		}
		return rep, nil
	}
}
