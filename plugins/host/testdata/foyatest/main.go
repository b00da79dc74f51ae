// Command foyatest stands in for the kernel binary in plugins/host tests:
//
//	foyatest plugin <name>              serve a built-in of the kernel's registry, like `foya plugin <name>`
//	foyatest plugin badversion          a provider speaking protocol version 99
//	foyatest plugin v1openai            the openai built-in over protocol version 1 (an old plugin)
//	foyatest plugin bloat               a provider whose answers are larger than the kernel takes
//	foyatest host <data-dir> <exe>      run a Manager, print plugin pids, wait
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/foya-dev/foya/daemon"
	"github.com/foya-dev/foya/plugins/host"
	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/openai"
	"github.com/hashicorp/go-plugin"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "foyatest:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: foyatest plugin <name> | host <data-dir> <exe>")
	}
	switch args[0] {
	case "plugin":
		if args[1] == "badversion" {
			hs := sdk.Handshake
			hs.ProtocolVersion = 99
			plugin.Serve(&plugin.ServeConfig{HandshakeConfig: hs, Plugins: plugin.PluginSet{}, GRPCServer: plugin.DefaultGRPCServer})
			return nil
		}
		if args[1] == "v1openai" {
			hs := sdk.Handshake
			hs.ProtocolVersion = 1
			set, err := sdk.PluginSet(sdk.ServeConfig{Provider: openai.New(openai.Config{}), Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				return err
			}
			plugin.Serve(&plugin.ServeConfig{HandshakeConfig: hs, Plugins: set, GRPCServer: plugin.DefaultGRPCServer})
			return nil
		}
		if args[1] == "bloat" {
			return sdk.ServeProvider(bloat{})
		}
		return daemon.RunPlugin(args[1])
	case "host":
		log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
		m, err := host.NewManager(host.Config{DataDir: args[1], Builtins: builtins(), Executable: args[2], Logger: log})
		if err != nil {
			return err
		}
		if err := m.Start(context.Background()); err != nil {
			return err
		}
		var pids []string
		for _, p := range m.Plugins() {
			pids = append(pids, fmt.Sprint(p.PID))
		}
		fmt.Println("PIDS " + strings.Join(pids, " "))
		select {} // until killed
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// builtins are the kernel's built-in plugins, unconfigured.
func builtins() []host.Builtin {
	var out []host.Builtin
	for _, name := range daemon.BuiltinPlugins() {
		out = append(out, host.Builtin{Name: name})
	}
	return out
}

// bloat answers every call with more than the kernel accepts for it: a
// model list of 40 MiB, one image more than asked for at 20 MiB each, two
// videos of 11 MiB.
type bloat struct{}

func (bloat) Describe() sdk.ProviderInfo {
	return sdk.ProviderInfo{Kind: "bloat", Version: "0.0.1", Capabilities: []sdk.Capability{sdk.CapModelLister, sdk.CapImageGenerator, sdk.CapVideoGenerator}}
}

func (bloat) Stream(context.Context, sdk.Endpoint, sdk.Request, sdk.StreamSender) (string, error) {
	return "", fmt.Errorf("bloat does not chat")
}

func (bloat) ListModels(context.Context, sdk.Endpoint) ([]sdk.Model, error) {
	var out []sdk.Model
	for i := range 40 << 10 {
		out = append(out, sdk.Model{ID: fmt.Sprintf("%06d-%s", i, strings.Repeat("m", 1<<10))})
	}
	return out, nil
}

func (bloat) GenerateImage(_ context.Context, _ sdk.Endpoint, req sdk.ImageRequest) (sdk.ImageResult, error) {
	var out sdk.ImageResult
	for range max(req.Count, 1) + 1 {
		out.Images = append(out.Images, sdk.GeneratedImage{MediaType: "image/png", Data: make([]byte, 20<<20)})
	}
	return out, nil
}

func (bloat) GenerateVideo(context.Context, sdk.Endpoint, sdk.VideoRequest) (sdk.VideoResult, error) {
	v := sdk.GeneratedVideo{MediaType: "video/mp4", Data: make([]byte, 11<<20)}
	return sdk.VideoResult{Videos: []sdk.GeneratedVideo{v, v}}, nil
}
