//go:build !unix

// Package terminal starts the processes of background terminals; on this
// system there are none.
package terminal

import (
	"context"

	"github.com/foya-dev/foya/core"
)

// Launcher refuses every terminal on this system.
type Launcher struct{}

// New returns a launcher that refuses terminals.
func New(Config) *Launcher { return &Launcher{} }

// Confined reports false.
func (l *Launcher) Confined() bool { return false }

// StartTerminal implements core.TerminalLauncher.
func (l *Launcher) StartTerminal(context.Context, core.TerminalStart) (core.TerminalProcess, error) {
	return nil, core.Errorf(core.CodeUnavailable, "terminals need a Unix system")
}
