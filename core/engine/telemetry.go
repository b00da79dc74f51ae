package engine

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/telemetry"
)

// The spans and metrics of turns, model calls and tool calls
// (docs/telemetry.md). With no telemetry installed each helper is a nil
// check; nothing here runs per streamed delta.

// startTurnSpan starts the span of a turn on runCtx (the turn's own
// context), linked to the span of the caller's ctx when it has one (a
// sub-agent's turn links the parent's task tool call).
func startTurnSpan(runCtx, caller context.Context, sessionID, turnID string) context.Context {
	telemetry.Add(telemetry.ActiveTurns, 1)
	ctx, _ := telemetry.StartLinked(runCtx, telemetry.SpanTurn, caller,
		telemetry.String("foya.session.id", sessionID), telemetry.String("foya.turn.id", turnID))
	return ctx
}

// turnAttrs sets the session's attributes on the turn's span.
func turnAttrs(ctx context.Context, s core.Session) {
	sp := telemetry.FromContext(ctx)
	if !sp.Recording() {
		return
	}
	sp.Set(telemetry.String("foya.project.id", s.ProjectID), telemetry.String("foya.agent.mode", string(s.AgentMode)),
		telemetry.String("foya.approval.mode", string(s.ApprovalMode)), telemetry.String("gen_ai.conversation.id", s.ID))
	if s.ParentID != "" {
		sp.Set(telemetry.String("foya.session.parent_id", s.ParentID))
	}
	if s.Agent != nil {
		sp.Set(telemetry.String("gen_ai.agent.name", s.Agent.Name))
	}
	if telemetry.CaptureContent() {
		if run := turnPrompt(ctx); run != "" {
			sp.Set(telemetry.String("foya.turn.prompt", run))
		}
	}
}

type promptKey struct{}

func turnPrompt(ctx context.Context) string {
	p, _ := ctx.Value(promptKey{}).(string)
	return p
}

// endTurnSpan ends the turn's span with its status.
func endTurnSpan(ctx context.Context, started time.Time, status core.TurnStatus, reason string) {
	if !telemetry.On() {
		return
	}
	telemetry.Add(telemetry.ActiveTurns, -1)
	telemetry.Since(telemetry.TurnDuration, started, telemetry.String("foya.turn.status", string(status)))
	sp := telemetry.FromContext(ctx)
	sp.Set(telemetry.String("foya.turn.status", string(status)))
	if status == core.TurnFailed {
		sp.Fail(reason)
	}
	sp.End()
}

// providerName is gen_ai.provider.name for a connection's provider kind.
func providerName(b boundModel) string {
	switch k := b.conn.ProviderKind; k {
	case "openai", "openai-responses":
		return "openai"
	case "":
		return "unknown"
	default:
		return k
	}
}

// startChatSpan starts the span of one model call (all its retries).
func startChatSpan(ctx context.Context, b *boundModel, req *core.ProviderRequest) (context.Context, telemetry.Span) {
	if !telemetry.Tracing() {
		return ctx, telemetry.Span{}
	}
	ctx, sp := telemetry.Start(ctx, telemetry.SpanChat+" "+req.Model,
		telemetry.String("gen_ai.operation.name", telemetry.SpanChat),
		telemetry.String("gen_ai.provider.name", providerName(*b)),
		telemetry.String("gen_ai.request.model", req.Model),
		telemetry.String("foya.connection.id", b.conn.ID),
		telemetry.String("foya.route", b.route))
	if req.MaxOutputTokens > 0 {
		sp.Set(telemetry.Int("gen_ai.request.max_tokens", req.MaxOutputTokens))
	}
	if telemetry.CaptureContent() {
		sp.Set(telemetry.String("gen_ai.input.messages", lastUserText(*req)))
	}
	return ctx, sp
}

// lastUserText is the last user message of a request (captured content).
func lastUserText(req core.ProviderRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == core.RoleUser {
			var b strings.Builder
			for _, p := range m.Content {
				b.WriteString(p.Text)
			}
			return b.String()
		}
	}
	return ""
}

