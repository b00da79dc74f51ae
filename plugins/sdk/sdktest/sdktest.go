// Package sdktest serves a plugin in-process for tests, over a real gRPC
// connection, so that plugin binaries never link the testing package.
package sdktest

import (
	"testing"

	"github.com/hashicorp/go-plugin"

	"github.com/foya-dev/foya/plugins/sdk"
)

// Conn serves cfg in-process over a real gRPC connection (go-plugin's
// TestPluginGRPCConn) and returns the client side; Dispense
// sdk.ProviderPluginName or sdk.ToolsPluginName from it. Everything is torn
// down when the test ends. plugins/host/hosttest wraps it into core adapters.
func Conn(t testing.TB, cfg sdk.ServeConfig) plugin.ClientProtocol {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = sdk.NewLogger()
	}
	set, err := sdk.PluginSet(cfg)
	if err != nil {
		t.Fatalf("sdk test conn: %v", err)
	}
	client, _ := plugin.TestPluginGRPCConn(t, false, set)
	// Close asks the server to shut down through go-plugin's controller;
	// stopping the server here as well would race with that.
	t.Cleanup(func() { _ = client.Close() })
	return client
}
