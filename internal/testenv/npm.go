package testenv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// npmLocks holds a lock per directory of npm packages (*sync.Mutex by
// path).
var npmLocks sync.Map

// NPMInstall runs `npm ci` in dir unless every marker (a path under its
// node_modules) is there, and returns npm's output. Tests that run in
// parallel and need the same directory take turns: npm ci empties
// node_modules before it installs, so a second install, or a test reading
// the packages meanwhile, would find them half gone.
func NPMInstall(ctx context.Context, npm, dir string, markers ...string) ([]byte, error) {
	mu, _ := npmLocks.LoadOrStore(dir, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	missing := false
	for _, m := range markers {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", m)); err != nil {
			missing = true
		}
	}
	if !missing {
		return nil, nil
	}
	install := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	install.Dir = dir
	return install.CombinedOutput()
}
