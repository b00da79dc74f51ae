package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/core/telemetry"
)

// startLocked records the user message and starts a turn; rt.mu is held.
// known, when set, is the session as the caller just read it.
func (e *Engine) startLocked(ctx context.Context, sessionID string, rt *sessionRuntime, item *core.QueueItem, known *core.Session) error {
	turnID := core.NewID("turn")
	started := time.Now().UTC()
	user := core.Message{
		Role: core.RoleUser, Text: item.Input.Text, Command: item.Input.Command,
		Attachments: item.Attachments, BrowserElements: item.Input.BrowserElements, TurnID: turnID,
		TurnStartedAt: &started,
	}
	evs, err := buildEvents(sessionID,
		eventSpec{core.EventTurnStarted, core.TurnPayload{TurnID: turnID, QueueItemID: item.ID, StartedAt: &started}},
		eventSpec{core.EventPhaseChanged, core.PhasePayload{Phase: core.PhaseTurn}},
		eventSpec{core.EventMessageEnd, core.MessagePayload{Message: user}},
	)
	if err != nil {
		return err
	}
	out, err := e.svc.Append(ctx, sessionID, evs...)
	if err != nil {
		return fmt.Errorf("start turn: %w", err)
	}
	// Nothing came between the caller's read and these events: the session
	// is that read with the new head and phase (saves the turn reading it).
	var after *core.Session
	if known != nil && len(out) > 0 && out[0].Seq == known.HeadSeq+1 {
		s, last := *known, out[len(out)-1]
		s.Phase, s.HeadSeq, s.UpdatedAt = core.PhaseTurn, last.Seq, last.At
		after = &s
	}
	runCtx, cancel := context.WithCancelCause(context.Background())
	if telemetry.On() {
		if telemetry.CaptureContent() {
			runCtx = context.WithValue(runCtx, promptKey{}, item.Input.Text)
		}
		runCtx = startTurnSpan(runCtx, ctx, sessionID, turnID)
	}
	run := &turnRun{id: turnID, prompt: item.Input.Text, cancel: cancel, done: make(chan struct{}), started: started, session: after}
	rt.turn = run
	e.wg.Add(1)
	e.idle.begin()
	go e.runTurn(runCtx, sessionID, rt, run)
	e.log.InfoContext(runCtx, "turn started", "session_id", sessionID, "turn_id", turnID)
	return nil
}

type eventSpec struct {
	t core.EventType
	p any
}

func buildEvents(sessionID string, specs ...eventSpec) ([]core.Event, error) {
	out := make([]core.Event, len(specs))
	for i, s := range specs {
		ev, err := core.NewEvent(sessionID, s.t, s.p)
		if err != nil {
			return nil, err
		}
		out[i] = ev
	}
	return out, nil
}

// persist appends one event, ignoring cancellation of the turn's context so
// that partial work is always recorded.
func (e *Engine) persist(ctx context.Context, sessionID string, t core.EventType, payload any) error {
	return appendEvent(ctx, e.svc, sessionID, t, payload)
}

// appendEvent appends one event through svc, ignoring cancellation of ctx.
func appendEvent(ctx context.Context, svc *session.Service, sessionID string, t core.EventType, payload any) error {
	ev, err := core.NewEvent(sessionID, t, payload)
	if err != nil {
		return err
	}
	_, err = svc.Append(context.WithoutCancel(ctx), sessionID, ev)
	return err
}

