// Package graph is the GraphQL layer: gqlgen's generated executable schema
// (generated.go, from schema.graphqls), thin resolvers over the core
// services, and what executing an operation needs whatever carries it: the
// schema's directives (@skip/@include conditions, no @defer), the response
// size cap, and the error presenter that gives every error a code and a
// clipped message.
//
// It knows nothing of HTTP: package edge builds the http.Handler around
// NewExecutableSchema and reaches the resolvers only through the context
// hooks in context.go. graph imports core/..., graph/model, graph/scalar, gqlgen
// and gqlparser, never net/http or a transport (internal/deptest).
package graph

import (
	"log/slog"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/core/mcp"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/core/worktree"
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
	// Worktrees makes and removes session git worktrees; nil: createSession
	// and forkSession with a worktree answer UNAVAILABLE.
	Worktrees *worktree.Service
	// Terminals runs the sessions' background terminals; nil answers
	// UNAVAILABLE to their operations and lists none.
	Terminals core.Terminals
	// Backup writes live copies of the database (backupDatabase); nil
	// answers UNAVAILABLE.
	Backup core.DatabaseBackup
	Log    *slog.Logger
}
