package engine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/hooks"
	"github.com/foya-dev/foya/core/session"
)

// toolRunner executes a turn's tool calls: the scope and approval checks,
// the PreToolUse and PostToolUse hooks, kernel tools, image generation and
// the tool plugins, and what a call leaves behind (file changes kept in the
// artifact store, attachments).
type toolRunner struct {
	svc      *session.Service
	cfg      *Config
	log      *slog.Logger
	out      OutputLimits
	dirs     workDirs
	requests *Requests
	hooks    *hookRunner
	gen      *Generator
	// guardian reviews, in GUARDED sessions, what would ask a person.
	guardian *guardian
	// kernel runs a kernel tool (they act on the session through the
	// engine: questions, tasks, sub-agents, web search).
	kernel func(ctx context.Context, kt kernelTool, s core.Session, c core.ToolCall) (string, bool)
	// sampler answers the sampling requests of an MCP server during a
	// call, for the person asker asks (nil: none).
	sampler func(asker sessionAsker) core.Sampler
}

// run executes the tool calls of one assistant message and persists one
// tool message per call, in call order (MSG-7). Calls that are all
// read-only (or Parallel) run concurrently; otherwise they run one after
// another. It reports whether the turn was stopped (remaining calls are not
// run).
func (t *toolRunner) run(ctx context.Context, sessionID, turnID string, calls []core.ToolCall, tools map[string]core.ToolInfo) bool {
	pctx := context.WithoutCancel(ctx)
	allReadOnly := len(calls) > 1
	for _, c := range calls {
		if info, ok := lookupTool(c.Name, tools); !ok || !(info.ReadOnly || info.Parallel) {
			allReadOnly = false
		}
	}
	results := make([]core.Message, len(calls))
	if allReadOnly {
		var wg sync.WaitGroup
		for i, c := range calls {
			if err := appendEvent(pctx, t.svc, sessionID, core.EventToolStarted, core.ToolStartedPayload{TurnID: turnID, ToolCallID: c.ID, ToolName: c.Name}); err != nil {
				return true
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = t.runOne(ctx, sessionID, turnID, c, tools)
			}()
		}
		wg.Wait()
		for _, m := range results {
			if err := appendEvent(pctx, t.svc, sessionID, core.EventMessageEnd, core.MessagePayload{Message: m}); err != nil {
				return true
			}
		}
		return ctx.Err() != nil
	}
	for _, c := range calls {
		if ctx.Err() != nil {
			return true
		}
		if err := appendEvent(pctx, t.svc, sessionID, core.EventToolStarted, core.ToolStartedPayload{TurnID: turnID, ToolCallID: c.ID, ToolName: c.Name}); err != nil {
			return true
		}
		m := t.runOne(ctx, sessionID, turnID, c, tools)
		if err := appendEvent(pctx, t.svc, sessionID, core.EventMessageEnd, core.MessagePayload{Message: m}); err != nil {
			return true
		}
	}
	return ctx.Err() != nil
}

func lookupTool(name string, tools map[string]core.ToolInfo) (core.ToolInfo, bool) {
	if t, ok := kernelToolInfo(name); ok {
		return t, true
	}
	t, ok := tools[name]
	return t, ok
}

// runOne runs one call and returns its tool message; failures become tool
// messages the model can read (MSG-7).
func (t *toolRunner) runOne(ctx context.Context, sessionID, turnID string, c core.ToolCall, tools map[string]core.ToolInfo) core.Message {
	info, _ := lookupTool(c.Name, tools)
	ctx, sp, start := startToolSpan(ctx, c, info)
	var post func(*core.Message)
	m := t.call(ctx, sessionID, turnID, c, tools, &post)
	if post != nil {
		post(&m)
	}
	endToolSpan(sp, c, info, m, start)
	return m
}