// endChatSpan records what one model call did: usage, finish reason,
// time to first token, its duration (span and histogram).
func endChatSpan(sp telemetry.Span, b *boundModel, req *core.ProviderRequest, res *streamResult, started time.Time) {
	if !telemetry.On() {
		return
	}
	attrs := []telemetry.Attr{
		telemetry.String("gen_ai.operation.name", telemetry.SpanChat),
		telemetry.String("gen_ai.provider.name", providerName(*b)),
		telemetry.String("gen_ai.request.model", req.Model),
	}
	errType := ""
	var perr *core.ProviderError
	switch {
	case res.cancelled:
		errType = "cancelled"
	case errors.As(res.err, &perr):
		errType = string(perr.Category)
	case res.err != nil:
		errType = "error"
	}
	if errType != "" {
		attrs = append(attrs, telemetry.String("error.type", errType))
	}
	telemetry.Since(telemetry.OperationDuration, started, attrs...)
	if !res.first.IsZero() {
		ttft := res.first.Sub(started).Seconds()
		telemetry.Record(telemetry.TimeToFirstToken, ttft, attrs[:3]...)
		sp.Set(telemetry.Float("foya.time_to_first_token", ttft))
	}
	if !sp.Recording() {
		return
	}
	if res.usage != nil {
		sp.Set(telemetry.Int("gen_ai.usage.input_tokens", res.usage.InputTokens),
			telemetry.Int("gen_ai.usage.output_tokens", res.usage.OutputTokens),
			telemetry.Int("gen_ai.usage.cache_read.input_tokens", res.usage.CachedTokens))
		if res.usage.Model != "" {
			sp.Set(telemetry.String("gen_ai.response.model", res.usage.Model))
		}
	}
	if res.finish != "" {
		sp.Set(telemetry.String("gen_ai.response.finish_reasons", res.finish))
	}
	if len(res.calls) > 0 {
		sp.Set(telemetry.Int("foya.tool_calls", int64(len(res.calls))))
	}
	if telemetry.CaptureContent() && res.text != "" {
		sp.Set(telemetry.String("gen_ai.output.messages", res.text))
	}
	if errType != "" {
		sp.Set(telemetry.String("error.type", errType))
		if errType != "cancelled" {
			sp.Fail(core.ScrubSecret(failureReason(res.err), b.endpoint.APIKey))
		}
	}
	sp.End()
}

// usageMetrics adds a recorded usage to the token and cost counters.
func usageMetrics(b boundModel, projectID string, u core.Usage) {
	base := [4]telemetry.Attr{
		telemetry.String("gen_ai.request.model", u.Model),
		telemetry.String("gen_ai.provider.name", providerName(b)),
		telemetry.String("foya.project.id", projectID),
	}
	add := func(kind string, n int64) {
		if n > 0 {
			a := base
			a[3] = telemetry.String("gen_ai.token.type", kind)
			telemetry.Add(telemetry.TokenUsage, float64(n), a[:]...)
		}
	}
	add("input", u.InputTokens)
	add("output", u.OutputTokens)
	add("cached", u.CachedTokens)
	if u.Cost != nil && *u.Cost > 0 {
		telemetry.Add(telemetry.Cost, *u.Cost, base[:3]...)
	}
}

// startToolSpan starts the span of one tool call.
func startToolSpan(ctx context.Context, c core.ToolCall, info core.ToolInfo) (context.Context, telemetry.Span, time.Time) {
	start := time.Now()
	if !telemetry.Tracing() {
		return ctx, telemetry.Span{}, start
	}
	ctx, sp := telemetry.Start(ctx, telemetry.SpanTool+" "+c.Name,
		telemetry.String("gen_ai.operation.name", telemetry.SpanTool),
		telemetry.String("gen_ai.tool.name", c.Name),
		telemetry.String("gen_ai.tool.call.id", c.ID),
		telemetry.String("foya.tool.class", toolClass(c.Name, info)),
		telemetry.String("foya.approval.decided_by", "policy"))
	if telemetry.CaptureContent() {
		sp.Set(telemetry.String("gen_ai.tool.call.arguments", string(c.Input)))
	}
	return ctx, sp, start
}

