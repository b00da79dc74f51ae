package daemon

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/edge"
	"github.com/foya-dev/foya/internal/cmdutil"
	builtintools "github.com/foya-dev/foya/plugins/builtin/tools"
	"github.com/foya-dev/foya/plugins/mcphost"
	"github.com/foya-dev/foya/plugins/sandbox"
	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/telemetry"
)

// Config is what the command line of `foya serve` says, checked.
type Config struct {
	Addr     string // listen address
	DataDir  string // as given; Run makes it absolute
	LogLevel slog.Level

	// Database is a PostgreSQL URL; empty: SQLite in the data directory.
	Database      string
	SecretKeyFile string // with Database; default <data-dir>/secret-key
	ArtifactDir   string // default <data-dir>/artifacts
	AdvertiseURL  string // with Database; default the listen address
	// MCPClientMetadataURL is the kernel's OAuth client_id URL for
	// authorization servers that take client ID metadata documents.
	MCPClientMetadataURL string

	TokenFile       string // default <data-dir>/auth-token
	InsecureNoToken bool
	TLSCert, TLSKey string
	Pprof           string // loopback address of net/http/pprof; empty: off

	Origins, Hosts []string // --allow-origin, --allow-host
	Requests       edge.Limits
	WSPing         time.Duration

	PluginDirs []string
	// PluginIdleStop stops an idle built-in plugin (0: never).
	PluginIdleStop time.Duration
	// Tools configures the built-in tool plugin (sandbox, writable and
	// hidden paths); the kernel fills in its directories.
	Tools builtintools.PluginConfig
	// TerminalCPU is the CPU time one background terminal may use over its
	// whole life (0: no limit); the other tool limits apply as to bash.
	TerminalCPU time.Duration
	// ChildNice is how many nice levels below the kernel the processes it
	// starts run (0: at the kernel's priority; docs/performance.md).
	ChildNice   int
	AllowKeyEnv []string
	Retry       engine.RetryPolicy
	// Guardian bounds the guardian of GUARDED sessions (docs/guardian.md).
	Guardian engine.GuardianPolicy
	Output   engine.OutputLimits
	// Telemetry: OTLP export of spans and metrics (off unless an endpoint
	// is given here or by OTEL_EXPORTER_OTLP_*), content capture, and
	// /metrics (docs/telemetry.md).
	OTLPEndpoint   string
	OTLPProtocol   string
	CaptureContent bool
	NoMetrics      bool
}

var serveCommand = cmdutil.Command{
	Name:     "serve",
	Synopsis: "[flags]",
	Doc: `Runs the kernel: the GraphQL API (HTTP, WebSocket, SSE), the web UI and
the playground, on a loopback address by default. See docs/.`,
}

// defaultPluginIdleStop is how long a built-in plugin process runs without
// a call before it is stopped (it starts again on the next call, tens of
// milliseconds). A minute keeps plugins running through an interactive
// conversation (the next message usually comes sooner) and the provider's
// keep-alive connection would soon idle out anyway (Go closes idle
// connections after 90 s); a kernel left alone falls to its own memory.
const defaultPluginIdleStop = time.Minute

// defaultChildNice: plugins and what they start run five nice levels
// below the kernel (about a third of its CPU share when both want a CPU;
// the same as the kernel's when it is idle). Under a provider's burst the
// plugin decoding the chunks that follow no longer holds the CPU the
// kernel needs to forward the first (BENCHMARKS.md, twelfth session).
const defaultChildNice = 5

