package tools

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"

	"github.com/foya-dev/foya/plugins/sandbox"
)

// PluginConfigEnv is the environment variable in which the kernel passes
// PluginConfig (JSON) to `foya plugin tools`. It holds no secret.
const PluginConfigEnv = "FOYA_TOOLS_CONFIG"

// PluginConfig is what the kernel tells the built-in tool plugin.
type PluginConfig struct {
	DataDir    string `json:"dataDir,omitempty"`
	ScratchDir string `json:"scratchDir,omitempty"`
	TempRoot   string `json:"tempRoot,omitempty"`
	// Hidden are more secret files or directories outside DataDir (the
	// kernel's token file, TLS key) that no tool may touch.
	Hidden   []string `json:"hidden,omitempty"`
	Writable []string `json:"writable,omitempty"`
	// Readable are extra read roots of bash calls (`--tool-readable`).
	Readable   []string `json:"readable,omitempty"`
	NetworkOff bool     `json:"networkOff,omitempty"`
	// NoSandbox runs bash unconfined.
	NoSandbox bool `json:"noSandbox,omitempty"`
	// Limits bound every bash call (nil: sandbox.DefaultLimits).
	Limits *sandbox.Limits `json:"limits,omitempty"`
}

// Env is the PluginConfigEnv=… entry for the plugin's environment.
func (pc PluginConfig) Env() (string, error) {
	b, err := json.Marshal(pc)
	if err != nil {
		return "", fmt.Errorf("encode tool plugin config: %w", err)
	}
	return PluginConfigEnv + "=" + string(b), nil
}

// ConfigFromEnv builds the plugin's Config from PluginConfigEnv; without it
// bash is still confined, with the defaults.
func ConfigFromEnv(log *slog.Logger) (Config, error) {
	var pc PluginConfig
	if raw := os.Getenv(PluginConfigEnv); raw != "" {
		if err := json.Unmarshal([]byte(raw), &pc); err != nil {
			return Config{}, fmt.Errorf("%s: %w", PluginConfigEnv, err)
		}
	}
	return pc.Config(log), nil
}

// Config is the plugin's Config for pc.
func (pc PluginConfig) Config(log *slog.Logger) Config {
	cfg := Config{Logger: log, DataDir: pc.DataDir, ScratchDir: pc.ScratchDir, TempRoot: pc.TempRoot, Hidden: pc.Hidden}
	if !pc.NoSandbox {
		cfg.Sandbox = &SandboxConfig{Writable: pc.Writable, Readable: pc.Readable, NetworkOff: pc.NetworkOff, Limits: sandbox.DefaultLimits()}
		if pc.Limits != nil {
			cfg.Sandbox.Limits = *pc.Limits
		}
	}
	return cfg
}
