//go:build !unix

// Package terminal starts the processes of background terminals; on this
// system there are none.
package terminal

import (
	"context"
	"log/slog"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/plugins/sandbox"
)

// Config is the confinement of terminal commands (unused here).
type Config struct {
	DataDir    string
	Hidden     []string
	TempRoot   string
	Writable   []string
	Readable   []string
	NetworkOff bool
	NoSandbox  bool
	Limits     sandbox.Limits
	Logger     *slog.Logger
}

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
