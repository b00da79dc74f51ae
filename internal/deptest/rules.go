package deptest

// Module is the module's path; patterns in the table are relative to it
// ("." is the root package).
const Module = "github.com/foya-dev/foya"

// A Rule says what the packages matching Pkg may import besides the
// standard library.
//
// Patterns: "x" is the package x; "x/..." is x and every package below
// it; "*" matches one path element ("providers/*/*test"); "..." alone is
// every module package. In Modules (third-party module paths) "*" is any
// module.
type Rule struct {
	Pkg     string   // the packages the rule governs
	Rule    string   // the rule in words, quoted by a failure
	Imports []string // module packages they may import
	Modules []string // third-party modules they may import
}

// Third-party modules, by what they are for.
var (
	gqlgen    = []string{"github.com/99designs/gqlgen", "github.com/vektah/gqlparser/v2"}
	websocket = "github.com/coder/websocket"
	goPlugin  = []string{"github.com/hashicorp/go-plugin", "github.com/hashicorp/go-hclog", "google.golang.org/grpc", "google.golang.org/protobuf"}
	database  = []string{"github.com/uptrace/bun", "github.com/jackc/pgx/v5", "modernc.org/sqlite", "modernc.org/libc"} // libc: the SQLite driver's allocator (storage/mempin.go)
	confine   = []string{"github.com/landlock-lsm/go-landlock", "golang.org/x/sys", "kernel.org/pub/linux/libs/security/libcap/psx"}
	mcpSDK    = "github.com/modelcontextprotocol/go-sdk"
	oauth2    = "golang.org/x/oauth2" // the MCP SDK's auth speaks it; OAuth for HTTP MCP servers
	otel      = []string{"go.opentelemetry.io/otel", "github.com/prometheus/client_golang"}
	anything  = []string{"*"}
)

