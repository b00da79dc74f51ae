package mcphost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/plugins/sandbox"
)

// SandboxConfig confines STDIO servers like the bash tool (package
// sandbox, docs/mcp.md): writes only in the server's state directory, the
// session's directory for a server attached to a session, /tmp and the
// extra writable roots; the data directory and the hidden files masked;
// its processes in a PID namespace that ends with it. The network stays on.
type SandboxConfig struct {
	// Executable serves the sandbox helper; "" means os.Executable().
	Executable string
	// DataDir and Hidden are masked (the kernel's data directory, its
	// token and TLS key files kept elsewhere).
	DataDir string
	Hidden  []string
	// Writable are extra writable roots (`foya serve --tool-writable`).
	Writable []string
	// Readable are extra read roots (`foya serve --tool-readable`). A
	// server reads only the system directories, its PATH's toolchains,
	// its program's directories (sandbox.ProgramReadable), its state
	// directory, its session's directory, /tmp, the writable roots and
	// these.
	Readable []string
	// Limits bound the server's processes, file size and address space
	// (CPUSeconds does not apply: a server runs for long).
	Limits sandbox.Limits
	// Off runs servers unconfined (tests of the unconfined path only).
	Off bool
}

// StateDirFor is the state directory of a STDIO server:
// <root>/<name> for a kernel-wide server, <root>-sessions/<session>/<name>
// for one attached to a session. Names that are not plain file names get
// a hash suffix.
func StateDirFor(root string, c core.MCPServerConfig) string {
	if c.SessionID != "" {
		return filepath.Join(root+"-sessions", fileName(c.SessionID), fileName(c.Name))
	}
	return filepath.Join(root, fileName(c.Name))
}

var plainName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

func fileName(s string) string {
	if plainName.MatchString(s) {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	clean := regexp.MustCompile(`[^A-Za-z0-9_.-]`).ReplaceAllString(s, "_")
	return strings.TrimLeft(clean, ".") + "-" + hex.EncodeToString(sum[:4])
}

// DefaultStateRoot is <user cache dir>/foya/mcp (~/.cache/foya/mcp).
func DefaultStateRoot() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "foya", "mcp")
}

// confinement is what the Manager found out about the sandbox, once.
type confinement struct {
	once       sync.Once
	exe        string
	usable     bool
	namespaces bool
	detail     string
}

func (m *Manager) confinement() *confinement {
	c := &m.conf
	c.once.Do(func() {
		sc := m.cfg.Sandbox
		switch {
		case sc == nil || sc.Off:
			c.detail = "STDIO MCP servers run unconfined: no sandbox configured"
		case !sandbox.Supported():
			c.detail = "STDIO MCP servers run unconfined: no sandbox on this system"
		default:
			exe := sc.Executable
			if exe == "" {
				var err error
				if exe, err = os.Executable(); err != nil {
					c.detail = "STDIO MCP servers run unconfined: cannot find the sandbox helper: " + err.Error()
					break
				}
			}
			base := sandbox.Policy{Network: true, ConfineReads: true, Devices: sandbox.DefaultDevices, UID: os.Getuid(), GID: os.Getgid(), Hidden: masked(sc)}
			rep, err := sandbox.Probe(exe, base)
			if err != nil {
				c.detail = "STDIO MCP servers run unconfined: the sandbox helper failed: " + err.Error()
				break
			}
			if !rep.Landlock && !rep.Namespaces {
				c.detail = "STDIO MCP servers run unconfined: neither Landlock nor user namespaces are available"
				break
			}
			c.exe, c.usable, c.namespaces = exe, true, rep.Namespaces
			c.detail = fmt.Sprintf("STDIO MCP servers are confined: Landlock %t (ABI %d; writes and reads confined to their roots when true), user namespaces %t", rep.Landlock, rep.ABI, rep.Namespaces)
		}
		if c.usable {
			m.log.Info("mcp sandbox", "detail", c.detail)
		} else {
			m.log.Warn("mcp sandbox", "detail", c.detail)
		}
	})
	return c
}

func masked(sc *SandboxConfig) []string {
	var out []string
	if sc.DataDir != "" {
		out = append(out, realOrClean(sc.DataDir))
	}
	for _, h := range sc.Hidden {
		out = append(out, realOrClean(h))
	}
	return out
}

