package edge

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/core/mcp"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/core/telemetry"
	"github.com/foya-dev/foya/core/worktree"
	"github.com/foya-dev/foya/edge/web"
	"github.com/foya-dev/foya/graph"
)

// Config wires the HTTP edge.
type Config struct {
	Service *session.Service
	Engine  *engine.Engine
	Usage   core.UsageStore
	Catalog *catalog.Catalog
	Plugins core.PluginRegistry
	// MCP is the MCP server catalog (optional).
	MCP *mcp.Service
	// Worktrees makes the sessions' git worktrees (optional).
	Worktrees *worktree.Service
	Logger    *slog.Logger
	// OriginPatterns are browser origins allowed besides the kernel's own
	// pages and loopback pages: host or host:port patterns (path.Match),
	// e.g. "app.example.com" or "*.example.com:*".
	OriginPatterns []string
	// HostPatterns are Host names served besides loopback ones when no
	// token is required; "*" serves any.
	HostPatterns []string
	// Auth, when set, requires its bearer token on every /graphql request
	// (see browserGuard and Auth); with it any Host is served.
	Auth *Auth
	// KeepAlive is the interval of WebSocket keep-alive pings (default 15s):
	// graphql-transport-ws `ping` messages, graphql-ws `ka` messages.
	KeepAlive time.Duration
	// WSInitTimeout is graphql-transport-ws's connectionInitWaitTimeout
	// (default 10s).
	WSInitTimeout time.Duration
	// Limits overrides request bounds (zero fields: the defaults in limits.go).
	Limits Limits
	// Nodes lists the kernel processes serving the database (nil: none).
	Nodes core.NodeLister
	// Terminals runs the sessions' background terminals (nil: none).
	Terminals core.Terminals
	// Backup writes live copies of the database (nil: backupDatabase
	// answers UNAVAILABLE).
	Backup core.DatabaseBackup
	// ClusterKey is the cluster's secret key (--secret-key-file); requests
	// between kernels are signed with a key derived from it, and forwarding
	// headers without a valid signature are ignored (nil: always ignored).
	ClusterKey []byte
	// Metrics serves GET /metrics (the Prometheus text format; nil: no
	// route).
	Metrics http.Handler
	// ClientMetadata is the kernel's OAuth client ID metadata document,
	// served without a token on core.MCPClientMetadataPath (nil: 404).
	ClientMetadata func(context.Context) []byte
}

// NewHandler serves GraphQL on /graphql (POST, GET, SSE and WebSocket with
// graphql-transport-ws), the session export route, Foya web on /, and the
// GraphiQL playground on /playground.
func NewHandler(cfg Config) http.Handler {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if cfg.KeepAlive == 0 {
		cfg.KeepAlive = 15 * time.Second
	}
	lim := cfg.Limits.withDefaults()
	signer := newRequestSigner(cfg.ClusterKey)
	srv, adm := newGraphQLServer(cfg, lim, signer, log)

	mux := http.NewServeMux()
	// The token is checked before the body is read (requestLimits).
	var api http.Handler = requestLimits(srv, lim, adm)
	api = checkForwarding(api, signer, lim.MaxBodyBytes, log)
	if cfg.Auth != nil {
		api = cfg.Auth.middleware(api)
	}
	mux.Handle("/graphql", codedErrors(browserGuard(api, cfg.Auth, cfg.OriginPatterns, cfg.HostPatterns)))
	mux.Handle(ExportRoute, guardedRoute(cfg, exportHandler{engine: cfg.Engine, log: log}))         // the streamed session export
	mux.Handle(AttachmentRoute, guardedRoute(cfg, attachmentHandler{engine: cfg.Engine, log: log})) // an attachment's bytes
	mux.Handle(MCPOAuthCallbackPath, mcpOAuthCallback(cfg.MCP, log))                                // no token: the state is the credential
	mux.Handle(core.MCPClientMetadataPath, clientMetadataRoute(cfg.ClientMetadata))                 // no token: public metadata
	if cfg.Metrics != nil {
		mux.Handle(MetricsPath, metricsRoute(cfg))
	}
	if cfg.Service.Clustered() {
		var state http.Handler = checkForwarding(stateHandler(cfg.Engine), signer, lim.MaxBodyBytes, log)
		if cfg.Auth != nil {
			state = cfg.Auth.middleware(state)
		}
		mux.Handle(StatePath, state)
	}
	playground := web.PageHeaders(web.PlaygroundHandler("Foya kernel", "/graphql"))
	mux.Handle("/playground", playground)
	mux.Handle("/playground/assets/", playground)
	mux.Handle("/favicon.ico", web.PageHeaders(web.FaviconHandler()))
	mux.Handle("/", web.PageHeaders(web.ClientHandler()))
	return mux
}

