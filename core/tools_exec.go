package core

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// runTools executes the tool calls of one assistant message and persists one
// tool message per call, in call order (MSG-7). Calls that are all
// read-only run concurrently; otherwise they run one after another. It
// reports whether the turn was stopped (remaining calls are not run).
func (e *Engine) runTools(ctx context.Context, sessionID, turnID string, calls []ToolCall, tools map[string]ToolInfo) bool {
	pctx := context.WithoutCancel(ctx)
	allReadOnly := len(calls) > 1
	for _, c := range calls {
		if info, ok := e.lookupTool(c.Name, tools); !ok || !info.ReadOnly {
			allReadOnly = false
		}
	}
	results := make([]Message, len(calls))
	if allReadOnly {
		var wg sync.WaitGroup
		for i, c := range calls {
			if err := e.persist(pctx, sessionID, EventToolStarted, ToolStartedPayload{TurnID: turnID, ToolCallID: c.ID, ToolName: c.Name}); err != nil {
				return true
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = e.runTool(ctx, sessionID, turnID, c, tools)
			}()
		}
		wg.Wait()
		for _, m := range results {
			if err := e.persist(pctx, sessionID, EventMessageEnd, MessagePayload{Message: m}); err != nil {
				return true
			}
		}
		return ctx.Err() != nil
	}
	for _, c := range calls {
		if ctx.Err() != nil {
			return true
		}
		if err := e.persist(pctx, sessionID, EventToolStarted, ToolStartedPayload{TurnID: turnID, ToolCallID: c.ID, ToolName: c.Name}); err != nil {
			return true
		}
		m := e.runTool(ctx, sessionID, turnID, c, tools)
		if err := e.persist(pctx, sessionID, EventMessageEnd, MessagePayload{Message: m}); err != nil {
			return true
		}
	}
	return ctx.Err() != nil
}

func (e *Engine) lookupTool(name string, tools map[string]ToolInfo) (ToolInfo, bool) {
	if t, ok := kernelToolInfo(name); ok {
		return t, true
	}
	t, ok := tools[name]
	return t, ok
}

// runTool runs one call and returns its tool message; failures become tool
// messages the model can read (MSG-7).
func (e *Engine) runTool(ctx context.Context, sessionID, turnID string, c ToolCall, tools map[string]ToolInfo) Message {
	m := Message{Role: RoleTool, ToolCallID: c.ID, ToolName: c.Name, TurnID: turnID}
	fail := func(format string, args ...any) Message {
		m.Text, m.IsError = fmt.Sprintf(format, args...), true
		return m
	}
	info, ok := e.lookupTool(c.Name, tools)
	if !ok {
		names := make([]string, 0, len(tools))
		for n := range tools {
			names = append(names, n)
		}
		slices.Sort(names)
		return fail("unknown tool %q; available tools: %s", c.Name, strings.Join(names, ", "))
	}
	if !isJSONObject(c.Input) {
		raw := string(c.Input)
		var s string
		if json.Unmarshal(c.Input, &s) == nil {
			raw = s
		}
		return fail("the arguments of %s are not valid JSON (a JSON object is required): %.200s", c.Name, raw)
	}
	pctx := context.WithoutCancel(ctx)
	s, err := e.svc.Session(pctx, sessionID)
	if err != nil {
		return fail("%s", ErrorMessage(err))
	}
	if ok, why := e.authorize(ctx, s, c, info); !ok {
		return fail("%s", why)
	}
	if ctx.Err() != nil {
		return fail("not run: the turn was stopped")
	}
	if kt, ok := kernelTools[c.Name]; ok {
		text, isErr := kt.run(ctx, e, s, c)
		m.Text, m.IsError = text, isErr
		return m
	}
	dir, err := e.workDir(pctx, s)
	if err != nil {
		return fail("%s", ErrorMessage(err))
	}
	res, err := e.cfg.Tools.Call(ctx, ToolCallRequest{SessionID: sessionID, WorkDir: dir, ToolCallID: c.ID, Name: c.Name, Input: c.Input})
	if err != nil {
		if ctx.Err() != nil {
			return fail("cancelled: the turn was stopped while %s ran", c.Name)
		}
		return fail("tool %s could not run: %s", c.Name, ErrorMessage(err))
	}
	m.Text, m.IsError = res.Text, res.IsError
	return m
}