func (e *Engine) runTurn(ctx context.Context, sessionID string, rt *sessionRuntime, run *turnRun) {
	defer e.wg.Done()
	defer e.idle.end()
	defer close(run.done)
	status, reason := e.loop(ctx, sessionID, run)
	pctx := context.WithoutCancel(ctx)
	defer endTurnSpan(pctx, run.started, status, reason)
	end := run.finished
	if end.IsZero() {
		end = time.Now().UTC()
	}
	// turn_finished, the end of the turn in memory and the next dispatch (or
	// idle) happen under the session's runtime lock, so that a client that
	// sees turn_finished can act on an idle session at once.
	e.hooks.forgetUntrusted(sessionID, run.id)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.turn = nil
	finished := eventSpec{core.EventTurnFinished, core.TurnPayload{TurnID: run.id, Status: status, Reason: reason, Code: run.code, StartedAt: &run.started, FinishedAt: &end}}
	next := rt.busy == "" && !rt.held && !e.isClosed() && len(rt.queue) > 0
	specs := []eventSpec{finished}
	if !next && rt.busy == "" {
		// One transaction: whoever sees turn_finished finds the session idle.
		specs = append(specs, eventSpec{core.EventPhaseChanged, core.PhasePayload{Phase: core.PhaseIdle}})
	}
	if evs, err := buildEvents(sessionID, specs...); err == nil {
		if _, err := e.svc.Append(pctx, sessionID, evs...); err != nil && !errors.Is(err, core.ErrNotFound) {
			e.log.Error("record turn end", "session_id", sessionID, "turn_id", run.id, "err", err)
		}
	}
	e.log.InfoContext(pctx, "turn finished", "session_id", sessionID, "turn_id", run.id, "status", status, "reason", reason)
	if status == core.TurnCompleted {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			e.maybeTitle(pctx, sessionID)
		}()
	}
	if !next {
		return
	}
	if e.dispatchLocked(pctx, sessionID, rt) {
		publishQueue(e.svc, sessionID, rt)
		return
	}
	if err := e.persist(pctx, sessionID, core.EventPhaseChanged, core.PhasePayload{Phase: core.PhaseIdle}); err != nil && !errors.Is(err, core.ErrNotFound) {
		e.log.Error("record idle phase", "session_id", sessionID, "err", err)
	}
}

// cancelled explains why ctx ended.
func cancelReason(ctx context.Context) string {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause.Error()
	}
	return ErrTurnStopped.Error()
}

// outputTokens is what a request spent of the turn's output budget: the
// provider's report, else the kept output at four bytes per token.
func outputTokens(res streamResult) int64 {
	if res.usage != nil {
		return res.usage.OutputTokens
	}
	n := len(res.text) + len(res.reasoning)
	for _, c := range res.calls {
		n += len(c.Input)
	}
	return estimateTokens(n)
}

// keepPartial persists what an interrupted or failed step produced, unless
// it produced nothing at all (MSG-9); it reports whether it did.
func (e *Engine) keepPartial(ctx context.Context, sessionID string, m core.Message) bool {
	if m.Text == "" && m.Reasoning == "" && len(m.ToolCalls) == 0 {
		return false
	}
	if err := e.persist(ctx, sessionID, core.EventMessageEnd, core.MessagePayload{Message: m}); err != nil && !errors.Is(err, core.ErrNotFound) {
		e.log.Error("keep partial message", "session_id", sessionID, "err", err)
	}
	return true
}

// completeCalls keeps the tool calls whose arguments are a complete JSON
// object; an interrupted call with cut-off arguments is dropped.
func completeCalls(calls []core.ToolCall) []core.ToolCall {
	var out []core.ToolCall
	for _, c := range calls {
		if c.ID != "" && c.Name != "" && isJSONObject(c.Input) {
			out = append(out, c)
		}
	}
	return out
}

func failureReason(err error) string {
	var perr *core.ProviderError
	if errors.As(err, &perr) {
		r := string(perr.Category) + ": " + perr.Message
		if perr.RetryAfter > 0 {
			r += fmt.Sprintf(" (retry after %s)", perr.RetryAfter.Round(time.Second))
		}
		return r
	}
	return core.ErrorMessage(err)
}

// compiled is one step's request and what it was built from.
type compiled struct {
	req    core.ProviderRequest
	tools  map[string]core.ToolInfo
	active []core.Message
	usage  core.ContextUsage
}

// compile builds the provider request of one step: the system prompt (never
// stored), a valid compaction checkpoint as labelled kernel context, then the
// provider view of the active history after it (MSG-8, PRV-9).
func (e *Engine) compile(ctx context.Context, s core.Session, b boundModel, loadImages bool) (compiled, error) {
	return e.compileFrom(ctx, s, b, loadImages, nil)
}

