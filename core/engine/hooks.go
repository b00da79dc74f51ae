package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/hooks"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/core/telemetry"
)

// hookEventOutput caps the output copied into hook_finished events.
const hookEventOutput = 2 << 10

// truncatedMark ends hook output that was cut.
const truncatedMark = "…[truncated]"

// hookDecision is the combined effect of the hooks of one event.
type hookDecision struct {
	block    bool   // exit 2 or decision "block"/permissionDecision "deny"
	reason   string // stderr or reason
	ask      bool   // permissionDecision "ask"
	allow    bool   // permissionDecision "allow"
	contexts []hookContext
}

type hookContext struct{ source, text string }

// hookJSON is the JSON a hook may print on stdout.
type hookJSON struct {
	Continue           *bool  `json:"continue"`
	StopReason         string `json:"stopReason"`
	Decision           string `json:"decision"`
	Reason             string `json:"reason"`
	HookSpecificOutput *struct {
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
		AdditionalContext        string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// hookRunner runs the lifecycle hooks at a turn's events and records
// them; it owns the once-per-turn marker of an untrusted project hooks file.
type hookRunner struct {
	hooks *hooks.Hooks
	svc   *session.Service
	log   *slog.Logger
	dirs  workDirs
	// untrustedReported dedups hook_untrusted events (session/turn).
	untrustedReported memo[bool]
}

// persist appends one event (see Engine.persist).
func (hr *hookRunner) persist(ctx context.Context, sessionID string, t core.EventType, payload any) error {
	return appendEvent(ctx, hr.svc, sessionID, t, payload)
}

// runHooks runs every hook of event that matches tool, in order, and
// records hook_started/hook_finished. Hooks never fail the turn: errors
// and unknown exit codes are logged and recorded, non-blocking.
func (hr *hookRunner) runHooks(ctx context.Context, s core.Session, turnID, event string, in core.HookInput) hookDecision {
	var d hookDecision
	h := hr.hooks
	if !h.Runs() {
		return d
	}
	pctx := context.WithoutCancel(ctx)
	cfg, err := h.Config(pctx)
	if err != nil {
		hr.log.Warn("hooks document unusable; no hooks run", "err", err)
		return d
	}
	ms := cfg[event]
	if s.ProjectID != "" {
		ms = append(slices.Clip(ms), hr.projectHooks(pctx, s, turnID, event)...)
	}
	if len(ms) == 0 {
		return d
	}
	dir, err := hr.dirs.workDir(pctx, s)
	if err != nil {
		hr.log.Warn("hooks: no working directory", "session_id", s.ID, "err", err)
		return d
	}
	in.SessionID, in.Cwd, in.HookEventName, in.TurnID, in.ProjectID = s.ID, dir, event, turnID, s.ProjectID
	input, _ := json.Marshal(in)
	for _, m := range ms {
		if !m.Matches(in.ToolName) {
			continue
		}
		for _, hc := range m.Hooks {
			timeout := core.DefaultHookTimeout
			if hc.Timeout > 0 {
				timeout = time.Duration(hc.Timeout * float64(time.Second))
			}
			_ = hr.persist(pctx, s.ID, core.EventHookStarted, core.HookStartedPayload{TurnID: turnID, Event: event, Command: hc.Command, Tool: in.ToolName})
			start := time.Now()
			hctx, sp := telemetry.Start(ctx, telemetry.SpanHook, telemetry.String("foya.hook.event", event))
			out := h.Run(hctx, core.HookRun{Command: hc.Command, Timeout: timeout, Dir: dir, SessionID: s.ID, Input: input})
			hookRan(sp, event, out)
			fin := core.HookFinishedPayload{
				TurnID: turnID, Event: event, Command: hc.Command, Tool: in.ToolName,
				ExitCode: out.ExitCode, DurationMs: time.Since(start).Milliseconds(), TimedOut: out.TimedOut,
				Stdout: core.Truncate(out.Stdout, hookEventOutput, truncatedMark), Stderr: core.Truncate(out.Stderr, hookEventOutput, truncatedMark),
			}
			if out.Err != nil {
				fin.Error = out.Err.Error()
			}
			_ = hr.persist(pctx, s.ID, core.EventHookFinished, fin)
			hr.applyHook(&d, event, hc.Command, out)
		}
	}
	return d
}

func (hr *hookRunner) applyHook(d *hookDecision, event, command string, out core.HookOutcome) {
	source := "hook " + event + ": " + command
	switch {
	case out.Err != nil || out.TimedOut:
		hr.log.Warn("hook failed (non-blocking)", "event", event, "command", command, "timed_out", out.TimedOut, "err", out.Err)
		return
	case out.ExitCode == 2:
		d.block = true
		d.reason = joinReason(d.reason, strings.TrimSpace(out.Stderr))
		return
	case out.ExitCode != 0:
		hr.log.Warn("hook exited non-zero (non-blocking)", "event", event, "command", command, "exit_code", out.ExitCode, "stderr", core.Truncate(out.Stderr, 500, truncatedMark))
		return
	}
	stdout := strings.TrimSpace(out.Stdout)
	var j hookJSON
	if strings.HasPrefix(stdout, "{") && json.Unmarshal([]byte(stdout), &j) == nil {
		if j.Continue != nil && !*j.Continue {
			d.block = true
			d.reason = joinReason(d.reason, j.StopReason)
		}
		switch j.Decision {
		case "block", "deny":
			d.block = true
			d.reason = joinReason(d.reason, j.Reason)
		case "approve", "allow":
			d.allow = true
		}
		if hs := j.HookSpecificOutput; hs != nil {
			switch hs.PermissionDecision {
			case "deny":
				d.block = true
				d.reason = joinReason(d.reason, cmp.Or(hs.PermissionDecisionReason, j.Reason))
			case "ask":
				d.ask = true
			case "allow":
				d.allow = true
			}
			if c := strings.TrimSpace(hs.AdditionalContext); c != "" {
				d.contexts = append(d.contexts, hookContext{source, c})
			}
		}
		return
	}
	if stdout != "" && (event == hooks.HookUserPromptSubmit || event == hooks.HookSessionStart) {
		d.contexts = append(d.contexts, hookContext{source, stdout})
	}
}

func joinReason(a, b string) string {
	switch {
	case b == "":
		return a
	case a == "":
		return b
	}
	return a + "\n" + b
}

// persistHookContext records additional context as system messages with
// the hook as source (MSG-1).
func (hr *hookRunner) persistHookContext(ctx context.Context, sessionID, turnID string, cs []hookContext) {
	for _, c := range cs {
		m := core.Message{Role: core.RoleSystem, Text: c.text, Source: c.source, TurnID: turnID}
		if err := hr.persist(ctx, sessionID, core.EventMessageEnd, core.MessagePayload{Message: m}); err != nil {
			hr.log.Warn("record hook context", "session_id", sessionID, "err", err)
		}
	}
}

// isFirstTurn reports whether msgs, a session's history, holds no message
// of a turn other than turnID.
func isFirstTurn(msgs []core.Message, turnID string) bool {
	for _, m := range msgs {
		if m.TurnID != "" && m.TurnID != turnID {
			return false
		}
	}
	return true
}

// forgetUntrusted drops the once-per-turn hook_untrusted marker of a turn
// that ended, so the dedup map does not grow with every turn.
func (hr *hookRunner) forgetUntrusted(sessionID, turnID string) {
	hr.untrustedReported.delete(sessionID + "/" + turnID)
}

// projectHooks returns the matchers of event in the session's project
// hooks file when it is trusted; otherwise it reports the file (once per
// turn) and returns none.
func (hr *hookRunner) projectHooks(ctx context.Context, s core.Session, turnID, event string) []hooks.HookMatcher {
	p, err := hr.svc.Project(ctx, s.ProjectID)
	if err != nil {
		return nil
	}
	ph, err := hr.hooks.ProjectState(ctx, p.Path)
	if err != nil || !ph.Present {
		return nil
	}
	if !ph.Trusted {
		key := s.ID + "/" + turnID
		seen, _ := hr.untrustedReported.swap(key, true)
		if !seen {
			hr.log.Warn("project hooks not run: the project is not trusted", "path", ph.Path, "changed", ph.Changed)
			_ = hr.persist(ctx, s.ID, core.EventHookUntrusted, core.HookUntrustedPayload{TurnID: turnID, Event: event, Path: ph.Path, Changed: ph.Changed})
		}
		return nil
	}
	cfg, err := hooks.ParseHookConfig(ph.Document)
	if err != nil {
		return nil
	}
	return cfg[event]
}
