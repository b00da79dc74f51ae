package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/foya-dev/foya/edge/access"
	"github.com/foya-dev/foya/internal/cmdutil"
)

var tokenCommand = cmdutil.Command{
	Name:     "token",
	Synopsis: "rotate|show [--json] [--data-dir DIR] [--auth-token-file PATH]",
	Doc: `The bearer token clients send to the kernel (required on every listener,
loopback included, unless serve --insecure-no-token). It lives in
<data-dir>/auth-token (mode 0600) unless --auth-token-file says otherwise.
foya web prints the link that opens Foya web with it.

  rotate   replace the token; a running kernel notices within a second, then
           refuses the old token and closes WebSocket and SSE connections
           opened with it
  show     print the token (created when missing), e.g. to give it to a
           remote client: FOYA_TOKEN=$(foya token show) foya sessions list`,
}

// Token is `foya token`: it rotates or shows the bearer token of a data
// directory.
func Token(args []string, stdout, stderr io.Writer) error {
	fs := cmdutil.NewFlagSet(tokenCommand, stdout)
	dataDir := fs.String("data-dir", cmdutil.DefaultDataDir(), "data directory of the kernel")
	tokenFile := fs.String("auth-token-file", "", "token file (default <data-dir>/auth-token)")
	asJSON := fs.Bool("json", false, "show: print {\"token\": …, \"file\": …} as one JSON object")
	if _, err := cmdutil.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cmdutil.UsageError{Err: errors.New("usage: foya token rotate|show [--data-dir DIR] [--auth-token-file PATH]")}
	}
	path := *tokenFile
	if path == "" {
		dir, err := cmdutil.PrepareDataDir(*dataDir)
		if err != nil {
			return err
		}
		path = filepath.Join(dir, access.TokenFileName)
	}
	switch fs.Arg(0) {
	case "rotate":
		if _, err := access.RotateToken(path); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote a new token to %s; a running kernel uses it within a second and closes connections opened with the old one\n", path)
		return nil
	case "show":
		tok, _, err := access.LoadOrCreateToken(path)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(struct {
				Token string `json:"token"`
				File  string `json:"file"`
			}{tok, path})
		}
		fmt.Fprintln(stdout, tok)
		return nil
	default:
		return cmdutil.Usagef("unknown token command %q: use rotate or show", fs.Arg(0))
	}
}