// unloadedImage stands for an image's bytes in a request compiled only to be
// estimated.
var unloadedImage = []byte{0}

// historyRead is a session's history as read when the session's head was
// head: still the history as long as the head has not moved (every change
// to a session's messages appends an event).
type historyRead struct {
	head int64
	msgs []core.Message
}

// compileFrom is compile with the session's history already read (msgs),
// or read here when msgs is nil.
func (e *Engine) compileFrom(ctx context.Context, s core.Session, b boundModel, loadImages bool, msgs []core.Message) (compiled, error) {
	if msgs == nil {
		var err error
		if msgs, err = e.svc.History(ctx, s, false); err != nil { // s was just read: no existence check
			return compiled{}, err
		}
	}
	budget := InputBudget(b.model.Capabilities)
	cp := e.compactor.checkpoint(ctx, s, b.route, msgs)
	visible := afterCheckpoint(msgs, cp)
	opts := session.ViewOptions{
		DropImages:      !ImageInputAllowed(b.model.Capabilities),
		ToolResultLimit: toolResultLimit(budget),
		Route:           b.route,
	}
	if loadImages {
		opts.LoadImage = e.loadImage
	} else {
		// An estimate (contextUsage) counts each image as the request
		// would, without reading it: a note in its place would count as a
		// few words, far below the baseline the last request recorded.
		opts.LoadImage = func(core.Attachment) ([]byte, error) { return unloadedImage, nil }
	}
	view, err := session.ProviderView(visible, opts)
	if err != nil {
		return compiled{}, err
	}
	dir, err := e.dirs.workDirPath(ctx, s)
	if err != nil {
		return compiled{}, err
	}
	tools, schemas, err := e.toolSet(ctx, s, b)
	if err != nil {
		return compiled{}, err
	}
	head := []core.ProviderMessage{{Role: core.RoleSystem, Content: []core.ContentPart{{Type: "text", Text: e.systemPrompt(ctx, s, dir)}}}}
	var state []byte
	if cp != nil {
		// A native checkpoint's state stands for the history it covers on
		// its route; otherwise the portable summary does.
		if state = cp.ProviderState.StateFor(b.route); state == nil {
			head = append(head, core.ProviderMessage{Role: core.RoleSystem, Content: []core.ContentPart{{Type: "text", Text: fmt.Sprintf(checkpointIntro, cp.ThroughSeq) + cp.Summary}}})
		}
	}
	req := core.ProviderRequest{
		Model: b.model.ID, ReasoningEffort: s.ReasoningEffort,
		Messages: append(head, view...), Tools: schemas, State: state,
	}
	if !catalog.EffortAllowed(b.model.Capabilities, req.ReasoningEffort) {
		// Declared after the session chose it (a refresh or the resolver):
		// the model's default rather than a request it would reject.
		e.log.Warn("reasoning effort not offered by the model; sending none", "session_id", s.ID, "model", b.model.ID, "effort", req.ReasoningEffort)
		req.ReasoningEffort = ""
	}
	if mo := b.model.Capabilities.MaxOutputTokens; mo != nil {
		req.MaxOutputTokens = *mo
	}
	usage := e.estimate(ctx, s, b.route, msgs, req)
	usage.Limit = budget
	return compiled{req: req, tools: tools, active: msgs, usage: usage}, nil
}

// toolScope marks ctx with the session and its ancestors, whose attached
// MCP servers the session's tools include (a sub-agent sees its parents').
func toolScope(ctx context.Context, svc *session.Service, s core.Session) context.Context {
	ids := []string{s.ID}
	for p := s.ParentID; p != "" && len(ids) < 32; {
		ids = append(ids, p)
		ps, err := svc.Session(context.WithoutCancel(ctx), p)
		if err != nil {
			break
		}
		p = ps.ParentID
	}
	return core.WithToolScope(ctx, ids)
}

