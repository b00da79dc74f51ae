// Command foya is the Foya agent kernel: a local daemon that owns agent
// sessions and serves them over GraphQL. This file is the composition root.
package main

//go:generate go tool gqlgen generate

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/foya-dev/foya/cli"
	"github.com/foya-dev/foya/cluster"
	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
	"github.com/foya-dev/foya/core/engine"
	corehooks "github.com/foya-dev/foya/core/hooks"
	"github.com/foya-dev/foya/core/mcp"
	"github.com/foya-dev/foya/core/pubsub"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/graph"
	"github.com/foya-dev/foya/internal/cmdutil"
	"github.com/foya-dev/foya/internal/memtrim"
	builtintools "github.com/foya-dev/foya/plugins/builtin/tools"
	"github.com/foya-dev/foya/plugins/hooks"
	"github.com/foya-dev/foya/plugins/host"
	"github.com/foya-dev/foya/plugins/mcphost"
	"github.com/foya-dev/foya/plugins/sandbox"
	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/storage/artifacts"
)

// version is set with -ldflags "-X main.version=…"; otherwise the module or
// VCS version is used.
var version = ""

func main() {
	sandbox.MaybeHelper() // `foya __sandbox POLICY`: the confined-command helper
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `foya — the Foya agent kernel

Usage:
  foya serve [--addr 127.0.0.1:4777] [--data-dir DIR] [--plugin-dir DIR] [--allow-origin PATTERN]
             [--allow-host NAME] [--auth-token-file PATH] [--insecure-no-token] [--tls-cert FILE --tls-key FILE]
             [--pprof 127.0.0.1:6060] [--database postgres://…] [--plugin-idle-stop 1m]
             [--tool-writable PATH] [--tool-network on|off] [--tool-max-procs N] [--tool-max-memory SIZE]
             [--tool-max-file-size SIZE] [--tool-max-cpu DURATION] [--allow-key-env NAME] [--ws-ping-interval 15s]
  foya token rotate|show [--data-dir DIR] [--auth-token-file PATH]
  foya web [--open] [--addr A] [--data-dir DIR] [--token-file PATH]   (prints the web link with the token)
  foya rebuild-projections [--data-dir DIR] [--database postgres://…]
  foya exec [-c | --session ID] [--project DIR | --no-project] [--model CONN/MODEL] [--approval-mode M] [--json] "prompt"
             (the project is the current directory by default)
  foya acp [--addr A] [--data-dir DIR]   (Agent Client Protocol agent on stdio, for editors; docs/acp.md)
  foya connections list|add|remove|models|default    foya sessions list|show|rm    foya schema
  foya mcp list|add|remove|restart           (MCP servers as tool sources; see docs/mcp.md)
  foya projects list|trust                   (trust runs PATH/.foya/hooks.json; see docs/hooks.md)
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
		err = serveCmd(args[1:], stdout, stderr)
	case "rebuild-projections":
		err = rebuildCmd(args[1:], stdout, stderr)
	case "token":
		err = tokenCmd(args[1:], stdout, stderr)
	case "plugin":
		if len(args) == 2 && cmdutil.IsHelp(args[1]) {
			cmdutil.PrintUsage(stdout, cmdutil.Command{Name: "plugin", Synopsis: "NAME", Doc: "Internal: serves a built-in plugin to the kernel that started it."}, nil)
			return 0
		}
		if len(args) != 2 {
			err = usageError{Err: errors.New("usage: foya plugin NAME")}
			break
		}
		err = host.RunBuiltin(args[1])
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

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError{Err: fmt.Errorf("--log-level %q: use debug, info, warn or error", level)}
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lv})), nil
}

func serveCmd(args []string, stdout, stderr io.Writer) error {
	fs := cmdutil.NewFlagSet(serveCommand, stdout)
	addr := fs.String("addr", "127.0.0.1:4777", "listen address (loopback by default; any other address requires the token)")
	dataDir := fs.String("data-dir", defaultDataDir(), "data directory (database, catalog, artifacts, auth-token)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	retryAttempts := fs.Int("retry-max-attempts", engine.DefaultRetryMaxAttempts, "requests per model step when rate-limited, overloaded or cut off before any output (1 disables retries)")
	retryWait := fs.Duration("retry-max-wait", engine.DefaultRetryMaxTotalWait, "total backoff wait bound per model step")
	pluginIdleStop := fs.Duration("plugin-idle-stop", defaultPluginIdleStop, "stop a built-in plugin process after this long without a call; the next call starts it again (0: never; docs/performance.md)")
	wsPing := fs.Duration("ws-ping-interval", graph.DefaultWSPingInterval, "interval of the graphql-transport-ws ping messages the kernel sends on every WebSocket, at least 1s (a socket that leaves two of them without a pong is closed)")
	pprofAddr := fs.String("pprof", "", "serve Go profiles (net/http/pprof) on this loopback address, e.g. 127.0.0.1:6060 (off by default)")
	tokenFile := fs.String("auth-token-file", "", "file holding the bearer token clients must send (default <data-dir>/auth-token; created when missing)")
	fs.Bool("require-token", false, "accepted for compatibility, no effect: the token is required on every listener unless --insecure-no-token")
	insecureNoToken := fs.Bool("insecure-no-token", false, "require no token on a loopback listener (warned at every start; refused beyond loopback). Any local process, tools included, can then drive the kernel")
	tlsCert := fs.String("tls-cert", "", "PEM certificate file: serve HTTPS and WSS (with --tls-key)")
	tlsKey := fs.String("tls-key", "", "PEM private key file of --tls-cert")
	database := fs.String("database", os.Getenv("FOYA_DATABASE"), "PostgreSQL URL postgres://… to store sessions in, shared by kernels (default $FOYA_DATABASE; empty: SQLite in the data directory; docs/postgresql.md)")
	advertise := fs.String("advertise-url", "", "with --database: the base URL other kernels on the database reach this one at, e.g. http://10.0.0.5:4777 (default: the listen address; docs/cluster.md)")
	secretKeyFile := fs.String("secret-key-file", "", "with --database: key file sealing API keys and MCP secrets in the database, the same file on every kernel (default <data-dir>/secret-key; created 0600 when missing)")
	artifactDir := fs.String("artifact-dir", "", "directory of artifact bytes (attachments, file snapshots); with --database one directory all kernels share (default <data-dir>/artifacts)")
	outputCaps := addOutputCapFlags(fs)
	requestLimits := requestLimitFlags(fs)
	var origins, pluginDirs, hosts, toolWritable, keyEnvs listFlag
	fs.Var(&hosts, "allow-host", "extra Host name served by --pprof, and by /graphql on an --insecure-no-token kernel (repeatable; /graphql serves any Host when it requires the token)")
	fs.Var(&toolWritable, "tool-writable", "extra directory tool commands may write besides the session's directory, its TMPDIR and /tmp (repeatable)")
	toolNetwork := fs.String("tool-network", "on", "network for tool commands: on, or off (TCP connect/bind denied, empty network namespace)")
	fs.Var(&keyEnvs, "allow-key-env", "environment variable an env:NAME API key may read besides *_API_KEY names (repeatable)")
	fs.Var(&pluginDirs, "plugin-dir", "extra directory of third-party plugin executables (repeatable; <data-dir>/plugins is always searched)")
	fs.Var(&origins, "allow-origin", "extra browser origin host[:port] pattern allowed besides the kernel's own and loopback pages (repeatable)")
	toolLimits := sandboxLimitFlags(fs)
	if _, err := cmdutil.Parse(fs, args); err != nil {
		return err
	}
	limits, err := toolLimits()
	if err != nil {
		return err
	}
	if *wsPing < time.Second {
		return usageError{Err: fmt.Errorf("--ws-ping-interval %s: give 1s or more", *wsPing)}
	}
	if (*tlsCert == "") != (*tlsKey == "") {
		return usageError{Err: errors.New("--tls-cert and --tls-key go together")}
	}
	if err := checkAdvertiseURL(*advertise); err != nil {
		return err
	}
	reqLimits, err := requestLimits()
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, *logLevel)
	if err != nil {
		return err
	}
	if err := protectProcess(); err != nil {
		log.Warn("could not make the kernel process non-dumpable", "err", err)
	}
	if *pprofAddr != "" {
		if err := checkPprofAddr(*pprofAddr); err != nil {
			return err
		}
	}
	var tlsConfig *tls.Config
	if *tlsCert != "" {
		if tlsConfig, err = loadTLS(*tlsCert, *tlsKey, log); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *pluginIdleStop < 0 {
		return usageError{Err: fmt.Errorf("--plugin-idle-stop %s: must not be negative (0 keeps plugins running)", *pluginIdleStop)}
	}
	if *retryAttempts < 1 || *retryWait <= 0 {
		return usageError{Err: fmt.Errorf("--retry-max-attempts must be at least 1 and --retry-max-wait positive")}
	}
	if *database != "" && !storage.IsPostgresURL(*database) {
		return usageError{Err: fmt.Errorf("--database %s: use a postgres:// or postgresql:// URL", storage.RedactURL(*database))}
	}
	output, err := outputCaps.limits()
	if err != nil {
		return err
	}
	opts := kernelOptions{output: output, pluginIdleStop: *pluginIdleStop, database: *database, secretKeyFile: *secretKeyFile, artifactDir: *artifactDir, pluginDirs: pluginDirs, allowKeyEnv: keyEnvs, retry: engine.RetryPolicy{MaxAttempts: *retryAttempts, MaxTotalWait: *retryWait}}
	opts.tools.Limits = &limits
	switch *toolNetwork {
	case "on":
	case "off":
		opts.tools.NetworkOff = true
	default:
		return usageError{Err: fmt.Errorf("--tool-network %q: use on or off", *toolNetwork)}
	}
	for _, w := range toolWritable {
		abs, err := filepath.Abs(w)
		if err != nil {
			return usageError{Err: fmt.Errorf("--tool-writable %s: %w", w, err)}
		}
		opts.tools.Writable = append(opts.tools.Writable, abs)
	}
	// Secrets (and artifacts) kept outside the data directory are hidden from tools too.
	for _, f := range []string{*tokenFile, *tlsKey, *secretKeyFile, *artifactDir} {
		if f == "" {
			continue
		}
		abs, err := filepath.Abs(f)
		if err != nil {
			return usageError{Err: fmt.Errorf("%s: %w", f, err)}
		}
		opts.tools.Hidden = append(opts.tools.Hidden, abs)
	}
	k, err := openKernel(ctx, *dataDir, opts, log)
	if err != nil {
		return err
	}
	defer k.Close()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	loopback := isLoopbackListener(ln)
	tokens := tokenPolicy{file: *tokenFile, insecure: *insecureNoToken}
	if err := checkInsecureNoToken(tokens, loopback, ln.Addr().String()); err != nil {
		ln.Close()
		return err
	}
	auth, err := serveAuth(ctx, tokens, k.dataDir, log)
	if err != nil {
		ln.Close()
		return err
	}
	if *pprofAddr != "" {
		stopPprof, err := startPprof(*pprofAddr, auth, origins, hosts, log)
		if err != nil {
			ln.Close()
			return err
		}
		defer stopPprof()
	}
	if err := k.startCluster(ctx, advertiseURL(*advertise, ln, tlsConfig != nil), log); err != nil {
		ln.Close()
		return err
	}
	if !loopback && tlsConfig == nil {
		log.Warn("listening beyond loopback without TLS: the token and all traffic cross the network in clear text; " +
			"serve HTTPS with --tls-cert/--tls-key, or put a TLS-terminating reverse proxy in front")
	}
	srv := &http.Server{
		Handler: graph.NewHandler(graph.ServerConfig{
			Service: k.sessions, Engine: k.engine, Usage: k.db, Catalog: k.catalog, Plugins: k.plugins, MCP: k.mcp,
			Logger: log, OriginPatterns: origins, HostPatterns: hosts, Auth: auth, Nodes: k.nodes,
			ClusterKey: k.clusterKey,
			Limits:     reqLimits,
			KeepAlive:  *wsPing,
		}),
		TLSConfig:         tlsConfig,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ReadHeaderTimeout: graph.HeaderReadTimeout,
		IdleTimeout:       graph.IdleTimeout, // body deadlines are per request (graph.BodyReadTimeout)
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
		go func() { errc <- srv.ServeTLS(ln, "", "") }()
	} else {
		go func() { errc <- srv.Serve(ln) }()
	}
	logWebLink(log, auth, ln, scheme) // before "listening": whoever waits for that line finds the link
	log.Info("listening", "addr", ln.Addr().String(), "web", scheme+"://"+playgroundHost(ln)+"/", "playground", scheme+"://"+playgroundHost(ln)+"/playground", "token_required", auth != nil, "data_dir", k.dataDir, "version", versionString())

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Warn("http shutdown", "err", err)
	}
	if err := k.engine.Close(shutdownCtx); err != nil {
		log.Warn("stop running turns", "err", err)
	}
	if k.node != nil {
		k.node.Close(shutdownCtx) // gives the sessions up: other nodes take them at once
	}
	return nil
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

// kernel is everything serve wires together.
type kernel struct {
	dataDir  string
	db       *storage.DB
	plugins  *host.Manager
	catalog  *catalog.Catalog
	sessions *session.Service
	engine   *engine.Engine
	mcp      *mcp.Service
	mcpHost  *mcphost.Manager
	unlock   func()
	// node is the membership of the kernels on a PostgreSQL database (nil
	// on SQLite); nodes answers the nodes query.
	node  *cluster.Node
	nodes core.NodeLister
	// clusterKey signs requests between kernels (nil on SQLite).
	clusterKey []byte
}

// kernelOptions are the serve flags openKernel needs.
type kernelOptions struct {
	database      string // PostgreSQL URL; empty: SQLite in the data directory
	secretKeyFile string // with database; default <data-dir>/secret-key
	artifactDir   string // default <data-dir>/artifacts
	pluginDirs    []string
	allowKeyEnv   []string
	tools         builtintools.PluginConfig
	retry         engine.RetryPolicy
	output        engine.OutputLimits
	// pluginIdleStop stops an idle built-in plugin (0: never).
	pluginIdleStop time.Duration
}

// defaultPluginIdleStop is how long a built-in plugin process runs without
// a call before it is stopped (it starts again on the next call, tens of
// milliseconds). A minute keeps plugins running through an interactive
// conversation (the next message usually comes sooner) and the provider's
// keep-alive connection would soon idle out anyway (Go closes idle
// connections after 90 s); a kernel left alone falls to its own memory.
const defaultPluginIdleStop = time.Minute

func openKernel(ctx context.Context, dataDir string, opts kernelOptions, log *slog.Logger) (_ *kernel, err error) {
	dir, err := prepareDataDir(dataDir)
	if err != nil {
		return nil, err
	}
	release, err := lockDataDir(dir)
	if err != nil {
		return nil, err
	}
	k := &kernel{dataDir: dir, unlock: release}
	defer func() {
		if err != nil {
			k.Close()
		}
	}()
	if k.db, err = openDatabase(ctx, opts.database, dir, log); err != nil {
		return nil, err
	}
	toolCfg := opts.tools
	toolCfg.DataDir, toolCfg.ScratchDir = dir, filepath.Join(dir, "scratch")
	if toolCfg.TempRoot, err = prepareToolTempRoot(dir); err != nil {
		return nil, err
	}
	if k.plugins, err = host.NewManager(host.Config{DataDir: dir, PluginDirs: opts.pluginDirs, Tools: toolCfg, ParkUnusedAfter: 5 * time.Second, IdleStopAfter: opts.pluginIdleStop,
		OnIdleStop: func() { _, _ = memtrim.Trim() }, Logger: log}); err != nil {
		return nil, err
	}
	if err = k.plugins.Start(ctx); err != nil {
		return nil, fmt.Errorf("start plugins: %w", err)
	}
	catStore, mcpStore, err := openCatalogStores(ctx, k.db, opts, dir)
	if err != nil {
		return nil, err
	}
	if k.clusterKey, err = loadClusterKey(opts, dir); err != nil {
		return nil, err
	}
	k.catalog, err = catalog.New(ctx, catalog.Config{
		Store: catStore, Providers: k.plugins, Logger: log, AllowKeyEnv: opts.allowKeyEnv,
		OnChange: func(ctx context.Context, ch core.CatalogChange) { k.sessions.ApplyCatalogChange(ctx, ch) },
	})
	if err != nil {
		return nil, err
	}
	if k.node, err = openCluster(ctx, opts.database, log); err != nil {
		return nil, err
	}
	brokerCfg := pubsub.Config{Logger: log}
	if k.node != nil {
		brokerCfg.Relay = k.node
	}
	broker := pubsub.New(brokerCfg)
	svcCfg := session.Config{Store: k.db, Broker: broker, Logger: log, Models: k.catalog}
	if k.node != nil {
		svcCfg.Ownership = k.node
	}
	k.sessions, err = session.New(svcCfg)
	if err != nil {
		return nil, err
	}
	if _, err = k.sessions.ResetPhases(ctx); err != nil {
		return nil, err
	}
	blobs, err := artifacts.New(cmp.Or(opts.artifactDir, filepath.Join(dir, "artifacts")))
	if err != nil {
		return nil, err
	}
	k.mcpHost = mcphost.New(mcphost.Config{
		Logger: log, Version: versionString(),
		Sandbox: mcpSandbox(dir, opts), ScopeDir: sessionDir(k.sessions, filepath.Join(dir, "scratch")),
		OnChange: func(id string) {
			broker.PublishKernel(core.KernelEvent{Type: core.KernelCatalogUpdated, McpServerID: id, At: time.Now().UTC()})
		},
	})
	if k.mcp, err = mcp.New(ctx, mcp.Config{
		Store: mcpStore, Runtime: k.mcpHost, Broker: broker, Logger: log,
		SessionExists: func(ctx context.Context, id string) error { _, err := k.sessions.Session(ctx, id); return err },
	}); err != nil {
		return nil, err
	}
	runners := k.plugins.ToolRunners()
	if runners == nil {
		runners = map[string]core.ToolRunner{}
	}
	runners["mcp:servers"] = k.mcpHost // MCP tools are all named mcp__…
	tools := engine.NewToolHub(runners, log)
	k.engine, err = engine.New(engine.Config{
		Sessions: k.sessions, Catalog: k.catalog, Providers: k.plugins, Tools: tools,
		Attachments: k.db, Blobs: blobs, Describe: artifacts.Describe, History: k.db,
		ScratchDir: filepath.Join(dir, "scratch"), DataDir: dir, HiddenPaths: opts.tools.Hidden, Logger: log, Retry: opts.retry, Output: opts.output,
		Hooks: corehooks.New(hooks.Store{Dir: dir}, hookRunner(dir, opts, log)),
		// No turn for 5 s: hand memory back (docs/performance.md).
		OnIdle: func() { _, _ = memtrim.Trim() },
	})
	if err != nil {
		return nil, err
	}
	if opts.database != "" {
		go syncSharedCatalog(ctx, k.catalog, k.mcp, log)
	}
	return k, nil
}

// Close stops the MCP servers and plugins and closes the database.
func (k *kernel) Close() {
	if k.node != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		k.node.Close(ctx)
		cancel()
	}
	if k.mcp != nil {
		k.mcp.Close()
	}
	if k.mcpHost != nil {
		k.mcpHost.Close()
	}
	if k.plugins != nil {
		if err := k.plugins.Close(); err != nil {
			slog.Error("stop plugins", "err", err)
		}
	}
	if k.db != nil {
		if err := k.db.Close(); err != nil {
			slog.Error("close database", "err", err)
		}
	}
	if k.unlock != nil {
		k.unlock()
	}
}

func rebuildCmd(args []string, stdout, stderr io.Writer) error {
	fs := cmdutil.NewFlagSet(cmdutil.Command{Name: "rebuild-projections", Synopsis: "[--data-dir DIR]",
		Doc: "Rebuilds the session projections from the event log (with the kernel stopped)."}, stdout)
	dataDir := fs.String("data-dir", defaultDataDir(), "data directory")
	database := fs.String("database", os.Getenv("FOYA_DATABASE"), "PostgreSQL URL (default $FOYA_DATABASE; empty: SQLite in the data directory)")
	if rest, err := cmdutil.Parse(fs, args); err != nil || len(rest) > 0 {
		return usageOr(err, "rebuild-projections takes no arguments")
	}
	log, _ := newLogger(stderr, "info")
	ctx := context.Background()
	dir, err := prepareDataDir(*dataDir)
	if err != nil {
		return err
	}
	release, err := lockDataDir(dir)
	if err != nil {
		return err
	}
	defer release()
	db, err := openDatabase(ctx, *database, dir, log)
	if err != nil {
		return err
	}
	defer db.Close()
	n, err := db.RebuildProjections(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "rebuilt projections from %d events\n", n)
	return nil
}

// openDatabase opens the PostgreSQL database at url, or without one the
// SQLite file in the data directory.
func openDatabase(ctx context.Context, url, dataDir string, log *slog.Logger) (*storage.DB, error) {
	if url != "" {
		return storage.OpenPostgres(ctx, url, log)
	}
	return storage.Open(ctx, filepath.Join(dataDir, "foya.db"), log)
}

// prepareToolTempRoot empties and creates the directory that holds one
// TMPDIR per session for tool commands: outside the data directory (tools
// cannot see that), under the system temporary directory, named after the
// user and the data directory so kernels on other data directories do not
// share it. It is emptied at every start, like /tmp at boot.
func prepareToolTempRoot(dataDir string) (string, error) {
	sum := sha256.Sum256([]byte(dataDir))
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("foya-%d-%s", os.Getuid(), hex.EncodeToString(sum[:6])))
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("clean tool temp dir %s: %w", dir, err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("create tool temp dir %s: %w", dir, err)
	}
	return dir, nil
}
