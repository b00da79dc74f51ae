// Command foya is the Foya agent kernel: a local daemon that owns agent
// sessions and serves them over GraphQL, and the client commands that
// drive it. This file only reads the command line and dispatches:
//
//	foya serve              daemon.Main: the composition root (opens storage,
//	                        starts plugins, wires core, serves the HTTP edge)
//	foya plugin NAME        daemon.RunPlugin: the binary re-executed by the
//	                        plugin host as a built-in plugin (providers, tools)
//	foya token …            daemon: commands on a kernel's data directory
//	foya rebuild-projections
//	foya exec, sessions, connections, mcp, acp, web, schema, …
//	                        cli: clients of the GraphQL API (package client)
//
// The kernel, arrows pointing inward (internal/deptest checks them):
//
//	edge → graph → core ← storage          HTTP edge, GraphQL layer, domain, SQLite/PostgreSQL
//	plugins/host → core, plugins/sdk       provider and tool plugins, out of process
//	providers → plugins/sdk                OpenAI, Anthropic, Responses, served as plugins
//	cli → acp, client                      no server package
//
// docs/architecture.md is the package map.
package main

//go:generate go tool gqlgen generate

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/foya-dev/foya/cli"
	"github.com/foya-dev/foya/daemon"
	"github.com/foya-dev/foya/internal/cmdutil"
	"github.com/foya-dev/foya/plugins/sandbox"
)

// version is set with -ldflags "-X main.version=…"; otherwise the module or
// VCS version is used.
var version = ""

// schemaSDL is the GraphQL schema (`foya schema` prints it).
//
//go:embed schema.graphqls
var schemaSDL string

func main() {
	sandbox.MaybeHelper() // `foya __sandbox POLICY`: the confined-command helper
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `foya — the Foya agent kernel

Usage:
  foya serve [--addr 127.0.0.1:4777] [--data-dir DIR] [--plugin-dir DIR] [--allow-origin PATTERN]
             [--allow-host NAME] [--auth-token-file PATH] [--insecure-no-token] [--tls-cert FILE --tls-key FILE]
             [--pprof 127.0.0.1:6060] [--database postgres://…] [--plugin-idle-stop 1m]
             [--tool-writable PATH] [--tool-readable PATH] [--tool-network on|off] [--tool-max-procs N] [--tool-max-memory SIZE]
             [--tool-max-file-size SIZE] [--tool-max-cpu DURATION] [--terminal-max-cpu DURATION] [--allow-key-env NAME]
             [--ws-ping-interval 15s] [--otlp-endpoint URL] [--otel-capture-content]   (telemetry: docs/telemetry.md)
  foya token rotate|show [--data-dir DIR] [--auth-token-file PATH]
  foya web [--open] [--addr A] [--data-dir DIR] [--token-file PATH]   (prints the web link with the token)
  foya rebuild-projections [--data-dir DIR] [--database postgres://…]
  foya secret-key rotate NEW_KEY_FILE [--data-dir DIR] [--database postgres://…] [--secret-key-file PATH]
             (re-seals the stored secrets under a new key, kernels stopped; docs/postgresql.md)
  foya exec [-c | --session ID] [--project DIR | --no-project] [--worktree] [--model CONN/MODEL] [--approval-mode M] [--json] "prompt"
             (the project is the current directory by default)
  foya acp [--addr A] [--data-dir DIR]   (Agent Client Protocol agent on stdio, for editors; docs/acp.md)
  foya connections list|add|remove|models|default    foya sessions list|show|rm    foya schema
  foya mcp list|add|remove|restart           (MCP servers as tool sources; see docs/mcp.md)
  foya terminals list|follow SESSION [TERMINAL]   (a session's background terminals; see docs/terminals.md)
  foya projects list|trust                   (trust runs PATH/.foya/hooks.json; see docs/hooks.md)
  foya backup FILE                           (a live copy of the kernel's database, written by the kernel)
  foya attachments save ID [FILE]            (an attachment's bytes: an upload, a generated image or video)
  (client commands reach the kernel at --addr, else $FOYA_ADDR, else 127.0.0.1:4777, and start one
   when none answers; they send $FOYA_TOKEN, --token-file PATH or <data-dir>/auth-token when it requires a token)
  foya version [--json]
  foya help [COMMAND]  (the same as foya COMMAND --help)
  foya plugin NAME     (internal: serves a built-in plugin to the kernel)

Run 'foya COMMAND --help' for a command's flags.
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	if code, ok := cli.Run(cli.Config{Version: versionString(), Schema: schemaSDL}, args, os.Stdin, stdout, stderr); ok {
		return code
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(args[1:], stdout, stderr)
	case "rebuild-projections":
		err = daemon.RebuildProjections(context.Background(), args[1:], stdout, stderr)
	case "token":
		err = daemon.Token(args[1:], stdout, stderr)
	case "secret-key":
		err = daemon.SecretKey(context.Background(), args[1:], stdout, stderr)
	case "plugin":
		if len(args) == 2 && cmdutil.IsHelp(args[1]) {
			cmdutil.PrintUsage(stdout, cmdutil.Command{Name: "plugin", Synopsis: "NAME", Doc: "Internal: serves a built-in plugin to the kernel that started it."}, nil)
			return 0
		}
		if len(args) != 2 {
			err = cmdutil.UsageError{Err: errors.New("usage: foya plugin NAME")}
			break
		}
		err = daemon.RunPlugin(args[1])
	case "version", "--version", "-v":
		err = versionCmd(args[1:], stdout)
	case "help", "--help", "-h":
		if len(args) > 1 && args[0] == "help" {
			// foya help CMD [SUB] is foya CMD [SUB] --help.
			return run(append(append([]string{}, args[1:]...), "--help"), stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "foya: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	return cmdutil.Exit(err, stderr)
}

// serve is `foya serve`: the kernel runs until SIGINT or SIGTERM.
func serve(args []string, stdout, stderr io.Writer) error {
	m := daemon.NewMain(versionString(), stdout, stderr)
	if err := m.ParseFlags(args); err != nil {
		return err
	}
	m.TuneRuntime()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer m.Close()
	if err := m.Run(ctx); err != nil {
		return err
	}
	return m.Wait(ctx)
}

func versionString() string { return cmdutil.Version(version) }

// versionCmd prints the version: `foya <version>`, or {"version": "…"} with --json.
func versionCmd(args []string, stdout io.Writer) error {
	fs := cmdutil.NewFlagSet(cmdutil.Command{Name: "version", Synopsis: "[--json]", Doc: "Prints the version."}, stdout)
	asJSON := fs.Bool("json", false, "print JSON: {\"version\": \"…\"}")
	rest, err := cmdutil.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return cmdutil.UsageError{Err: errors.New("usage: foya version [--json]")}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]string{"version": versionString()})
	}
	_, err = fmt.Fprintln(stdout, "foya", versionString())
	return err
}
