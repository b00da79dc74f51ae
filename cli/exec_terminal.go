package cli

import (
	"fmt"

	"github.com/foya-dev/foya/client"
)

// terminalLine is what foya exec prints when a background terminal starts
// or ends (docs/terminals.md).
func terminalLine(typ string, tm client.TerminalFields) string {
	if typ == "terminal_started" {
		return fmt.Sprintf("terminal %s started: %s (in %s)", tm.Id, short(tm.Command, 120), tm.Cwd)
	}
	how := string(tm.Status)
	switch {
	case tm.Status == client.TerminalStatusKilled:
		how = "killed"
	case tm.ExitCode != nil && *tm.ExitCode >= 0:
		how = fmt.Sprintf("exited with code %d", *tm.ExitCode)
	case tm.ExitCode != nil:
		how = "ended by a signal"
	}
	line := fmt.Sprintf("terminal %s %s: %s, %d bytes of output", tm.Id, how, short(tm.Command, 120), tm.OutputBytes)
	if tm.DroppedBytes > 0 {
		line += fmt.Sprintf(" (%d dropped)", tm.DroppedBytes)
	}
	return line
}
