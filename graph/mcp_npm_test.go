package graph_test

import (
	"context"
	"fmt"
	"os/exec"
	"time"
)

var execLookPath = exec.LookPath

// npmCI installs the locked packages of dir.
func npmCI(dir, npm string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	return nil
}
