package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/core/mcp"
	"github.com/foya-dev/foya/core/session"
)

// ServerConfig wires the GraphQL edge.
type ServerConfig struct {
	Service *session.Service
	Engine  *engine.Engine
	Usage   core.UsageStore
	Catalog *catalog.Catalog
	Plugins core.PluginRegistry
	// MCP is the MCP server catalog (optional).
	MCP    *mcp.Service
	Logger *slog.Logger
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
	// ClusterKey is the cluster's secret key (--secret-key-file); requests
	// between kernels are signed with a key derived from it, and forwarding
	// headers without a valid signature are ignored (nil: always ignored).
	ClusterKey []byte
}

// NewHandler serves GraphQL on /graphql (POST, GET, SSE and WebSocket with
// graphql-transport-ws) and the GraphiQL playground on /.
func NewHandler(cfg ServerConfig) http.Handler {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	keepAlive := cfg.KeepAlive
	if keepAlive == 0 {
		keepAlive = 15 * time.Second
	}
	lim := cfg.Limits.withDefaults()
	srv := handler.New(NewExecutableSchema(Config{Resolvers: &Resolver{Service: cfg.Service, Engine: cfg.Engine, Ledger: cfg.Usage, Catalog: cfg.Catalog, Registry: cfg.Plugins, MCP: cfg.MCP, NodeList: cfg.Nodes, Log: log}}))
	// SSE must come before POST: both accept POST requests.
	srv.AddTransport(resumableSSE{})
	// graphql-transport-ws is served by transportWS; gqlgen's transport keeps
	// the legacy graphql-ws subprotocol (and sockets that name none).
	srv.AddTransport(transportWS{pingInterval: keepAlive, initTimeout: cfg.WSInitTimeout, readLimit: wsReadLimit, initFunc: cfg.Auth.wsInitFunc()})
	ws := transport.Websocket{
		// browserGuard has already checked the Origin of every /graphql request.
		Implementation:        countingWS{rotationAwareWS{transport.CoderWebsocketImplementation{AcceptOptions: websocket.AcceptOptions{InsecureSkipVerify: true}}}},
		KeepAlivePingInterval: keepAlive,
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
	srv.Use(extension.Introspection{})
	useQueryBounds(srv) // the query cache, persisted queries, the token limit
	srv.Use(costLimit{max: MaxCost})
	srv.Use(depthLimit{max: MaxDepth})
	srv.Use(subscriptionCap{perConn: int64(lim.MaxSubscriptionsPerConnection), total: int64(lim.MaxSubscriptions), running: new(atomic.Int64)})
	adm := useAdmission(srv, lim)
	srv.AroundOperations(conditionsAreBooleans)
	// Operations about a session another node owns run on that node.
	signer := newRequestSigner(cfg.ClusterKey)
	fwd := newForwarder(cfg.Service, cfg.Auth, signer, log)
	srv.AroundOperations(fwd.around)
	srv.AroundFields(markInternal)
	srv.Use(responseCap{max: lim.MaxResponseBytes})
	srv.SetErrorPresenter(presentError(log))
	srv.SetRecoverFunc(func(ctx context.Context, v any) error {
		log.Error("panic in resolver", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		return internalError{fmt.Errorf("panic: %v", v)}
	})

	mux := http.NewServeMux()
	// The token is checked before the body is read (requestLimits).
	var api http.Handler = requestLimits(srv, lim, adm)
	api = checkForwarding(api, signer, lim.MaxBodyBytes, log)
	if cfg.Auth != nil {
		api = cfg.Auth.middleware(api)
	}
	mux.Handle("/graphql", codedErrors(browserGuard(api, cfg.Auth, cfg.OriginPatterns, cfg.HostPatterns)))
	mux.Handle(ExportRoute, exportRoute(cfg, log)) // the streamed session export, guarded like /graphql
	if cfg.Service.Clustered() {
		var state http.Handler = checkForwarding(stateHandler(cfg.Engine), signer, lim.MaxBodyBytes, log)
		if cfg.Auth != nil {
			state = cfg.Auth.middleware(state)
		}
		mux.Handle(StatePath, state)
	}
	playground := pageHeaders(PlaygroundHandler("Foya kernel", "/graphql"))
	mux.Handle("/playground", playground)
	mux.Handle("/playground/assets/", playground)
	mux.Handle("/favicon.ico", pageHeaders(faviconHandler()))
	mux.Handle("/", pageHeaders(WebHandler()))
	return mux
}

// internalError marks a resolver error that is not a domain error: it is
// logged and shown only as INTERNAL.
type internalError struct{ err error }

func (e internalError) Error() string { return e.err.Error() }
func (e internalError) Unwrap() error { return e.err }

// markInternal tags every non-domain error a resolver returns, so that the
// presenter can tell them from gqlgen's own input errors.
func markInternal(ctx context.Context, next graphql.Resolver) (any, error) {
	res, err := next(ctx)
	if err == nil {
		return res, nil
	}
	var ce *core.Error
	if errors.As(err, &ce) {
		return res, err
	}
	var ie internalError
	if errors.As(err, &ie) {
		return res, err
	}
	return res, internalError{err}
}

func presentError(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		if gqlErr.Extensions == nil {
			gqlErr.Extensions = map[string]any{}
		}
		if errors.Is(err, errResponseTooLarge) {
			return responseTooLarge // replaced by responseCap with one error
		}
		var ce *core.Error
		var ie internalError
		switch {
		case errors.As(err, &ce):
			gqlErr.Message = clipKernelMessage(ce.Message)
			gqlErr.Extensions["code"] = string(ce.Code)
			if ce.Code == core.CodeInternal {
				log.Error("internal error", "path", gqlErr.Path.String(), "err", err)
			}
		case errors.As(err, &ie):
			if errors.Is(err, context.Canceled) {
				gqlErr.Message = "request cancelled"
				gqlErr.Extensions["code"] = string(core.CodeUnavailable)
				break
			}
			log.Error("internal error", "path", gqlErr.Path.String(), "err", err)
			gqlErr.Message = "internal error; see the kernel log"
			gqlErr.Extensions["code"] = string(core.CodeInternal)
		default:
			// gqlgen's own parse, validation and argument errors: the
			// client's input, which the message must not repeat at length.
			gqlErr.Message = clipMessage(gqlErr.Message)
			if c, _ := gqlErr.Extensions["code"].(string); !knownCode(c) {
				gqlErr.Extensions["code"] = string(core.CodeBadInput)
			}
		}
		return gqlErr
	}
}
