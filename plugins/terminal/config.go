package terminal

import (
	"log/slog"

	"github.com/foya-dev/foya/plugins/sandbox"
)

// Config is the confinement of terminal commands: the bash tool's.
type Config struct {
	// DataDir is masked; Hidden are more secret paths masked like it.
	DataDir string
	Hidden  []string
	// TempRoot holds one TMPDIR per session (the bash tool's); empty uses
	// the system's temporary directory.
	TempRoot   string
	Writable   []string
	Readable   []string
	NetworkOff bool
	// NoSandbox runs terminals unconfined.
	NoSandbox bool
	Limits    sandbox.Limits
	Logger    *slog.Logger
}
