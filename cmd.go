package main

import (
	_ "embed"
	"errors"

	"github.com/foya-dev/foya/internal/cmdutil"
)

// The pieces main shares with the client commands (package cli) live in
// internal/cmdutil; these names keep the composition root short.

//go:embed schema.graphqls
var schemaSDL string

type (
	usageError = cmdutil.UsageError
	listFlag   = cmdutil.ListFlag
)

func defaultDataDir() string                    { return cmdutil.DefaultDataDir() }
func prepareDataDir(dir string) (string, error) { return cmdutil.PrepareDataDir(dir) }
func versionString() string                     { return cmdutil.Version(version) }

// usageOr is err, or else a usage error saying msg.
func usageOr(err error, msg string) error {
	if err != nil {
		return err
	}
	return usageError{Err: errors.New(msg)}
}

var serveCommand = cmdutil.Command{
	Name:     "serve",
	Synopsis: "[flags]",
	Doc: `Runs the kernel: the GraphQL API (HTTP, WebSocket, SSE), the web UI and
the playground, on a loopback address by default. See docs/.`,
}