func realOrClean(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

func within(dir, p string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, "../") && !filepath.IsAbs(r)
}

// serverEnv is the whole environment of a STDIO server: a minimal base
// (PATH and LANG from the kernel, HOME, XDG_* and TMPDIR in its state
// directory) and its own configured env on top. Nothing else of the
// kernel's environment.
func serverEnv(c core.MCPServerConfig, state string) []string {
	get := func(k, def string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return def
	}
	env := []string{
		"PATH=" + get("PATH", "/usr/local/bin:/usr/bin:/bin"),
		"LANG=" + get("LANG", "C.UTF-8"),
		"HOME=" + state,
		"XDG_CONFIG_HOME=" + filepath.Join(state, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(state, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(state, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(state, ".local", "state"),
		"TMPDIR=" + filepath.Join(state, "tmp"),
	}
	for _, kv := range c.Env {
		env = append(env, kv.Key+"="+kv.Value)
	}
	return env
}

// envPath is the PATH of env (the last one wins, as for the process).
func envPath(env []string) string {
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	return path
}

// findCommand checks that name runs: an executable path, or a name found on
// PATH, so a missing program is a clear error instead of a server that
// closes its connection.
func findCommand(name, path string) error {
	if strings.Contains(name, "/") {
		fi, err := os.Stat(name)
		if err != nil {
			return fmt.Errorf("command %s: %w", name, err)
		}
		if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			return fmt.Errorf("command %s is not an executable file", name)
		}
		return nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return nil
		}
	}
	return fmt.Errorf("command %q was not found on PATH %s", name, path)
}

// stdioCommand builds the process of a STDIO server, confined when the
// sandbox is usable. Its stdin and stdout are left to the MCP transport.
func (m *Manager) stdioCommand(ctx context.Context, c core.MCPServerConfig) (*exec.Cmd, error) {
	state := StateDirFor(m.stateRoot(), c)
	if err := os.MkdirAll(filepath.Join(state, "tmp"), 0o700); err != nil {
		return nil, fmt.Errorf("create the server's state directory: %w", err)
	}
	env := serverEnv(c, state)
	if err := findCommand(c.Command, envPath(env)); err != nil {
		return nil, err
	}
	conf := m.confinement()
	if !conf.usable {
		cmd := exec.Command(c.Command, c.Args...)
		cmd.Env, cmd.Dir = env, state
		childSysProcAttr(cmd)
		return cmd, nil
	}
	sc := m.cfg.Sandbox
	p := sandbox.Policy{
		Namespaces: conf.namespaces,
		Writable:   append([]string{state, "/tmp"}, sc.Writable...),
		Devices:    sandbox.DefaultDevices,
		Hidden:     masked(sc),
		Network:    true,
		UID:        os.Getuid(),
		GID:        os.Getgid(),
		Dir:        state,
		Env:        env,
		Argv:       append([]string{c.Command}, c.Args...),
		Stdin:      true,
		Limits:     sc.Limits,
	}
	p.Limits.CPUSeconds = 0
	home, _ := os.UserHomeDir()
	p.ConfineReads = true
	p.Readable = append(sandbox.ToolchainReadable(envPath(env), home, p.Hidden), sandbox.ProgramReadable(p.Argv, envPath(env), home, p.Hidden)...)
	p.Readable = append(p.Readable, sc.Readable...)
	if c.SessionID != "" && m.cfg.ScopeDir != nil {
		dir, err := m.cfg.ScopeDir(ctx, c.SessionID)
		if err != nil {
			return nil, fmt.Errorf("the directory of session %s: %w", c.SessionID, err)
		}
		if dir != "" {
			dir = realOrClean(dir)
			for _, h := range p.Hidden {
				if within(h, dir) {
					p.Expose = append(p.Expose, dir) // a scratch directory
				}
			}
			p.Writable = append(p.Writable, dir)
			p.Dir = dir
		}
	}
	cmd, err := sandbox.Command(conf.exe, p)
	if err != nil {
		return nil, err
	}
	return cmd, nil
}

func (m *Manager) stateRoot() string {
	if m.cfg.StateDir != "" {
		return m.cfg.StateDir
	}
	return DefaultStateRoot()
}

// SandboxDetail says how STDIO servers run on this system.
func (m *Manager) SandboxDetail() string { return m.confinement().detail }
