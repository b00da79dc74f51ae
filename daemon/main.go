// Package daemon is the composition root of `foya serve`: it opens storage,
// starts plugins, wires the core services and serves HTTP. It is the only
// package that imports everything (and the one place that knows the
// built-in plugins compiled into the binary); nothing imports it but the
// command in the module root.
//
// Main follows wtf's cmd/wtfd: ParseFlags reads the command line into
// Config, Run opens the kernel and starts serving, Wait blocks until the
// context ends or the server fails, Close shuts everything down:
//
//	m := daemon.NewMain(version, os.Stdout, os.Stderr)
//	if err := m.ParseFlags(args); err != nil { … }
//	defer m.Close()
//	if err := m.Run(ctx); err != nil { … }
//	return m.Wait(ctx)
//
// The other commands that work on a data directory without a running
// kernel (token, rebuild-projections) and the body of `foya plugin NAME`
// (RunPlugin) live here too.
package daemon

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	coretelemetry "github.com/foya-dev/foya/core/telemetry"
	"github.com/foya-dev/foya/edge"
	"github.com/foya-dev/foya/telemetry"
)

// Main is one run of `foya serve`.
type Main struct {
	// Version is the kernel's version: logged at start, told to MCP servers.
	Version string
	// Stdout receives --help; Stderr the log.
	Stdout, Stderr io.Writer
	// Config is set by ParseFlags; a test may adjust it before Run.
	Config Config

	log       *slog.Logger
	kernel    *kernel
	ln        net.Listener
	srv       *http.Server
	served    chan error // the result of srv.Serve
	failed    bool       // the server stopped on its own (Wait returned its error)
	stopPprof func()
	tel       *telemetry.Telemetry
}

// NewMain returns a Main that logs to stderr and prints --help on stdout.
func NewMain(version string, stdout, stderr io.Writer) *Main {
	return &Main{Version: version, Stdout: stdout, Stderr: stderr}
}

// Run opens the kernel on m.Config and starts serving; it returns once the
// kernel listens (the "listening" line is logged). On an error the caller
// still calls Close.
func (m *Main) Run(ctx context.Context) error {
	c := m.Config
	m.log = slog.New(coretelemetry.LogHandler(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: c.LogLevel})))
	log := m.log
	if err := m.startTelemetry(ctx); err != nil {
		return err
	}
	if err := protectProcess(); err != nil {
		log.Warn("could not make the kernel process non-dumpable", "err", err)
	}
	var tlsConfig *tls.Config
	if c.TLSCert != "" {
		var err error
		if tlsConfig, err = loadTLS(c.TLSCert, c.TLSKey, log); err != nil {
			return err
		}
	}
	k, err := openKernel(ctx, c, m.Version, log)
	if err != nil {
		return err
	}
	m.kernel = k
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.Addr, err)
	}
	m.ln = ln
	loopback := isLoopbackListener(ln)
	tokens := tokenPolicy{file: c.TokenFile, insecure: c.InsecureNoToken}
	if err := checkInsecureNoToken(tokens, loopback, ln.Addr().String()); err != nil {
		return err
	}
	auth, err := serveAuth(ctx, tokens, k.dataDir, log)
	if err != nil {
		return err
	}
	if c.Pprof != "" {
		if m.stopPprof, err = startPprof(c.Pprof, auth, c.Origins, c.Hosts, log); err != nil {
			return err
		}
	}
	if err := k.startCluster(ctx, advertiseURL(c.AdvertiseURL, ln, tlsConfig != nil), log); err != nil {
		return err
	}
	if !loopback && tlsConfig == nil {
		log.Warn("listening beyond loopback without TLS: the token and all traffic cross the network in clear text; " +
			"serve HTTPS with --tls-cert/--tls-key, or put a TLS-terminating reverse proxy in front")
	}
	m.serve(ctx, auth, tlsConfig)
	return nil
}