// ParseFlags reads the command line of `foya serve` (its arguments after
// "serve") into m.Config. --help prints the usage on m.Stdout and returns
// cmdutil.ErrHelpShown; a bad flag is a cmdutil.UsageError.
func (m *Main) ParseFlags(args []string) error {
	fs := cmdutil.NewFlagSet(serveCommand, m.Stdout)
	c := &m.Config
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:4777", "listen address (loopback by default; any other address requires the token)")
	fs.StringVar(&c.DataDir, "data-dir", cmdutil.DefaultDataDir(), "data directory (database, catalog, artifacts, auth-token)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	fs.IntVar(&c.Retry.MaxAttempts, "retry-max-attempts", engine.DefaultRetryMaxAttempts, "requests per model step when rate-limited, overloaded or cut off before any output (1 disables retries)")
	fs.DurationVar(&c.Retry.MaxTotalWait, "retry-max-wait", engine.DefaultRetryMaxTotalWait, "total backoff wait bound per model step")
	fs.DurationVar(&c.Guardian.Timeout, "guardian-timeout", engine.DefaultGuardianTimeout, "bound of one guardian review in GUARDED sessions; past it the call asks a person (docs/guardian.md)")
	fs.IntVar(&c.Guardian.MaxCallsPerTurn, "guardian-max-calls", engine.DefaultGuardianMaxCallsPerTurn, "guardian reviews per turn in GUARDED sessions; later calls of the turn ask a person")
	fs.DurationVar(&c.PluginIdleStop, "plugin-idle-stop", defaultPluginIdleStop, "stop a built-in plugin process after this long without a call; the next call starts it again (0: never; docs/performance.md)")
	fs.DurationVar(&c.WSPing, "ws-ping-interval", edge.DefaultWSPingInterval, "interval of the graphql-transport-ws ping messages the kernel sends on every WebSocket, at least 1s (a socket that leaves two of them without a pong is closed)")
	fs.StringVar(&c.Pprof, "pprof", "", "serve Go profiles (net/http/pprof) on this loopback address, e.g. 127.0.0.1:6060 (off by default)")
	fs.StringVar(&c.TokenFile, "auth-token-file", "", "file holding the bearer token clients must send (default <data-dir>/auth-token; created when missing)")
	fs.Bool("require-token", false, "accepted for compatibility, no effect: the token is required on every listener unless --insecure-no-token")
	fs.BoolVar(&c.InsecureNoToken, "insecure-no-token", false, "require no token on a loopback listener (warned at every start; refused beyond loopback). Any local process, tools included, can then drive the kernel")
	fs.StringVar(&c.TLSCert, "tls-cert", "", "PEM certificate file: serve HTTPS and WSS (with --tls-key)")
	fs.StringVar(&c.TLSKey, "tls-key", "", "PEM private key file of --tls-cert")
	fs.StringVar(&c.Database, "database", os.Getenv("FOYA_DATABASE"), "PostgreSQL URL postgres://… to store sessions in, shared by kernels (default $FOYA_DATABASE; empty: SQLite in the data directory; docs/postgresql.md)")
	fs.StringVar(&c.AdvertiseURL, "advertise-url", "", "with --database: the base URL other kernels on the database reach this one at, e.g. http://10.0.0.5:4777 (default: the listen address; docs/cluster.md)")
	fs.StringVar(&c.MCPClientMetadataURL, "mcp-client-metadata-url", "", "https URL where the kernel's OAuth client ID metadata document (GET "+core.MCPClientMetadataPath+" on the kernel) is hosted: the client_id MCP sign-ins use with authorization servers that take such documents (docs/mcp.md)")
	fs.StringVar(&c.SecretKeyFile, "secret-key-file", "", "with --database: key file sealing API keys and MCP secrets in the database, the same file on every kernel (default <data-dir>/secret-key; created 0600 when missing)")
	fs.StringVar(&c.ArtifactDir, "artifact-dir", "", "directory of artifact bytes (attachments, file snapshots); with --database one directory all kernels share (default <data-dir>/artifacts)")
	c.addTelemetryFlags(fs)
	outputCaps, requestLimits := addOutputCapFlags(fs), requestLimitFlags(fs)
	var origins, pluginDirs, hosts, toolWritable, toolReadable, keyEnvs cmdutil.ListFlag
	fs.Var(&hosts, "allow-host", "extra Host name served by --pprof, and by /graphql on an --insecure-no-token kernel (repeatable; /graphql serves any Host when it requires the token)")
	fs.Var(&toolWritable, "tool-writable", "extra directory tool commands may write besides the session's directory, its TMPDIR and /tmp (repeatable)")
	fs.Var(&toolReadable, "tool-readable", "extra directory or file tool commands, hooks and STDIO MCP servers may read besides the system directories, their toolchains and their own directories (repeatable; / lets them read all the kernel's user can, as before)")
	toolNetwork := fs.String("tool-network", "on", "network for tool commands: on, or off (TCP connect/bind denied, empty network namespace)")
	fs.Var(&keyEnvs, "allow-key-env", "environment variable an env:NAME API key may read besides *_API_KEY names (repeatable)")
	fs.Var(&pluginDirs, "plugin-dir", "extra directory of third-party plugin executables (repeatable; <data-dir>/plugins is always searched)")
	fs.Var(&origins, "allow-origin", "extra browser origin host[:port] pattern allowed besides the kernel's own and loopback pages (repeatable)")
	toolLimits := sandboxLimitFlags(fs)
	fs.IntVar(&c.ChildNice, "child-nice", defaultChildNice, "nice levels below the kernel at which the processes it starts run: plugins, tool commands, hooks, STDIO MCP servers, terminals (0 to 19; 0: the kernel's priority). The kernel's own threads then get a busy CPU first (Linux)")
	termCPU := fs.Duration("terminal-max-cpu", 0, "CPU time one background terminal may use over its whole life, every process it starts included (0: no limit: a dev server runs all day; the other --tool-max-* limits apply to terminals as to bash)")
	if _, err := cmdutil.Parse(fs, args); err != nil {
		return err
	}
	c.Origins, c.Hosts, c.PluginDirs, c.AllowKeyEnv = origins, hosts, pluginDirs, keyEnvs
	limits, err := toolLimits()
	if err != nil {
		return err
	}
	c.Tools.Limits = &limits
	if *termCPU < 0 {
		return cmdutil.Usagef("--terminal-max-cpu %s: must not be negative", *termCPU)
	}
	c.TerminalCPU = *termCPU
	if c.ChildNice < 0 || c.ChildNice > sandbox.MaxChildNice {
		return cmdutil.Usagef("--child-nice %d: give 0 to %d", c.ChildNice, sandbox.MaxChildNice)
	}
	if err := c.checkServing(); err != nil {
		return err
	}
	if c.Requests, err = requestLimits(); err != nil {
		return err
	}
	if err := c.LogLevel.UnmarshalText([]byte(*logLevel)); err != nil {
		return cmdutil.Usagef("--log-level %q: use debug, info, warn or error", *logLevel)
	}
	if c.Pprof != "" {
		if err := checkPprofAddr(c.Pprof); err != nil {
			return err
		}
	}
	if err := c.checkKernel(); err != nil {
		return err
	}
	if c.Output, err = outputCaps.limits(); err != nil {
		return err
	}
	if err := c.toolPaths(*toolNetwork, toolWritable); err != nil {
		return err
	}
	for _, r := range toolReadable {
		abs, err := filepath.Abs(r)
		if err != nil {
			return cmdutil.Usagef("--tool-readable %s: %w", r, err)
		}
		c.Tools.Readable = append(c.Tools.Readable, abs)
	}
	return nil
}

// checkServing checks the flags of the listener (and of telemetry).
func (c *Config) checkServing() error {
	if err := telemetry.CheckProtocol(c.OTLPProtocol); err != nil {
		return cmdutil.Usagef("--otlp-protocol: %w", err)
	}
	if c.WSPing < time.Second {
		return cmdutil.Usagef("--ws-ping-interval %s: give 1s or more", c.WSPing)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return cmdutil.UsageError{Err: errors.New("--tls-cert and --tls-key go together")}
	}
	if c.MCPClientMetadataURL != "" {
		if err := mcphost.ValidateClientMetadataURL(c.MCPClientMetadataURL); err != nil {
			return cmdutil.Usagef("--mcp-client-metadata-url: %w", err)
		}
	}
	return checkAdvertiseURL(c.AdvertiseURL)
}

// checkKernel checks the flags of the plugins, turns and database.
func (c *Config) checkKernel() error {
	if c.PluginIdleStop < 0 {
		return cmdutil.Usagef("--plugin-idle-stop %s: must not be negative (0 keeps plugins running)", c.PluginIdleStop)
	}
	if c.Retry.MaxAttempts < 1 || c.Retry.MaxTotalWait <= 0 {
		return cmdutil.Usagef("--retry-max-attempts must be at least 1 and --retry-max-wait positive")
	}
	if c.Guardian.Timeout <= 0 || c.Guardian.MaxCallsPerTurn < 1 {
		return cmdutil.Usagef("--guardian-timeout must be positive and --guardian-max-calls at least 1")
	}
	if c.Database != "" && !storage.IsPostgresURL(c.Database) {
		return cmdutil.Usagef("--database %s: use a postgres:// or postgresql:// URL", storage.RedactURL(c.Database))
	}
	return nil
}

// toolPaths sets the network, writable and hidden paths of the tool
// sandbox. Secrets (and artifacts) kept outside the data directory are
// hidden from tools too.
func (c *Config) toolPaths(network string, writable []string) error {
	switch network {
	case "on":
	case "off":
		c.Tools.NetworkOff = true
	default:
		return cmdutil.Usagef("--tool-network %q: use on or off", network)
	}
	for _, w := range writable {
		abs, err := filepath.Abs(w)
		if err != nil {
			return cmdutil.Usagef("--tool-writable %s: %w", w, err)
		}
		c.Tools.Writable = append(c.Tools.Writable, abs)
	}
	for _, f := range []string{c.TokenFile, c.TLSKey, c.SecretKeyFile, c.ArtifactDir} {
		if f == "" {
			continue
		}
		abs, err := filepath.Abs(f)
		if err != nil {
			return cmdutil.Usagef("%s: %w", f, err)
		}
		c.Tools.Hidden = append(c.Tools.Hidden, abs)
	}
	return nil
}
