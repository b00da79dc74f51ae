package graph_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"
)

var execLookPath = exec.LookPath

// npmMu makes parallel tests take turns at npmCI: npm ci empties
// node_modules before it installs, so a second install, or a test running
// the packages meanwhile, would find them half gone.
var npmMu sync.Mutex

// npmCI installs the locked packages of dir unless entry (a file they
// hold) is there.
func npmCI(dir, npm, entry string) error {
	npmMu.Lock()
	defer npmMu.Unlock()
	if _, err := os.Stat(entry); err == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	return nil
}
