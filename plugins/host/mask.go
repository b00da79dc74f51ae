package host

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/foya-dev/foya/plugins/sandbox"
)

// mask returns how to start the built-in plugin name in its own user and
// mount namespaces with mk.Hidden masked (its run directory and mk.Expose
// bound back); nil where user namespaces or the masks do not work here (the
// plugin then relies on its own checks: the tool plugin on os.Root and
// descriptor checks, and says so in its sandboxDetail).
func (m *Manager) mask(name string, mk Mask) func(*exec.Cmd) (*exec.Cmd, error) {
	if !sandbox.Supported() {
		return nil
	}
	log := m.log.With("plugin", name)
	p := sandbox.Policy{Network: true, UID: os.Getuid(), GID: os.Getgid(), Expose: []string{realOrClean(m.RunDir())}}
	for _, h := range mk.Hidden {
		p.Hidden = append(p.Hidden, realOrClean(h))
	}
	for _, e := range mk.Expose {
		if err := os.MkdirAll(e, 0o700); err != nil {
			log.Warn("plugin runs without a masked data directory", "err", err)
			return nil
		}
		p.Expose = append(p.Expose, realOrClean(e))
	}
	rep, err := sandbox.Probe(m.cfg.Executable, p)
	if err != nil || !rep.Namespaces || !rep.Masked {
		log.Warn("plugin runs without a masked data directory: no user namespaces here", "err", err)
		return nil
	}
	exe := m.cfg.Executable
	return func(cmd *exec.Cmd) (*exec.Cmd, error) { return sandbox.WrapExec(exe, p, cmd) }
}

// lazyMask is mask, worked out at the plugin's first start rather than at
// Start (it runs the sandbox helper once to probe): a plugin that never
// starts costs nothing.
func (m *Manager) lazyMask(name string, mk Mask) func(*exec.Cmd) (*exec.Cmd, error) {
	var once sync.Once
	var wrap func(*exec.Cmd) (*exec.Cmd, error)
	return func(cmd *exec.Cmd) (*exec.Cmd, error) {
		once.Do(func() { wrap = m.mask(name, mk) })
		if wrap == nil {
			return cmd, nil
		}
		return wrap(cmd)
	}
}

func realOrClean(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
