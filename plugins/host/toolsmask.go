package host

import (
	"os"
	"os/exec"
	"path/filepath"

	"github.com/foya-dev/foya/plugins/sandbox"
)

// toolsMask returns how to start the tools plugin in its own user and
// mount namespaces with the data directory and the hidden secret files
// masked (the plugin's run directory and the sessions' scratch directories
// bound back), so that none of its path tools can reach them whatever a
// race makes them open; nil where user namespaces or the masks do not work
// here (the plugin then relies on os.Root and descriptor checks, and says
// so in its sandboxDetail).
func (m *Manager) toolsMask() func(*exec.Cmd) (*exec.Cmd, error) {
	tc := m.cfg.Tools
	if tc.NoSandbox || !sandbox.Supported() {
		return nil
	}
	data := tc.DataDir
	if data == "" {
		data = m.cfg.DataDir
	}
	scratch := tc.ScratchDir
	if scratch == "" {
		scratch = filepath.Join(data, "scratch")
	}
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		m.log.Warn("tools plugin runs without a masked data directory", "err", err)
		return nil
	}
	p := sandbox.Policy{Network: true, UID: os.Getuid(), GID: os.Getgid(), Hidden: []string{realOrClean(data)}}
	for _, h := range tc.Hidden {
		p.Hidden = append(p.Hidden, realOrClean(h))
	}
	p.Expose = []string{realOrClean(m.RunDir()), realOrClean(scratch)}
	rep, err := sandbox.Probe(m.cfg.Executable, sandbox.Policy{Network: true, Hidden: p.Hidden, Expose: p.Expose, UID: p.UID, GID: p.GID})
	if err != nil || !rep.Namespaces || !rep.Masked {
		m.log.Warn("tools plugin runs without a masked data directory: no user namespaces here", "err", err)
		return nil
	}
	exe := m.cfg.Executable
	return func(cmd *exec.Cmd) (*exec.Cmd, error) { return sandbox.WrapExec(exe, p, cmd) }
}

func realOrClean(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