// newGraphQLServer serves graph's executable schema over the transports,
// with the request bounds and cluster forwarding around its operations
// (the order of the extensions is the order they run in). The admission it
// returns is shared with requestLimits.
func newGraphQLServer(cfg Config, lim Limits, signer *requestSigner, log *slog.Logger) (*handler.Server, *admission) {
	es := graph.NewExecutableSchema(graph.Config{Resolvers: &graph.Resolver{Service: cfg.Service, Engine: cfg.Engine, Ledger: cfg.Usage, Catalog: cfg.Catalog, Registry: cfg.Plugins, MCP: cfg.MCP, NodeList: cfg.Nodes, Worktrees: cfg.Worktrees, Terminals: cfg.Terminals, Backup: cfg.Backup, Log: log}})
	srv := handler.New(es)
	addTransports(srv, cfg)
	srv.Use(extension.Introspection{})
	useQueryBounds(srv) // the query cache, persisted queries, the token limit
	srv.Use(costLimit{max: MaxCost})
	srv.Use(depthLimit{max: MaxDepth})
	running := new(atomic.Int64)
	telemetry.Observe(telemetry.Subscriptions, func() float64 { return float64(running.Load()) })
	srv.Use(subscriptionCap{perConn: int64(lim.MaxSubscriptionsPerConnection), total: int64(lim.MaxSubscriptions), running: running})
	adm := useAdmission(srv, lim)
	srv.AroundOperations(graph.ConditionsAreBooleans)
	// Operations about a session another node owns run on that node.
	fwd := newForwarder(cfg.Service, cfg.Auth, signer, log)
	srv.AroundOperations(fwd.around)
	// The session list, answered without gqlgen's per-object work
	// (graph/sessionlist.go); innermost, so every bound above applies.
	srv.AroundOperations(graph.SessionList(es, lim.MaxResponseBytes))
	srv.AroundFields(graph.MarkInternal)
	srv.Use(graph.ResponseCap{Max: lim.MaxResponseBytes})
	srv.SetErrorPresenter(graph.PresentError(log))
	srv.SetRecoverFunc(graph.Recover(log))
	return srv, adm
}

// addTransports adds the transports in the order they are tried.
func addTransports(srv *handler.Server, cfg Config) {
	// SSE must come before POST: both accept POST requests.
	srv.AddTransport(resumableSSE{})
	// graphql-transport-ws is served by transportWS; gqlgen's transport keeps
	// the legacy graphql-ws subprotocol (and sockets that name none).
	srv.AddTransport(transportWS{pingInterval: cfg.KeepAlive, initTimeout: cfg.WSInitTimeout, readLimit: wsReadLimit, initFunc: cfg.Auth.wsInitFunc()})
	ws := transport.Websocket{
		// browserGuard has already checked the Origin of every /graphql request.
		Implementation:        countingWS{rotationAwareWS{transport.CoderWebsocketImplementation{AcceptOptions: websocket.AcceptOptions{InsecureSkipVerify: true}}}},
		KeepAlivePingInterval: cfg.KeepAlive,
		InitTimeout:           30 * time.Second,
		PayloadReadLimit:      &wsReadLimit,
	}
	if cfg.Auth != nil {
		ws.InitFunc = cfg.Auth.wsInit
	}
	srv.AddTransport(ws)
	srv.AddTransport(transport.Options{})
	srv.AddTransport(httpGraphQL{}) // GET and JSON POST, GraphQL over HTTP (transporthttp.go)
	srv.AddTransport(nonStreaming{transport.MultipartForm{MaxUploadSize: MaxUploadBytes, MaxMemory: 8 << 20}})
}