// toolSet lists the tools offered to the model, sorted by name.
func (e *Engine) toolSet(ctx context.Context, s core.Session, b boundModel) (map[string]core.ToolInfo, []core.ToolSchema, error) {
	if b.model.Capabilities.ToolCalling != nil && !*b.model.Capabilities.ToolCalling {
		return map[string]core.ToolInfo{}, nil, nil
	}
	var infos []core.ToolInfo
	if e.cfg.Tools != nil {
		var err error
		if infos, err = e.cfg.Tools.Tools(toolScope(ctx, e.svc, s)); err != nil {
			return nil, nil, fmt.Errorf("list tools: %w", err)
		}
	}
	byName := make(map[string]core.ToolInfo, len(infos))
	b.imageDefault = e.gen.imageDefaultSet(ctx)
	b.videoDefault = e.gen.videoDefaultSet(ctx)
	if !webSearchAvailable(b) {
		_, b.searchFallback = e.models.searchFallback(ctx)
	}
	b.terminals = e.cfg.Terminals != nil
	schemas := kernelToolSchemas(s, b)
	for _, t := range infos {
		if _, clash := kernelToolInfo(t.Name); clash || !allowedTool(s, t.Name) {
			continue // kernel tools win; an agent sees only its allowed tools
		}
		byName[t.Name] = t
		schemas = append(schemas, core.ToolSchema{Name: t.Name, Description: t.Description, Parameters: t.Schema})
	}
	sort.Slice(schemas, func(i, j int) bool { return schemas[i].Name < schemas[j].Name })
	return byName, schemas, nil
}

func (e *Engine) loadImage(a core.Attachment) ([]byte, error) {
	if e.cfg.Blobs == nil {
		return nil, core.Errorf(core.CodeUnavailable, "no artifact store")
	}
	data, err := e.cfg.Blobs.Read(a.SHA256)
	if err != nil {
		e.log.Warn("load image attachment", "attachment", a.ID, "err", err)
	}
	return data, err
}

// systemPrompt is compiled for every request and never stored as history
// (MSG-1): who the agent is, the environment, and the project's context.
func (e *Engine) systemPrompt(ctx context.Context, s core.Session, dir string) string {
	var b strings.Builder
	b.WriteString("You are Foya, a coding agent working for the user on their machine. ")
	b.WriteString("Use the tools to inspect and change files and run commands in the working directory; ")
	b.WriteString("keep the user informed and answer concisely.\n\n")
	fmt.Fprintf(&b, "Environment:\n- date: %s\n- working directory: %s\n- platform: %s/%s\n",
		time.Now().Format("2006-01-02 (Monday)"), dir, runtime.GOOS, runtime.GOARCH)
	if s.Agent != nil && s.Agent.Instructions != "" {
		fmt.Fprintf(&b, "\nYou are the sub-agent %q.\n%s\n", s.Agent.Name, s.Agent.Instructions)
	}
	switch s.AgentMode {
	case core.AgentPlan:
		b.WriteString("\nThe session is in PLAN mode: investigate with read-only tools, then end your turn with the plan (keep it in the tasks tool, or write it as your final message); do not change files or run commands. The user confirms the plan before it is carried out.\n")
	case core.AgentAwaitingConfirmation:
		b.WriteString("\nYour plan awaits the user's confirmation: answer questions and revise the plan as asked, with read-only tools only; do not change files or run commands.\n")
	}
	if s.ProjectID != "" {
		var fallback string
		if s.Worktree != nil {
			if p, err := e.svc.Project(ctx, s.ProjectID); err == nil {
				fallback = p.Path
			}
		}
		b.WriteString(e.projectContext(dir, fallback))
	}
	return b.String()
}

// readCapped reads at most n bytes of a UTF-8 text file; a cap that falls
// inside a character ends the text before it.
func readCapped(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, n))
	if err == nil && int64(len(data)) == n {
		data = trimCutRune(data) // the cap may fall inside a character
	}
	if err != nil || !utf8.Valid(data) {
		return nil, fmt.Errorf("read %s: not UTF-8 text or unreadable", path)
	}
	return data, nil
}

// trimCutRune drops the bytes of an incomplete last UTF-8 character.
func trimCutRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

func isJSONObject(raw json.RawMessage) bool {
	var v map[string]json.RawMessage
	return json.Unmarshal(raw, &v) == nil && v != nil
}
