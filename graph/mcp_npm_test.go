package graph_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/foya-dev/foya/internal/testenv"
)

var execLookPath = exec.LookPath

// npmCI installs the locked packages of dir unless entry (a file under its
// node_modules) is there; parallel tests take turns (testenv.NPMInstall).
func npmCI(dir, npm, entry string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	marker, err := filepath.Rel(filepath.Join(dir, "node_modules"), entry)
	if err != nil {
		return err
	}
	if out, err := testenv.NPMInstall(ctx, npm, dir, marker); err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	return nil
}
