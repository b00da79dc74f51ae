// Package graph is the GraphQL edge: gqlgen's generated code and thin
// resolvers over the core services.
package graph

import (
	"log/slog"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/core/mcp"
	"github.com/foya-dev/foya/core/session"
)

// Resolver holds the core services the resolvers call.
type Resolver struct {
	Service  *session.Service
	Engine   *engine.Engine
	Ledger   core.UsageStore
	Catalog  *catalog.Catalog
	Registry core.PluginRegistry
	// MCP is the MCP server catalog; nil answers an empty list and
	// UNAVAILABLE to its mutations.
	MCP *mcp.Service
	// Nodes lists the kernel processes serving the database.
	NodeList core.NodeLister
	Log      *slog.Logger
}
