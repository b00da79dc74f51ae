package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/foya-dev/foya/core"
)

// ToolTask starts a sub-agent in a child session.
const ToolTask = "task"

var taskToolInfo = core.ToolInfo{Name: ToolTask, ReadOnly: true,
	Description: "Delegate a self-contained task to a sub-agent that works in its own child session with its own history, then returns its final answer. " +
		"agent is the agent's name (default \"general\"); prompt must say everything the sub-agent needs to know. " +
		"context hands the sub-agent messages of this conversation by their seq (the session's event seq of each message, e.g. as the user names them), before the prompt: " +
		"seqs lists single messages, fromSeq..toSeq a range (both inclusive, either may be left out); a tool result needs its call's message too.",
	Schema: json.RawMessage(`{"type":"object","properties":{"agent":{"type":"string"},"prompt":{"type":"string"},` +
		`"context":{"type":"object","properties":{"seqs":{"type":"array","items":{"type":"integer","minimum":1}},"fromSeq":{"type":"integer","minimum":1},"toSeq":{"type":"integer","minimum":1}},"additionalProperties":false}},` +
		`"required":["prompt"],"additionalProperties":false}`)}

// runTask creates a child session with an immutable snapshot of the agent
// definition, runs one turn in it and returns its final answer. Stopping the
// parent's turn stops the child.
func runTask(ctx context.Context, e *Engine, s core.Session, c core.ToolCall) (string, bool) {
	var in struct {
		Agent   string       `json:"agent"`
		Prompt  string       `json:"prompt"`
		Context *taskContext `json:"context"`
	}
	if err := json.Unmarshal(c.Input, &in); err != nil || strings.TrimSpace(in.Prompt) == "" {
		return "task: give a non-empty \"prompt\"", true
	}
	if in.Agent == "" {
		in.Agent = GeneralAgent.Name
	}
	pctx := context.WithoutCancel(ctx)
	snap, why := taskSnapshot(pctx, e, s, in.Agent)
	if why != "" {
		return why, true
	}
	mode := s.AgentMode
	if readOnlyMode(mode) {
		mode = core.AgentPlan // a child of a planning session only reads
	}
	conn, model := s.ConnectionID, s.Model
	if snap.Model != "" {
		conn, model, _ = strings.Cut(snap.Model, "/")
	}
	var passed []core.Message
	if in.Context != nil {
		if passed, why = parentContext(pctx, e, s, conn, model, *in.Context); why != "" {
			return why, true
		}
		for _, m := range passed {
			snap.ContextSeqs = append(snap.ContextSeqs, m.Seq)
		}
	}
	child, err := e.svc.CreateSession(pctx, core.CreateSessionInput{
		ParentID: s.ID, Source: "task:" + c.ID, Agent: &snap, ProjectID: s.ProjectID,
		ConnectionID: conn, Model: model, ReasoningEffort: s.ReasoningEffort,
		ApprovalMode: s.ApprovalMode, AgentMode: mode,
		Title:    core.TruncateRunes(snap.Name+": "+strings.TrimSpace(in.Prompt), 80, ""),
		Worktree: inheritedWorktree(s.Worktree),
	})
	if err != nil {
		return "task: " + core.ErrorMessage(err), true
	}
	for _, m := range passed {
		m.Seq, m.Active, m.ProviderState = 0, false, nil
		if err := appendEvent(pctx, e.svc, child.ID, core.EventMessageImported, core.MessagePayload{Message: m}); err != nil {
			return "task: hand the context to the child session: " + core.ErrorMessage(err), true
		}
	}
	return awaitTask(ctx, e, child.ID, in.Prompt)
}

// taskSnapshot is the snapshot of the agent a task call names, its tools
// frozen; why says what is wrong otherwise.
func taskSnapshot(ctx context.Context, e *Engine, s core.Session, name string) (snap core.AgentSnapshot, why string) {
	agents, err := e.Agents(ctx, s)
	if err != nil {
		return snap, core.ErrorMessage(err)
	}
	i := slices.IndexFunc(agents, func(a core.AgentSnapshot) bool { return a.Name == name })
	if i < 0 {
		names := make([]string, len(agents))
		for j, a := range agents {
			names[j] = a.Name
		}
		return snap, fmt.Sprintf("task: no agent %q; available: %s", name, strings.Join(names, ", "))
	}
	snap = agents[i]
	snap.Tools = slices.Clone(snap.Tools)
	if len(snap.Tools) == 0 {
		// SES-12: an agent without a tools: list gets the tools that
		// exist now, frozen in its snapshot; a tool added later (a new
		// MCP server) is not the child's.
		if snap.Tools, err = e.currentToolNames(ctx, s); err != nil {
			return snap, "task: " + core.ErrorMessage(err)
		}
	}
	return snap, ""
}

// awaitTask sends prompt to the child session, waits for its turn to end
// (stopping it when ctx ends) and returns its final answer.
func awaitTask(ctx context.Context, e *Engine, childID, prompt string) (string, bool) {
	pctx := context.WithoutCancel(ctx)
	subCtx, cancel := context.WithCancel(pctx)
	defer cancel()
	events, err := e.svc.Subscribe(subCtx, childID, nil)
	if err != nil {
		return "task: " + core.ErrorMessage(err), true
	}
	if _, err := e.SendMessage(pctx, childID, core.UserInput{Text: prompt}); err != nil {
		return "task: " + core.ErrorMessage(err), true
	}
	var end core.TurnPayload
wait:
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return "task: the child session ended unexpectedly", true
			}
			if ev.Type == core.EventTurnFinished {
				_ = ev.Decode(&end)
				break wait
			}
		case <-ctx.Done():
			if _, err := e.StopTurn(pctx, childID, false, ""); err != nil {
				e.log.Warn("stop child session", "session_id", childID, "err", err)
			}
			return fmt.Sprintf("task cancelled: the parent turn was stopped (child session %s keeps what it did)", childID), true
		}
	}
	msgs, err := e.svc.Messages(pctx, childID, false)
	if err != nil {
		return core.ErrorMessage(err), true
	}
	answer := ""
	for j := len(msgs) - 1; j >= 0; j-- {
		if msgs[j].Role == core.RoleAssistant && msgs[j].Text != "" {
			answer = msgs[j].Text
			break
		}
	}
	if end.Status != core.TurnCompleted {
		return fmt.Sprintf("the sub-agent (child session %s) %s: %s\n%s", childID, end.Status, end.Reason, answer), true
	}
	return answer, false
}
