// Package sdk is what a Foya plugin author imports: Go-native interfaces for
// providers (Provider plus optional capability interfaces) and tool sets
// (ToolSet), and Serve, the one entry point of a plugin binary. The wire
// contract (foya.v1 over gRPC, launched by hashicorp/go-plugin) stays inside.
//
// A provider plugin's main is:
//
//	func main() {
//		if err := sdk.Serve(sdk.ServeConfig{Provider: myProvider{}}); err != nil {
//			fmt.Fprintln(os.Stderr, err)
//			os.Exit(1)
//		}
//	}
package sdk

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	foyav1 "github.com/foya-dev/foya/plugins/proto/foya/v1"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// ProtocolVersion is the plugin protocol version this SDK serves. Version 2
// added provider-native state and the native compactor to the foya.v1
// contract; hosts also accept version 1 plugins (see MinProtocolVersion).
const ProtocolVersion = 2

// MinProtocolVersion is the oldest plugin protocol version hosts accept.
const MinProtocolVersion = 1

// Handshake is the versioned handshake a host and a plugin must share. The
// cookie only keeps people from running a plugin binary by hand.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "FOYA_PLUGIN",
	MagicCookieValue: "9f1c6a1e-foya-kernel-plugin",
}

// Names of the plugins in a go-plugin plugin set.
const (
	ProviderPluginName = "provider"
	ToolsPluginName    = "tools"
)

// ServeConfig is what a plugin binary serves: a Provider, a ToolSet, or both.
type ServeConfig struct {
	Provider Provider
	Tools    ToolSet
	// Logger defaults to JSON on stderr, which the host re-emits.
	Logger *slog.Logger
	// OnIdle, when set, is called (on its own goroutine) each time the
	// plugin has had no foya.v1 call in progress for IdleAfter: once after
	// start-up, and again after every burst of calls. Built-in plugins use
	// it to hand memory back to the operating system while nothing runs.
	OnIdle func()
	// IdleAfter defaults to DefaultIdleAfter.
	IdleAfter time.Duration
}

// DefaultIdleAfter is how long a plugin must have been without a call in
// progress before ServeConfig.OnIdle runs.
const DefaultIdleAfter = 5 * time.Second

// NewLogger returns the JSON stderr logger plugins should use. Create it
// before Serve: go-plugin redirects os.Stderr while serving.
func NewLogger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// ServeProvider serves p; see Serve.
func ServeProvider(p Provider) error { return Serve(ServeConfig{Provider: p}) }

// ServeTools serves t; see Serve.
func ServeTools(t ToolSet) error { return Serve(ServeConfig{Tools: t}) }

// Serve runs the plugin until the host goes away. It must be called from the
// plugin binary's main; run by hand it prints a short explanation and fails.
func Serve(cfg ServeConfig) error {
	stderr := os.Stderr // go-plugin swaps os.Stderr while serving
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	if os.Getenv(Handshake.MagicCookieKey) != Handshake.MagicCookieValue {
		return fmt.Errorf("this is a foya plugin; the foya kernel starts it")
	}
	set, err := PluginSet(cfg)
	if err != nil {
		return err
	}
	// Every protocol version is the same gRPC service (later ones only add
	// fields and RPCs a host of an older version never uses), so a plugin
	// built with this SDK also runs under a kernel that speaks only v1.
	versions := map[int]plugin.PluginSet{}
	for v := MinProtocolVersion; v <= ProtocolVersion; v++ {
		versions[v] = set
	}
	extra := traceServerOptions()
	if cfg.OnIdle != nil {
		w := newIdleWatch(cfg.IdleAfter, cfg.OnIdle)
		extra = append(extra, w.serverOptions()...)
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: versions,
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpcServer(append(opts, extra...))
		},
		Logger: hcLogger(stderr),
	})
	return nil
}

// MaxMessageSize bounds one gRPC message a plugin receives or sends. A
// model request carries the whole history with its images and
// provider-native state, far beyond gRPC's 4 MiB server default (the host
// side, go-plugin's client, already allows any size).
const MaxMessageSize = 256 << 20

func grpcServer(opts []grpc.ServerOption) *grpc.Server {
	return grpc.NewServer(append(opts, grpc.MaxRecvMsgSize(MaxMessageSize), grpc.MaxSendMsgSize(MaxMessageSize))...)
}

func hcLogger(w io.Writer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "go-plugin", Output: w, JSONFormat: true, Level: hclog.Warn})
}

// PluginSet is the go-plugin set that Serve serves for cfg (used by
// sdktest to serve in-process).
func PluginSet(cfg ServeConfig) (plugin.PluginSet, error) {
	set := plugin.PluginSet{}
	if cfg.Provider != nil {
		ps, err := newProviderServer(cfg.Provider, cfg.Logger)
		if err != nil {
			return nil, err
		}
		set[ProviderPluginName] = &providerPlugin{server: ps}
	}
	if cfg.Tools != nil {
		set[ToolsPluginName] = &toolsPlugin{server: &toolsServer{t: cfg.Tools}}
	}
	if len(set) == 0 {
		return nil, fmt.Errorf("serve: neither a provider nor a tool set given")
	}
	return set, nil
}

// VersionedClientPlugins is what a host offers in the handshake: every
// protocol version from MinProtocolVersion to ProtocolVersion, all served by
// the same gRPC contract (later versions only add fields and RPCs).
func VersionedClientPlugins() map[int]plugin.PluginSet {
	out := map[int]plugin.PluginSet{}
	for v := MinProtocolVersion; v <= ProtocolVersion; v++ {
		out[v] = ClientPlugins()
	}
	return out
}

// ClientPlugins is the plugin set a host dispenses from: Dispense returns a
// foyav1.ProviderClient or foyav1.ToolsClient. A plugin that does not serve a
// kind answers that service with codes.Unimplemented.
func ClientPlugins() plugin.PluginSet {
	return plugin.PluginSet{
		ProviderPluginName: &providerPlugin{},
		ToolsPluginName:    &toolsPlugin{},
	}
}

type providerPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	server *providerServer
}

func (p *providerPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	foyav1.RegisterProviderServer(s, p.server)
	return nil
}

func (p *providerPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return foyav1.NewProviderClient(c), nil
}

type toolsPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	server *toolsServer
}

func (p *toolsPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	foyav1.RegisterToolsServer(s, p.server)
	return nil
}

func (p *toolsPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return foyav1.NewToolsClient(c), nil
}
