//go:build !unix

package hooks

import (
	"context"
	"errors"
	"log/slog"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/plugins/sandbox"
)

// Runner refuses to run hooks on systems without process groups.
type Runner struct {
	Hidden []string
	Limits sandbox.Limits
}

// NewRunner returns a runner whose hooks never run.
func NewRunner(string, *slog.Logger) *Runner { return &Runner{} }

// RunHook implements core.HookRunner.
func (r *Runner) RunHook(context.Context, core.HookRun) core.HookOutcome {
	return core.HookOutcome{Err: errors.New("hooks are not supported on this system")}
}