// toolClass is what kind of tool a call runs: kernel, mcp, read-only or
// a tool that writes or runs commands.
func toolClass(name string, info core.ToolInfo) string {
	switch {
	case isKernelToolName(name):
		return "kernel"
	case strings.HasPrefix(name, "mcp__"):
		return "mcp"
	case info.ReadOnly:
		return "read"
	default:
		return "write"
	}
}

func isKernelToolName(name string) bool {
	_, ok := kernelTools[name]
	return ok
}

// endToolSpan records a tool call's outcome (span and metrics).
func endToolSpan(sp telemetry.Span, c core.ToolCall, info core.ToolInfo, m core.Message, start time.Time) {
	if !telemetry.On() {
		return
	}
	outcome := "ok"
	switch {
	case m.IsError && strings.HasPrefix(m.Text, "denied"):
		outcome = "denied"
	case m.IsError:
		outcome = "error"
	}
	attrs := []telemetry.Attr{telemetry.String("gen_ai.tool.name", c.Name), telemetry.String("foya.tool.class", toolClass(c.Name, info)), telemetry.String("foya.tool.outcome", outcome)}
	telemetry.Add(telemetry.ToolCalls, 1, attrs...)
	telemetry.Since(telemetry.ToolDuration, start, attrs...)
	if !sp.Recording() {
		return
	}
	sp.Set(telemetry.String("foya.tool.outcome", outcome))
	if telemetry.CaptureContent() {
		sp.Set(telemetry.String("gen_ai.tool.call.result", m.Text))
	}
	if outcome == "error" {
		sp.Fail("the tool call failed")
	}
	sp.End()
}

// approvalDecided notes on ctx's span who decided a call and how long the
// decision took.
func approvalDecided(ctx context.Context, by string, decision string, wait time.Duration) {
	sp := telemetry.FromContext(ctx)
	if !sp.Recording() {
		return
	}
	sp.Set(telemetry.String("foya.approval.decided_by", by), telemetry.String("foya.approval.decision", decision))
	if wait > 0 {
		sp.Set(telemetry.Float("foya.approval.wait", wait.Seconds()))
	}
	sp.Event("foya.approval", telemetry.String("foya.approval.decided_by", by), telemetry.String("foya.approval.decision", decision))
}

// observeLoad makes r the source of the active-session and queue gauges.
func observeLoad(r *runtimes) {
	telemetry.Observe(telemetry.ActiveSessions, func() float64 { a, _ := r.load(); return float64(a) })
	telemetry.Observe(telemetry.QueueDepth, func() float64 { _, q := r.load(); return float64(q) })
}

// hookRan ends a hook command's span and counts it (the command itself is
// not exported: it may hold what its author put inline).
func hookRan(sp telemetry.Span, event string, out core.HookOutcome) {
	if !telemetry.On() {
		return
	}
	outcome := "ok"
	switch {
	case out.TimedOut:
		outcome = "timeout"
	case out.Err != nil:
		outcome = "error"
	case out.ExitCode == 2:
		outcome = "blocked"
	case out.ExitCode != 0:
		outcome = "error"
	}
	telemetry.Add(telemetry.HookRuns, 1, telemetry.String("foya.hook.event", event), telemetry.String("foya.hook.outcome", outcome))
	sp.Set(telemetry.Int("process.exit.code", int64(out.ExitCode)), telemetry.String("foya.hook.outcome", outcome))
	if outcome == "error" || outcome == "timeout" {
		sp.Fail("the hook " + outcome)
	}
	sp.End()
}
