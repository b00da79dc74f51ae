package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/foya-dev/foya/edge"
	"github.com/foya-dev/foya/internal/cmdutil"
)

// checkPprofAddr accepts loopback HOST:PORT addresses only: profiles and
// goroutine dumps describe the kernel's internals.
func checkPprofAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return cmdutil.Usagef("--pprof %q: want HOST:PORT on loopback, e.g. 127.0.0.1:6060", addr)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return cmdutil.Usagef("--pprof %q: profiles are served on loopback only (127.0.0.1, ::1 or localhost)", addr)
	}
	return nil
}

// startPprof serves net/http/pprof on addr (see checkPprofAddr), behind
// edge.DebugGuard: loopback Host names (and --allow-host) only, the Origin
// rule of /graphql, and the token when the kernel requires one (auth is not
// nil: always unless --insecure-no-token). It returns a function that stops
// the server.
func startPprof(addr string, auth *edge.Auth, origins, hosts []string, log *slog.Logger) (stop func(), err error) {
	if err := checkPprofAddr(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for pprof on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: edge.DebugGuard(mux, auth, origins, hosts), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("pprof server", "err", err)
		}
	}()
	log.Info("pprof listening", "addr", ln.Addr().String(), "profile", "go tool pprof http://"+ln.Addr().String()+"/debug/pprof/profile?seconds=10")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
