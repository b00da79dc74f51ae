package sdk

import (
	"testing"

	"github.com/hashicorp/go-plugin"
)

// TestConn serves cfg in-process over a real gRPC connection (go-plugin's
// TestPluginGRPCConn) and returns the client side; Dispense
// ProviderPluginName or ToolsPluginName from it. Everything is torn down when
// the test ends. plugins/host.NewInProcess wraps this into core adapters.
func TestConn(t testing.TB, cfg ServeConfig) plugin.ClientProtocol {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = NewLogger()
	}
	set, err := serverPlugins(cfg)
	if err != nil {
		t.Fatalf("sdk test conn: %v", err)
	}
	client, _ := plugin.TestPluginGRPCConn(t, false, set)
	// Close asks the server to shut down through go-plugin's controller;
	// stopping the server here as well would race with that.
	t.Cleanup(func() { _ = client.Close() })
	return client
}
