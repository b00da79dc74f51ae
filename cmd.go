package main

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"

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

var versionCommand = cmdutil.Command{Name: "version", Synopsis: "[--json]", Doc: "Prints the version."}

// versionCmd prints the version: `foya <version>`, or {"version": "…"} with --json.
func versionCmd(args []string, stdout io.Writer) error {
	fs := cmdutil.NewFlagSet(versionCommand, stdout)
	asJSON := fs.Bool("json", false, "print JSON: {\"version\": \"…\"}")
	rest, err := cmdutil.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{Err: errors.New("usage: foya version [--json]")}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]string{"version": versionString()})
	}
	_, err = fmt.Fprintln(stdout, "foya", versionString())
	return err
}
