package daemon

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"

	"github.com/foya-dev/foya/edge"
	"github.com/foya-dev/foya/edge/access"
	"github.com/foya-dev/foya/internal/cmdutil"
)

// tokenPolicy is what the serve flags say about the bearer token.
type tokenPolicy struct {
	file     string // --auth-token-file (default <data-dir>/auth-token)
	insecure bool   // --insecure-no-token: loopback only
}

// checkInsecureNoToken refuses --insecure-no-token on a listener that is not
// loopback-only: beyond loopback the token is always required.
func checkInsecureNoToken(p tokenPolicy, loopback bool, addr string) error {
	if p.insecure && !loopback {
		return cmdutil.Usagef("--insecure-no-token: refused on %s, which is reachable beyond loopback; the token is always required there (drop the flag, or listen on 127.0.0.1)", addr)
	}
	return nil
}

// serveAuth returns the token check of the kernel: required on every
// listener, loopback included, unless --insecure-no-token (loopback only,
// checked by checkInsecureNoToken) turns it off; then it is nil and a
// warning is logged at every start.
func serveAuth(ctx context.Context, p tokenPolicy, dataDir string, log *slog.Logger) (*edge.Auth, error) {
	if p.insecure {
		log.Warn("--insecure-no-token: this kernel requires no token on loopback. Any local process can drive it, " +
			"including the commands models run with the bash tool, which can then create MCP servers and change connections; " +
			"drop the flag to require the token (docs/security.md)")
		return nil, nil
	}
	path := p.file
	if path == "" {
		path = filepath.Join(dataDir, access.TokenFileName)
	}
	auth, err := edge.NewAuth(path, log)
	if err != nil {
		return nil, err
	}
	go auth.Watch(ctx, edge.WatchInterval)
	return auth, nil
}

// logWebLink logs how to open Foya web with the token. On loopback that is
// the link itself, the token in its fragment (#token=…): browsers never send
// a fragment to a server, so it reaches no access log, and the page moves it
// to sessionStorage and off the address bar. Beyond loopback the token never
// goes to the log: `foya web` on the kernel's machine prints the link.
func logWebLink(log *slog.Logger, auth *edge.Auth, ln net.Listener, scheme string) {
	if auth == nil {
		return
	}
	if !isLoopbackListener(ln) {
		log.Info("the token is not written to the log of a kernel reachable beyond loopback: run `foya web` (or `foya token show`) on this machine for the web link", "token_file", auth.Path())
		return
	}
	tok, err := access.ReadToken(auth.Path())
	if err != nil {
		log.Warn("cannot read the token for the web link; `foya web` prints it", "err", err)
		return
	}
	log.Info("open Foya web (the link holds the token; keep it private)", "url", access.WebLink(scheme, playgroundHost(ln), tok))
}