// call is runOne before the PostToolUse hooks; it sets *post once
// the call passed the PreToolUse hooks.
func (t *toolRunner) call(ctx context.Context, sessionID, turnID string, c core.ToolCall, tools map[string]core.ToolInfo, post *func(*core.Message)) core.Message {
	m := core.Message{Role: core.RoleTool, ToolCallID: c.ID, ToolName: c.Name, TurnID: turnID}
	fail := func(format string, args ...any) core.Message {
		m.Text, m.IsError = fmt.Sprintf(format, args...), true
		return m
	}
	if c.Truncated {
		// Its arguments passed the cap and were cut: never run.
		return fail("%s", t.out.toolArgsRefusal())
	}
	// The session is read at call time: a mode change applies to the next
	// tool call.
	pctx := context.WithoutCancel(ctx)
	s, err := t.svc.Session(pctx, sessionID)
	if err != nil {
		return fail("%s", core.ErrorMessage(err))
	}
	info, why := t.refuse(s, c, tools)
	if why != "" {
		return fail("%s", why)
	}
	kt, isKernelTool := kernelTools[c.Name]
	var dir string
	if !isKernelTool {
		// The scope check comes before the approval: nobody is asked to
		// approve a call that would be refused anyway.
		if dir, err = t.dirs.workDir(pctx, s); err != nil {
			return fail("%s", core.ErrorMessage(err))
		}
		if why := t.cfg.scopeRefusal(dir, c); why != "" {
			return fail("%s", why)
		}
	}
	if ok, why := t.authorize(ctx, s, turnID, c, info, false); !ok {
		return fail("%s", why)
	}
	if ctx.Err() != nil {
		return fail("not run: the turn was stopped")
	}
	// PreToolUse runs after the approval policy, before the call.
	if d := t.hooks.runHooks(ctx, s, turnID, hooks.HookPreToolUse, core.HookInput{ToolName: c.Name, ToolInput: c.Input}); d.block {
		return fail("blocked by a PreToolUse hook: %s", cmp.Or(d.reason, "no reason given"))
	} else if d.ask && !d.allow {
		if ok, why := t.authorize(ctx, s, turnID, c, info, true); !ok {
			return fail("%s", why)
		}
	}
	*post = t.postHooks(ctx, s, turnID, c)
	switch c.Name {
	case ToolImageGeneration:
		m.Text, m.Attachments, m.IsError = t.gen.runImageGeneration(ctx, s, c)
		return m
	case ToolVideoGeneration:
		m.Text, m.Attachments, m.IsError = t.gen.runVideoGeneration(ctx, s, c)
		return m
	}
	if isKernelTool {
		text, isErr := t.kernel(ctx, kt, s, c)
		m.Text, m.IsError = text, isErr
		return m
	}
	t.callPlugin(ctx, s, c, dir, &m)
	return m
}

// refuse returns the tool c calls, or why it cannot run in s: it is
// unknown or not allowed, or its arguments are not a JSON object.
func (t *toolRunner) refuse(s core.Session, c core.ToolCall, tools map[string]core.ToolInfo) (core.ToolInfo, string) {
	info, ok := lookupTool(c.Name, tools)
	if !ok || !allowedTool(s, c.Name) {
		names := make([]string, 0, len(tools))
		for n := range tools {
			names = append(names, n)
		}
		slices.Sort(names)
		return info, fmt.Sprintf("unknown tool %q; available tools: %s", c.Name, strings.Join(names, ", "))
	}
	if !isJSONObject(c.Input) {
		raw := string(c.Input)
		var s string
		if json.Unmarshal(c.Input, &s) == nil {
			raw = s
		}
		return info, fmt.Sprintf("the arguments of %s are not valid JSON (a JSON object is required): %.200s", c.Name, raw)
	}
	return info, ""
}

// postHooks returns the PostToolUse step of a call that passed the
// PreToolUse hooks: exit 2 or decision "block" feeds the reason back to the
// model with the result; additionalContext is appended too.
func (t *toolRunner) postHooks(ctx context.Context, s core.Session, turnID string, c core.ToolCall) func(*core.Message) {
	return func(m *core.Message) {
		resp, _ := json.Marshal(map[string]any{"text": m.Text, "is_error": m.IsError})
		d := t.hooks.runHooks(ctx, s, turnID, hooks.HookPostToolUse, core.HookInput{ToolName: c.Name, ToolInput: c.Input, ToolResponse: resp})
		if d.block {
			m.Text += "\n[PostToolUse hook: " + cmp.Or(d.reason, "no reason given") + "]"
		}
		for _, hc := range d.contexts {
			m.Text += "\n[" + hc.source + ": " + hc.text + "]"
		}
	}
}