// serve starts the HTTP server on m.ln and logs where it listens.
func (m *Main) serve(ctx context.Context, auth *edge.Auth, tlsConfig *tls.Config) {
	c, k, log, ln := m.Config, m.kernel, m.log, m.ln
	m.srv = &http.Server{
		Handler: edge.NewHandler(edge.Config{
			Service: k.sessions, Engine: k.engine, Usage: k.db, Catalog: k.catalog, Plugins: k.plugins, MCP: k.mcp, Worktrees: k.worktrees,
			Logger: log, OriginPatterns: c.Origins, HostPatterns: c.Hosts, Auth: auth, Nodes: k.nodes,
			Terminals:      k.terminalsOrNil(),
			Backup:         k.db,
			ClusterKey:     k.clusterKey,
			Limits:         c.Requests,
			KeepAlive:      c.WSPing,
			Metrics:        m.metricsHandler(),
			ClientMetadata: k.clientMetadata(c.MCPClientMetadataURL, m.Version),
		}),
		TLSConfig:         tlsConfig,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ReadHeaderTimeout: edge.HeaderReadTimeout,
		IdleTimeout:       edge.IdleTimeout, // body deadlines are per request (edge.BodyReadTimeout)
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	m.served = make(chan error, 1)
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
		go func() { m.served <- m.srv.ServeTLS(ln, "", "") }()
	} else {
		go func() { m.served <- m.srv.Serve(ln) }()
	}
	base := strings.TrimRight(c.AdvertiseURL, "/")
	if base == "" {
		base = scheme + "://" + playgroundHost(ln)
	}
	k.callbackURL.set(base + edge.MCPOAuthCallbackPath)
	logWebLink(log, auth, ln, scheme) // before "listening": whoever waits for that line finds the link
	log.Info("listening", "addr", ln.Addr().String(), "web", scheme+"://"+playgroundHost(ln)+"/", "playground", scheme+"://"+playgroundHost(ln)+"/playground", "token_required", auth != nil, "data_dir", k.dataDir, "version", m.Version)
}

// Addr is the address the kernel listens on (after Run).
func (m *Main) Addr() string { return m.ln.Addr().String() }

// Wait blocks until ctx ends (nil) or the server stops on its own.
func (m *Main) Wait(ctx context.Context) error {
	select {
	case err := <-m.served:
		m.failed = true
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
		return nil
	}
}

// Close shuts the kernel down: a server still serving finishes its
// requests (10 s at most) and the running turns stop; then the pprof
// server, the cluster membership, MCP servers, plugins, the database and
// the data-directory lock go. Failures are logged.
func (m *Main) Close() {
	if m.srv != nil && !m.failed {
		m.log.Info("shutting down")
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.srv.Shutdown(shutdownCtx); err != nil {
			m.log.Warn("http shutdown", "err", err)
		}
		if err := m.kernel.engine.Close(shutdownCtx); err != nil {
			m.log.Warn("stop running turns", "err", err)
		}
		if m.kernel.terminals != nil {
			m.kernel.terminals.Close(shutdownCtx) // recorded as KILLED
		}
		if m.kernel.node != nil {
			m.kernel.node.Close(shutdownCtx) // gives the sessions up: other nodes take them at once
		}
	} else if m.ln != nil {
		m.ln.Close()
	}
	if m.stopPprof != nil {
		m.stopPprof()
	}
	if m.kernel != nil {
		m.kernel.Close()
	}
	if m.tel != nil {
		if err := m.tel.Close(); err != nil {
			m.log.Warn("flush telemetry", "err", err)
		}
	}
}

// playgroundHost is host:port of the playground URL in the log: the listen
// address, or localhost when listening on all addresses.
func playgroundHost(ln net.Listener) string {
	a, ok := ln.Addr().(*net.TCPAddr)
	if ok && a.IP.IsUnspecified() {
		return net.JoinHostPort("localhost", strconv.Itoa(a.Port))
	}
	return ln.Addr().String()
}

// isLoopbackListener reports whether ln accepts loopback connections only
// (an address of 127.0.0.0/8 or ::1; "localhost" resolves to one of them).
func isLoopbackListener(ln net.Listener) bool {
	a, ok := ln.Addr().(*net.TCPAddr)
	return ok && a.IP.IsLoopback()
}
