// Package graph is the GraphQL edge: gqlgen's generated code and thin
// resolvers over the core services.
package graph

import (
	"log/slog"

	"github.com/foya-dev/foya/core"
)

// Resolver holds the core services the resolvers call.
type Resolver struct {
	Service  *core.Service
	Engine   *core.Engine
	Ledger   core.UsageStore
	Catalog  *core.Catalog
	Registry core.PluginRegistry
	// MCP is the MCP server catalog; nil answers an empty list and
	// UNAVAILABLE to its mutations.
	MCP *core.MCPService
	// Nodes lists the kernel processes serving the database.
	NodeList core.NodeLister
	Log      *slog.Logger
}
