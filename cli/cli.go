// Package cli is foya's client commands: exec, connections, sessions, mcp,
// projects, terminals, backup, attachments, acp and schema. They talk to a kernel over its
// GraphQL API only (see package client for the typed client they use),
// starting one for the duration of the command when none answers
// (terminals follow never does). The composition root (package
// main) dispatches to Run; this package never imports it.
package cli

import (
	"io"

	"github.com/foya-dev/foya/internal/cmdutil"
)

// Config is what the composition root gives the client commands.
type Config struct {
	Version string // the binary's version (acp reports it)
	Schema  string // the GraphQL SDL the binary was built with (foya schema)
}

// Names lists the client commands, in the order of the top-level usage.
var Names = []string{"exec", "connections", "sessions", "mcp", "projects", "acp", "schema", "web", "terminals", "backup", "attachments"}

// Run runs the client command args[0] and returns the process exit code;
// ok is false when args[0] is not a client command.
func Run(cfg Config, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int, ok bool) {
	if len(args) == 0 {
		return 0, false
	}
	var err error
	switch args[0] {
	case "exec":
		return execCmd(args[1:], stdin, stdout, stderr), true
	case "terminals":
		return terminalsCmd(args[1:], stdin, stdout, stderr), true
	case "acp":
		err = acpCmd(cfg, args[1:], stdin, stdout, stderr)
	case "connections":
		err = connectionsCmd(args[1:], stdin, stdout, stderr)
	case "sessions":
		err = sessionsCmd(args[1:], stdin, stdout, stderr)
	case "mcp":
		err = mcpCmd(args[1:], stdout, stderr)
	case "projects":
		err = projectsCmd(args[1:], stdout, stderr)
	case "schema":
		err = schemaCmd(cfg, args[1:], stdout)
	case "web":
		err = webCmd(args[1:], stdout, stderr)
	case "backup":
		err = backupCmd(args[1:], stdout, stderr)
	case "attachments":
		err = attachmentsCmd(args[1:], stdin, stdout, stderr)
	default:
		return 0, false
	}
	return cmdutil.Exit(err, stderr), true
}
