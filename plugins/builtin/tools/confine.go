package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/foya-dev/foya/plugins/sandbox"
)

// sandboxState is what the plugin found out about confinement on this
// system, once, at the first Describe or bash call.
type sandboxState struct {
	name, detail string
	exe          string
	usable       bool // run bash through the sandbox helper
	namespaces   bool
}

func (s *Set) sandbox() sandboxState {
	s.sandboxOnce.Do(func() {
		s.sandboxState = s.probeSandbox()
		// The host logs the sandbox every tool plugin describes (plugins/host),
		// once; this line is for debugging the plugin alone.
		s.log.Debug("tool sandbox", "sandbox", s.sandboxState.name, "detail", s.sandboxState.detail)
	})
	return s.sandboxState
}

func (s *Set) probeSandbox() sandboxState {
	sc := s.cfg.Sandbox
	if sc == nil {
		return sandboxState{name: "none", detail: "bash runs unconfined: the tool plugin was started without a sandbox; " + s.pathToolsDetail()}
	}
	if !sandbox.Supported() {
		return sandboxState{name: "none", detail: "bash runs unconfined: no sandbox on " + runtime.GOOS}
	}
	exe := sc.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return sandboxState{name: "none", detail: "bash runs unconfined: cannot find the sandbox helper: " + err.Error()}
		}
	}
	base := sandbox.Policy{Network: !sc.NetworkOff, ConfineReads: true, Devices: sandbox.DefaultDevices, UID: os.Getuid(), GID: os.Getgid(), Limits: sc.Limits}
	if s.cfg.DataDir != "" {
		base.Hidden = []string{s.cfg.DataDir}
	}
	rep, err := sandbox.Probe(exe, base)
	if err != nil {
		return sandboxState{name: "none", detail: "bash runs unconfined: the sandbox helper failed: " + err.Error()}
	}
	st := sandboxState{exe: exe, usable: true, namespaces: rep.Namespaces}
	var parts []string
	if rep.Landlock {
		st.name = "landlock"
		roots := "the session's directory, its TMPDIR, /tmp"
		if len(sc.Writable) > 0 {
			roots += ", " + strings.Join(sc.Writable, ", ")
		}
		parts = append(parts, fmt.Sprintf("Landlock ABI %d: writes only in %s and /dev/null-like devices", rep.ABI, roots))
		reads := "reads only in those, the system directories, the PATH's toolchains and git's global configuration"
		if len(sc.Readable) > 0 {
			reads += ", " + strings.Join(sc.Readable, ", ")
		}
		parts = append(parts, reads)
	} else {
		st.name = "none"
		parts = append(parts, "Landlock is not available: reads and writes are not confined")
	}
	if rep.Namespaces {
		p := "user namespaces: the data directory is masked and every process runs in a PID namespace that ends with the call"
		if !rep.Proc {
			p += " (no private /proc)"
		}
		parts = append(parts, p)
	} else {
		parts = append(parts, "no user namespaces: the data directory is hidden from path tools only, and processes are tracked as a child subreaper (a process that escapes it may outlive a killed plugin)")
	}
	switch {
	case !sc.NetworkOff:
		parts = append(parts, "network allowed")
	case rep.Namespaces && rep.ABI >= 4:
		parts = append(parts, "network off: empty network namespace, TCP connect and bind denied by Landlock")
	case rep.Namespaces:
		parts = append(parts, "network off: empty network namespace")
	case rep.ABI >= 4:
		parts = append(parts, "network off: TCP connect and bind denied by Landlock (UDP is not)")
	default:
		parts = append(parts, "network off was asked for but cannot be enforced here")
	}
	parts = append(parts, sc.Limits.Describe(rep.ProcLimit))
	parts = append(parts, s.pathToolsDetail())
	st.detail = strings.Join(parts, "; ")
	return st
}

// pathToolsDetail says what keeps the path tools out of the data
// directory.
func (s *Set) pathToolsDetail() string {
	if dataDirMasked(s.cfg.DataDir) {
		return "path tools: the plugin runs in a mount namespace where the data directory is masked, and opens every file through os.Root"
	}
	return "path tools: every file is opened through os.Root and checked by its descriptor (the data directory is not masked for the plugin here)"
}

// tempDir is the session's TMPDIR, created on demand.
func (s *Set) tempDir(sessionID string) (string, error) {
	if s.cfg.TempRoot == "" {
		return os.TempDir(), nil
	}
	name := sessionID
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		name = "_"
	}
	dir := filepath.Join(s.cfg.TempRoot, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create session TMPDIR: %w", err)
	}
	return dir, nil
}

// policy is the confinement of one bash call in scope sc.
func (s *Set) policy(sc *scope, tmp string, env []string, command string, namespaces bool) sandbox.Policy {
	p := sandbox.Policy{
		Namespaces: namespaces,
		Writable:   append([]string{sc.real, tmp, "/tmp"}, s.cfg.Sandbox.Writable...),
		Devices:    sandbox.DefaultDevices,
		Network:    !s.cfg.Sandbox.NetworkOff,
		UID:        os.Getuid(),
		GID:        os.Getgid(),
		Dir:        sc.real,
		Env:        env,
		Argv:       []string{"bash", "-c", command},
		Limits:     s.cfg.Sandbox.Limits,
	}
	if g := sandbox.WorktreeGitDir(sc.real); g != "" {
		p.Writable = append(p.Writable, g) // git in a session worktree (docs/worktrees.md)
	}
	for _, h := range s.cfg.Hidden {
		p.Hidden = append(p.Hidden, realOrClean(h))
	}
	if s.cfg.DataDir != "" {
		data := realOrClean(s.cfg.DataDir)
		p.Hidden = append(p.Hidden, data)
		if within(data, sc.real) {
			p.Expose = []string{sc.real}
		}
	}
	if s.cfg.TempRoot != "" && tmp != "" {
		// Other sessions' TMPDIRs are masked; this one is bound back.
		p.Hidden = append(p.Hidden, realOrClean(s.cfg.TempRoot))
		p.Expose = append(p.Expose, realOrClean(tmp))
	}
	p.ConfineReads = true
	p.Readable = readRoots(env, p.Hidden, s.cfg.Sandbox.Readable)
	return p
}

// readRoots are the read roots of a command with environment env besides
// the system's and its writable roots: its PATH's toolchains, git's
// global configuration and the configured extra roots.
func readRoots(env, hidden, extra []string) []string {
	var path, home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		} else if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	roots := sandbox.ToolchainReadable(path, home, hidden)
	roots = append(roots, sandbox.HomeReadable(home)...)
	return append(roots, extra...)
}

// startConfined starts command under the sandbox helper, without
// namespaces when the kernel refuses them.
func (s *Set) startConfined(st sandboxState, p sandbox.Policy, out *os.File) (*sandbox.Process, error) {
	proc, err := sandbox.Start(st.exe, p, out)
	if errors.Is(err, sandbox.ErrNoNamespaces) {
		s.log.Warn("user namespaces refused; running bash with Landlock only", "err", err)
		p.Namespaces = false
		proc, err = sandbox.Start(st.exe, p, out)
	}
	return proc, err
}
