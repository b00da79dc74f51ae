package telemetry

// Metric names one instrument; docs/telemetry.md lists each with its
// attributes (a test checks that the page names every one).
type Metric uint8

// The instruments. Names follow the OpenTelemetry GenAI conventions where
// one exists (gen_ai.client.*), foya.* otherwise.
const (
	// TokenUsage counts tokens (counter, {token}): gen_ai.token.type
	// (input, output, cached), gen_ai.request.model, gen_ai.provider.name,
	// foya.project.id.
	TokenUsage Metric = iota
	// Cost is foya.cost.usd: spend in US dollars as priced by the catalog
	// (counter).
	Cost
	// OperationDuration is gen_ai.client.operation.duration (histogram, s):
	// gen_ai.operation.name, gen_ai.request.model, gen_ai.provider.name,
	// error.type.
	OperationDuration
	// TimeToFirstToken is gen_ai.client.time_to_first_token (histogram, s).
	TimeToFirstToken
	// TurnDuration is foya.turn.duration (histogram, s): foya.turn.status.
	TurnDuration
	// ActiveTurns is foya.turns.active (up-down counter).
	ActiveTurns
	// ActiveSessions is foya.sessions.active: sessions with a running turn
	// or queued input (gauge).
	ActiveSessions
	// QueueDepth is foya.queue.depth: queued inputs (gauge).
	QueueDepth
	// ToolCalls counts tool calls (counter): gen_ai.tool.name,
	// foya.tool.class, foya.tool.outcome.
	ToolCalls
	// ToolDuration is foya.tool.duration (histogram, s).
	ToolDuration
	// Restarts counts plugin and MCP server (re)starts (counter):
	// foya.component (plugin, mcp), foya.component.name.
	Restarts
	// Subscriptions is foya.subscriptions.active (gauge).
	Subscriptions
	// WSConnections is foya.websocket.connections (gauge).
	WSConnections
	// EventAppend is foya.event.append.duration (histogram, s).
	EventAppend
	// MCPCalls counts MCP tool calls (counter): foya.mcp.server,
	// foya.tool.outcome.
	MCPCalls
	// HookRuns counts hook commands run (counter): foya.hook.event,
	// foya.hook.outcome.
	HookRuns

	NumMetrics // the number of instruments
)

// Info describes one instrument.
type Info struct {
	Name, Unit, Desc string
	Histogram        bool // else a counter
	UpDown           bool // a counter that goes down too
	Gauge            bool // observed when collected (Observe)
}

// Instruments describes every Metric, indexed by it.
var Instruments = [NumMetrics]Info{
	TokenUsage:        {Name: "gen_ai.client.token.usage", Unit: "{token}", Desc: "Tokens used by model requests, by type (input, output, cached)."},
	Cost:              {Name: "foya.cost.usd", Unit: "{USD}", Desc: "Spend of model requests as priced by the catalog."},
	OperationDuration: {Name: "gen_ai.client.operation.duration", Unit: "s", Desc: "Duration of model requests.", Histogram: true},
	TimeToFirstToken:  {Name: "gen_ai.client.time_to_first_token", Unit: "s", Desc: "Time from a model request to its first streamed output.", Histogram: true},
	TurnDuration:      {Name: "foya.turn.duration", Unit: "s", Desc: "Duration of turns.", Histogram: true},
	ActiveTurns:       {Name: "foya.turns.active", Unit: "{turn}", Desc: "Turns running now.", UpDown: true},
	ActiveSessions:    {Name: "foya.sessions.active", Unit: "{session}", Desc: "Sessions with a running turn or queued input.", Gauge: true},
	QueueDepth:        {Name: "foya.queue.depth", Unit: "{input}", Desc: "Inputs waiting in session queues.", Gauge: true},
	ToolCalls:         {Name: "foya.tool.calls", Unit: "{call}", Desc: "Tool calls by outcome."},
	ToolDuration:      {Name: "foya.tool.duration", Unit: "s", Desc: "Duration of tool calls, approval wait included.", Histogram: true},
	Restarts:          {Name: "foya.restarts", Unit: "{start}", Desc: "Plugin processes and MCP servers started again."},
	Subscriptions:     {Name: "foya.subscriptions.active", Unit: "{subscription}", Desc: "GraphQL subscriptions open now.", Gauge: true},
	WSConnections:     {Name: "foya.websocket.connections", Unit: "{connection}", Desc: "WebSocket connections open now.", Gauge: true},
	EventAppend:       {Name: "foya.event.append.duration", Unit: "s", Desc: "Latency of appending events to the log.", Histogram: true},
	MCPCalls:          {Name: "foya.mcp.calls", Unit: "{call}", Desc: "MCP tool calls by server and outcome."},
	HookRuns:          {Name: "foya.hook.runs", Unit: "{run}", Desc: "Hook commands run, by event and outcome."},
}

// Span names (docs/telemetry.md).
const (
	SpanTurn       = "foya.turn"
	SpanChat       = "chat"         // gen_ai.operation.name; the span is "chat <model>"
	SpanTool       = "execute_tool" // the span is "execute_tool <name>"
	SpanMCP        = "mcp.call"
	SpanHook       = "foya.hook"
	SpanCompaction = "foya.compaction"
)