// Rules is the table of allowed import edges, for the shape of issue 30:
// arrows point inward (graph → core ← storage, plugins/host → core,
// providers → sdk), and only the composition package (daemon), the root
// and the end-to-end tests import everything.
var Rules = []Rule{
	// The domain: core and the packages under it import only the standard
	// library and each other, arrows pointing down (engine → session →
	// catalog → core, never up; docs/architecture.md).
	{Pkg: "core", Rule: "core is the domain root: the standard library only"},
	{Pkg: "core/...", Rule: "a package under core imports only the standard library and core",
		Imports: []string{"core"}},
	{Pkg: "core/telemetry", Rule: "core/telemetry (the tracing and metrics calls of the services) is a leaf: the standard library only"},
	{Pkg: "core/mcp", Rule: "core/mcp imports core, core/pubsub and core/telemetry",
		Imports: []string{"core", "core/pubsub", "core/telemetry"}},
	{Pkg: "core/session", Rule: "core/session imports core, core/catalog, core/pubsub and core/telemetry",
		Imports: []string{"core", "core/catalog", "core/pubsub", "core/telemetry"}},
	{Pkg: "core/worktree", Rule: "core/worktree (session worktrees) imports core and core/session",
		Imports: []string{"core", "core/session"}},
	{Pkg: "core/terminal", Rule: "core/terminal imports core and core/session",
		Imports: []string{"core", "core/session"}},
	{Pkg: "core/engine", Rule: "core/engine imports core and the services below it (archive, catalog, hooks, pubsub, session, telemetry), never core/mcp",
		Imports: []string{"core", "core/archive", "core/catalog", "core/hooks", "core/pubsub", "core/session", "core/telemetry"}},

	// Telemetry: the OpenTelemetry implementation of core/telemetry.
	{Pkg: "telemetry", Rule: "telemetry implements core/telemetry with OpenTelemetry and the Prometheus client: core/telemetry, otel and prometheus only",
		Imports: []string{"core/telemetry"}, Modules: otel},

	// The API: GraphQL, its HTTP edge, the storage behind it.
	{Pkg: "graph", Rule: "graph is the GraphQL layer: core/..., graph/model, graph/scalar and gqlgen (not storage, plugins or the HTTP edge)",
		Imports: []string{"core/...", "graph/model", "graph/scalar"}, Modules: gqlgen},
	{Pkg: "graph/model", Rule: "graph/model holds the GraphQL types: core/..., graph/scalar and gqlgen",
		Imports: []string{"core/...", "graph/scalar"}, Modules: gqlgen},
	{Pkg: "graph/scalar", Rule: "graph/scalar holds the GraphQL scalars: gqlgen only",
		Modules: gqlgen},
	{Pkg: "edge/...", Rule: "the HTTP edge serves graph: core/..., graph/..., edge/..., internal/..., gqlgen and websocket (not storage or plugins)",
		Imports: []string{"core/...", "graph/...", "edge/...", "internal/..."}, Modules: append([]string{websocket}, gqlgen...)},
	{Pkg: "edge/access", Rule: "edge/access (tokens, loopback, web links) is shared with the CLI: the standard library and internal/... only",
		Imports: []string{"internal/..."}},
	{Pkg: "storage/...", Rule: "storage implements core's interfaces: core/..., storage/..., internal/... and bun/pgx/sqlite",
		Imports: []string{"core/...", "storage/...", "internal/..."}, Modules: database},
	{Pkg: "cluster", Rule: "cluster (nodes sharing one PostgreSQL) imports core/... and pgx",
		Imports: []string{"core/..."}, Modules: database},

	// Plugins: the host and what runs beside the kernel.
	{Pkg: "plugins/host/...", Rule: "plugins/host imports core/..., plugins/proto, plugins/sdk, plugins/sandbox, plugins/internal and go-plugin; never a provider or a built-in plugin (the built-in registry is the composition package's)",
		Imports: []string{"core/...", "plugins/host/...", "plugins/proto/...", "plugins/sdk/...", "plugins/sandbox", "plugins/internal/...", "internal/..."}, Modules: goPlugin},
	{Pkg: "plugins/sdk/...", Rule: "plugins/sdk is what a plugin author imports: plugins/proto and go-plugin, never core",
		Imports: []string{"plugins/proto/...", "plugins/sdk/..."}, Modules: goPlugin},
	{Pkg: "plugins/proto/...", Rule: "plugins/proto is the generated contract: grpc and protobuf only",
		Modules: goPlugin},
	{Pkg: "plugins/sandbox", Rule: "plugins/sandbox confines processes: the standard library, landlock and x/sys only",
		Modules: confine},
	{Pkg: "plugins/internal/...", Rule: "plugins/internal holds helpers of the plugin packages: the standard library only"},
	{Pkg: "plugins/mcphost/...", Rule: "plugins/mcphost imports core/..., plugins/sandbox, plugins/internal, the MCP SDK and x/oauth2",
		Imports: []string{"core/...", "plugins/mcphost/...", "plugins/sandbox", "plugins/internal/...", "internal/..."}, Modules: []string{mcpSDK, oauth2}},
	{Pkg: "plugins/hooks", Rule: "plugins/hooks imports core/..., plugins/sandbox and internal/...",
		Imports: []string{"core/...", "plugins/sandbox", "plugins/internal/...", "internal/..."}},
	{Pkg: "plugins/gitworktree", Rule: "plugins/gitworktree runs git for session worktrees: core only",
		Imports: []string{"core"}},
	{Pkg: "plugins/terminal", Rule: "plugins/terminal starts terminals for core: core/..., plugins/sandbox and internal/...",
		Imports: []string{"core/...", "plugins/sandbox", "internal/..."}},
	{Pkg: "plugins/builtin/...", Rule: "the built-in plugins are plugins: plugins/sdk, plugins/sandbox, plugins/internal and internal/memtrim, never core",
		Imports: []string{"plugins/sdk/...", "plugins/sandbox", "plugins/internal/...", "plugins/builtin/...", "internal/memtrim"}, Modules: confine},
	{Pkg: "cmd/...", Rule: "a built-in plugin's own executable (cmd/foya-plugin-NAME) maps only its plugin: providers/..., plugins/builtin/..., plugins/sdk and plugins/sandbox, never core, the host or the kernel's packages",
		Imports: []string{"providers/...", "plugins/builtin/...", "plugins/sdk/...", "plugins/sandbox"}},
	{Pkg: "providers/...", Rule: "providers import only plugins/sdk and providers/internal/... (never core, graph or storage)",
		Imports: []string{"plugins/sdk/...", "providers/internal/..."}},
	{Pkg: "providers/*/*test", Rule: "a provider's test server imports plugins/sdk, providers/internal/... and other providers' test servers",
		Imports: []string{"plugins/sdk/...", "providers/internal/...", "providers/*/*test"}},

	// The clients of the GraphQL API.
	{Pkg: "client", Rule: "client is the typed GraphQL client: no server package",
		Modules: []string{"github.com/Khan/genqlient", websocket}},
	{Pkg: "acp", Rule: "acp speaks to the kernel only through client: no server package",
		Imports: []string{"client"}},
	{Pkg: "cli", Rule: "cli is a client of the GraphQL API: acp, client, edge/access and internal/..., no server package (no core services, graph or storage)",
		Imports: []string{"acp", "client", "edge/access", "internal/..."}},

	// Shared leaves.
	{Pkg: "internal/...", Rule: "internal/... are leaves: the standard library and internal/... only",
		Imports: []string{"internal/..."}, Modules: []string{"golang.org/x/sys"}},

	// Composition: only these import everything.
	{Pkg: "daemon/...", Rule: "daemon is the composition package: it imports everything",
		Imports: []string{"..."}, Modules: anything},
	{Pkg: ".", Rule: "the root (main.go) imports everything",
		Imports: []string{"..."}, Modules: anything},
	{Pkg: "test/...", Rule: "the end-to-end tests import everything",
		Imports: []string{"..."}, Modules: anything},
}