// callPlugin runs c on the tool runners in dir and sets m from the result,
// keeping its file changes and attachments.
func (t *toolRunner) callPlugin(ctx context.Context, s core.Session, c core.ToolCall, dir string, m *core.Message) {
	pctx, sessionID := context.WithoutCancel(ctx), s.ID
	fail := func(format string, args ...any) {
		m.Text, m.IsError = fmt.Sprintf(format, args...), true
	}
	asker := sessionAsker{t.requests, sessionID, c}
	cctx := core.WithAsker(toolScope(ctx, t.svc, s), asker)
	if t.sampler != nil {
		cctx = core.WithSampler(cctx, t.sampler(asker))
	}
	res, err := t.cfg.Tools.Call(cctx, core.ToolCallRequest{SessionID: sessionID, WorkDir: dir, ScopeDir: dir, ToolCallID: c.ID, Name: c.Name, Input: c.Input})
	if err != nil {
		if ctx.Err() != nil {
			fail("cancelled: the turn was stopped while %s ran", c.Name)
			return
		}
		fail("tool %s could not run: %s", c.Name, core.ErrorMessage(err))
		return
	}
	m.Text, m.IsError, m.Diff = res.Text, res.IsError, res.Diff
	if res.Note != "" {
		m.Text += "\n[note: " + res.Note + "]"
	}
	m.FileChanges = t.keepFileChanges(pctx, sessionID, res.FileChanges)
	if len(res.Structured) > 0 && json.Valid(res.Structured) {
		m.StructuredContent = res.Structured
	}
	atts := res.Attachments
	if res.Attachment != nil {
		atts = append([]core.ToolAttachment{*res.Attachment}, atts...)
	}
	for i := range atts {
		a, err := t.cfg.keepAttachment(pctx, &atts[i])
		if err != nil {
			t.log.Warn("keep tool attachment", "session_id", sessionID, "tool", c.Name, "err", err)
			m.Text += fmt.Sprintf("\n[note: attachment %q could not be kept: %s]", atts[i].Name, core.ErrorMessage(err))
			continue
		}
		m.Attachments = append(m.Attachments, a)
	}
}

// keepFileChanges stores the before and after bytes of each change in the
// artifact store (content-addressed; rewind restores from them) and keeps
// only the hashes on the message (MSG-7).
func (t *toolRunner) keepFileChanges(ctx context.Context, sessionID string, changes []core.ToolFileChange) []core.FileChange {
	out := make([]core.FileChange, 0, len(changes))
	for _, fc := range changes {
		c := core.FileChange{Path: fc.Path, Action: fc.Action, BeforeHash: fc.BeforeSHA256, AfterHash: fc.AfterSHA256, BytesMissing: fc.TooLarge}
		if fc.BeforeSHA256 != "" {
			c.BeforeMode = fc.BeforeMode & 0o777
		}
		for _, side := range []struct {
			hash string
			data []byte
		}{{fc.BeforeSHA256, fc.Before}, {fc.AfterSHA256, fc.After}} {
			if side.hash == "" {
				continue
			}
			if t.cfg.Blobs == nil || (len(side.data) == 0 && side.hash != emptySHA256) {
				c.BytesMissing = true
				continue
			}
			got, _, err := t.cfg.Blobs.Put(ctx, bytes.NewReader(side.data), 0)
			if err != nil || got != side.hash {
				t.log.Warn("keep file change bytes", "session_id", sessionID, "path", fc.Path, "err", err)
				c.BytesMissing = true
			}
		}
		out = append(out, c)
	}
	return out
}

// emptySHA256 is the SHA-256 of no bytes (an empty file crosses gRPC as nil).
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func (c *Config) keepAttachment(ctx context.Context, ta *core.ToolAttachment) (core.Attachment, error) {
	if c.Blobs == nil || c.Attachments == nil || c.Describe == nil {
		return core.Attachment{}, core.Errorf(core.CodeUnavailable, "no artifact store")
	}
	hash, size, err := c.Blobs.Put(ctx, bytes.NewReader(ta.Data), core.MaxAttachmentBytes)
	if err != nil {
		return core.Attachment{}, err
	}
	kind, mediaType, w, h, err := c.Describe(ta.Name, bytes.NewReader(ta.Data))
	if err != nil {
		return core.Attachment{}, err
	}
	if mediaType == "" {
		mediaType = ta.MediaType
	}
	a := core.Attachment{ID: core.NewID("att"), Name: ta.Name, Kind: kind, MediaType: mediaType, Size: size, Width: w, Height: h, SHA256: hash}
	return a, c.Attachments.CreateAttachment(ctx, a)
}
