package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/foya-dev/foya/graph"
)

const tokenUsage = `Usage: foya token rotate|show [--data-dir DIR] [--auth-token-file PATH]

The bearer token clients send to a kernel that requires one (any kernel
listening beyond loopback, or started with --require-token). It lives in
<data-dir>/auth-token (mode 0600) unless --auth-token-file says otherwise.

  rotate   replace the token; a running kernel notices within a second, then
           refuses the old token and closes WebSocket and SSE connections
           opened with it
  show     print the token (created when missing), e.g. to give it to a
           remote client: FOYA_TOKEN=$(foya token show) foya sessions list

Flags:
`

// tokenCmd is `foya token`.
func tokenCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, tokenUsage); fs.PrintDefaults() }
	dataDir := fs.String("data-dir", defaultDataDir(), "data directory of the kernel")
	tokenFile := fs.String("auth-token-file", "", "token file (default <data-dir>/auth-token)")
	if err := fs.Parse(interleaved(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err}
	}
	if fs.NArg() != 1 {
		return usageError{errors.New("usage: foya token rotate|show [--data-dir DIR] [--auth-token-file PATH]")}
	}
	path := *tokenFile
	if path == "" {
		dir, err := prepareDataDir(*dataDir)
		if err != nil {
			return err
		}
		path = filepath.Join(dir, graph.TokenFileName)
	}
	switch fs.Arg(0) {
	case "rotate":
		if _, err := graph.RotateToken(path); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote a new token to %s; a running kernel uses it within a second and closes connections opened with the old one\n", path)
		return nil
	case "show":
		tok, _, err := graph.LoadOrCreateToken(path)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, tok)
		return nil
	default:
		return usageError{fmt.Errorf("unknown token command %q: use rotate or show", fs.Arg(0))}
	}
}
