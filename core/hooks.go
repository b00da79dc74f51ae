package core

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Hook events, named as in Claude Code's settings.
const (
	HookSessionStart     = "SessionStart"
	HookUserPromptSubmit = "UserPromptSubmit"
	HookPreToolUse       = "PreToolUse"
	HookPostToolUse      = "PostToolUse"
	HookStop             = "Stop"
	HookSubagentStop     = "SubagentStop"
	HookPreCompact       = "PreCompact"
)

// HookEvents lists the events a hooks document may name.
var HookEvents = []string{HookSessionStart, HookUserPromptSubmit, HookPreToolUse, HookPostToolUse, HookStop, HookSubagentStop, HookPreCompact}

// Hook limits.
const (
	DefaultHookTimeout = 60 * time.Second
	MaxHookTimeout     = 600 * time.Second
	// HookOutputLimit caps what is kept of a hook's stdout and of its stderr.
	HookOutputLimit = 64 << 10
	// MaxStopContinuations bounds how often Stop hooks may send the model
	// back to work within one turn.
	MaxStopContinuations = 3
)

// hookEventOutput caps the output copied into hook_finished events.
const hookEventOutput = 2 << 10

// HookCommand is one configured command.
type HookCommand struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	// Timeout is in seconds; 0 means DefaultHookTimeout.
	Timeout float64 `json:"timeout,omitempty"`
}

// HookMatcher groups commands under a tool-name regex (PreToolUse,
// PostToolUse); other events ignore the matcher.
type HookMatcher struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []HookCommand `json:"hooks"`
}

// HookConfig is a hooks document: event name → matchers.
type HookConfig map[string][]HookMatcher

// ParseHookConfig validates a hooks document in Claude Code's format. The
// error is BAD_INPUT and names the offending path.
func ParseHookConfig(raw []byte) (HookConfig, error) {
	bad := func(path, format string, args ...any) error {
		return &Error{Code: CodeBadInput, Message: "hooks" + path + ": " + fmt.Sprintf(format, args...)}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return nil, bad("", "must be a JSON object of event name → matcher list")
	}
	// Accept a whole Claude Code settings object too ({"hooks": {...}}).
	if inner, ok := top["hooks"]; ok && len(top) == 1 {
		top = nil
		if err := json.Unmarshal(inner, &top); err != nil || top == nil {
			return nil, bad(".hooks", "must be a JSON object of event name → matcher list")
		}
	}
	cfg := HookConfig{}
	for ev, v := range top {
		p := "." + ev
		if !slices.Contains(HookEvents, ev) {
			return nil, bad(p, "unknown event %q; events are %s", ev, strings.Join(HookEvents, ", "))
		}
		var ms []json.RawMessage
		if err := json.Unmarshal(v, &ms); err != nil {
			return nil, bad(p, "must be a list of {matcher, hooks}")
		}
		for i, mraw := range ms {
			mp := fmt.Sprintf("%s[%d]", p, i)
			var m struct {
				Matcher *string           `json:"matcher"`
				Hooks   []json.RawMessage `json:"hooks"`
			}
			if err := json.Unmarshal(mraw, &m); err != nil {
				return nil, bad(mp, "must be an object {\"matcher\": string, \"hooks\": [...]}")
			}
			hm := HookMatcher{}
			if m.Matcher != nil {
				hm.Matcher = *m.Matcher
				if _, err := compileMatcher(hm.Matcher); err != nil {
					return nil, bad(mp+".matcher", "not a valid regular expression: %v", err)
				}
			}
			if len(m.Hooks) == 0 {
				return nil, bad(mp+".hooks", "must list at least one hook")
			}
			for j, hraw := range m.Hooks {
				hp := fmt.Sprintf("%s.hooks[%d]", mp, j)
				var h HookCommand
				if err := json.Unmarshal(hraw, &h); err != nil {
					return nil, bad(hp, "must be {\"type\": \"command\", \"command\": string, \"timeout\": seconds}")
				}
				if h.Type != "command" {
					return nil, bad(hp+".type", "must be \"command\" (got %q)", h.Type)
				}
				if strings.TrimSpace(h.Command) == "" {
					return nil, bad(hp+".command", "must not be empty")
				}
				if h.Timeout < 0 || time.Duration(h.Timeout*float64(time.Second)) > MaxHookTimeout {
					return nil, bad(hp+".timeout", "must be between 0 and %d seconds", int(MaxHookTimeout/time.Second))
				}
				hm.Hooks = append(hm.Hooks, h)
			}
			cfg[ev] = append(cfg[ev], hm)
		}
	}
	return cfg, nil
}

func compileMatcher(m string) (*regexp.Regexp, error) {
	if m == "" || m == "*" {
		return nil, nil
	}
	return regexp.Compile("^(?:" + m + ")$")
}

// matches reports whether the matcher applies to tool (always for events
// without a tool).
func (m HookMatcher) matches(tool string) bool {
	if tool == "" {
		return true
	}
	re, err := compileMatcher(m.Matcher)
	if err != nil {
		return false
	}
	return re == nil || re.MatchString(tool)
}

// HookStore keeps the kernel-wide hooks document and the trusted project
// hooks files.
type HookStore interface {
	// LoadHooks returns the document, or nil when there is none.
	LoadHooks(ctx context.Context) ([]byte, error)
	SaveHooks(ctx context.Context, data []byte) error
	// LoadTrust returns project path → sha256 (hex) of its trusted
	// .foya/hooks.json.
	LoadTrust(ctx context.Context) (map[string]string, error)
	SaveTrust(ctx context.Context, trust map[string]string) error
}

// ProjectHooksFile is a project's hooks document, relative to its root.
const ProjectHooksFile = ".foya/hooks.json"

// ProjectHooks is the state of a project's hooks file.
type ProjectHooks struct {
	Path    string
	Present bool
	// Trusted says the file's current content was trusted; Changed says
	// an earlier content was trusted and the file has changed since.
	Trusted, Changed bool
	Document         json.RawMessage
	hash             string
}

func hashHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ProjectState reads the hooks file of the project rooted at root.
func (h *Hooks) ProjectState(ctx context.Context, root string) (ProjectHooks, error) {
	ph := ProjectHooks{Path: filepath.Join(root, ProjectHooksFile)}
	data, err := os.ReadFile(ph.Path)
	if errors.Is(err, os.ErrNotExist) {
		return ph, nil
	}
	if err != nil {
		return ph, fmt.Errorf("read project hooks: %w", err)
	}
	ph.Present, ph.Document, ph.hash = true, data, hashHex(data)
	if h == nil || h.store == nil {
		return ph, nil
	}
	trust, err := h.store.LoadTrust(ctx)
	if err != nil {
		return ph, err
	}
	if t, ok := trust[root]; ok {
		ph.Trusted, ph.Changed = t == ph.hash, t != ph.hash
	}
	return ph, nil
}

// Trust records the current content of the project's hooks file as
// trusted; a later change needs trust again.
func (h *Hooks) Trust(ctx context.Context, root string) (ProjectHooks, error) {
	if h == nil || h.store == nil {
		return ProjectHooks{}, &Error{Code: CodeUnavailable, Message: "hooks are not configured on this kernel"}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	ph, err := h.ProjectState(ctx, root)
	if err != nil {
		return ph, err
	}
	if !ph.Present {
		return ph, &Error{Code: CodeNotFound, Message: fmt.Sprintf("the project has no hooks file (%s)", ph.Path)}
	}
	if _, err := ParseHookConfig(ph.Document); err != nil {
		return ph, &Error{Code: CodeBadInput, Message: fmt.Sprintf("%s is not a valid hooks document: %s", ph.Path, ErrorMessage(err))}
	}
	trust, err := h.store.LoadTrust(ctx)
	if err != nil {
		return ph, err
	}
	if trust == nil {
		trust = map[string]string{}
	}
	trust[root] = ph.hash
	if err := h.store.SaveTrust(ctx, trust); err != nil {
		return ph, fmt.Errorf("save hook trust: %w", err)
	}
	ph.Trusted, ph.Changed = true, false
	return ph, nil
}

// HookRun is one command to run.
type HookRun struct {
	Command   string
	Timeout   time.Duration
	Dir       string // the session's working directory
	SessionID string
	Input     []byte // the JSON object written to stdin
}

// HookOutcome is what a command did.
type HookOutcome struct {
	ExitCode int
	Stdout   string // capped at HookOutputLimit
	Stderr   string // capped at HookOutputLimit
	TimedOut bool
	// Err is set when the command could not run at all.
	Err error
}

// HookRunner runs hook commands confined like tools (outside core).
type HookRunner interface {
	RunHook(ctx context.Context, r HookRun) HookOutcome
}

// HookInput is the JSON object a hook reads on stdin, with Claude Code's
// field names plus Foya's turn_id and project_id.
type HookInput struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name,omitempty"`
	ToolInput      json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse   json.RawMessage `json:"tool_response,omitempty"`
	Prompt         string          `json:"prompt,omitempty"`
	StopHookActive *bool           `json:"stop_hook_active,omitempty"`
	Source         string          `json:"source,omitempty"`
	Trigger        string          `json:"trigger,omitempty"`
	TurnID         string          `json:"turn_id,omitempty"`
	ProjectID      string          `json:"project_id,omitempty"`
}

// HookStartedPayload is the payload of hook_started.
type HookStartedPayload struct {
	TurnID  string `json:"turnId,omitempty"`
	Event   string `json:"event"`
	Command string `json:"command"`
	Tool    string `json:"tool,omitempty"`
}

// HookFinishedPayload is the payload of hook_finished.
type HookFinishedPayload struct {
	TurnID     string `json:"turnId,omitempty"`
	Event      string `json:"event"`
	Command    string `json:"command"`
	Tool       string `json:"tool,omitempty"`
	ExitCode   int    `json:"exitCode"`
	DurationMs int64  `json:"durationMs"`
	TimedOut   bool   `json:"timedOut,omitempty"`
	Error      string `json:"error,omitempty"`
	Stdout     string `json:"stdout,omitempty"`
	Stderr     string `json:"stderr,omitempty"`
}

// Hooks holds the kernel-wide hooks document and runs its commands.
type Hooks struct {
	store  HookStore
	runner HookRunner
	mu     sync.Mutex
	// The document is read at every event (a hand edit applies at once);
	// its parse, with compiled matchers, is reused while the bytes match.
	parsedRaw []byte
	parsed    HookConfig
}

// NewHooks returns the hooks service; a nil runner means hooks are
// configured but never run.
func NewHooks(store HookStore, runner HookRunner) *Hooks {
	return &Hooks{store: store, runner: runner}
}

// Document returns the kernel-wide hooks document ({} when none).
func (h *Hooks) Document(ctx context.Context) (json.RawMessage, error) {
	if h == nil || h.store == nil {
		return json.RawMessage("{}"), nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	data, err := h.store.LoadHooks(ctx)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return json.RawMessage("{}"), nil
	}
	return data, nil
}

// SetDocument validates and saves the kernel-wide hooks document; it
// returns the normalised document.
func (h *Hooks) SetDocument(ctx context.Context, raw []byte) (json.RawMessage, error) {
	if h == nil || h.store == nil {
		return nil, &Error{Code: CodeUnavailable, Message: "hooks are not configured on this kernel"}
	}
	cfg, err := ParseHookConfig(raw)
	if err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.store.SaveHooks(ctx, data); err != nil {
		return nil, fmt.Errorf("save hooks: %w", err)
	}
	return data, nil
}

func (h *Hooks) config(ctx context.Context) (HookConfig, error) {
	data, err := h.Document(ctx)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.parsed != nil && bytes.Equal(data, h.parsedRaw) {
		return h.parsed, nil
	}
	cfg, err := ParseHookConfig(data)
	if err != nil {
		return nil, err
	}
	h.parsedRaw, h.parsed = bytes.Clone(data), cfg
	return cfg, nil
}

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

// runHooks runs every hook of event that matches tool, in order, and
// records hook_started/hook_finished. Hooks never fail the turn: errors
// and unknown exit codes are logged and recorded, non-blocking.
func (e *Engine) runHooks(ctx context.Context, s Session, turnID, event string, in HookInput) hookDecision {
	var d hookDecision
	h := e.cfg.Hooks
	if !h.Runs() {
		return d
	}
	pctx := context.WithoutCancel(ctx)
	cfg, err := h.config(pctx)
	if err != nil {
		e.log.Warn("hooks document unusable; no hooks run", "err", err)
		return d
	}
	ms := cfg[event]
	if s.ProjectID != "" {
		ms = append(slices.Clip(ms), e.projectHooks(pctx, s, turnID, event)...)
	}
	if len(ms) == 0 {
		return d
	}
	dir, err := e.workDir(pctx, s)
	if err != nil {
		e.log.Warn("hooks: no working directory", "session_id", s.ID, "err", err)
		return d
	}
	in.SessionID, in.Cwd, in.HookEventName, in.TurnID, in.ProjectID = s.ID, dir, event, turnID, s.ProjectID
	input, _ := json.Marshal(in)
	for _, m := range ms {
		if !m.matches(in.ToolName) {
			continue
		}
		for _, hc := range m.Hooks {
			timeout := DefaultHookTimeout
			if hc.Timeout > 0 {
				timeout = time.Duration(hc.Timeout * float64(time.Second))
			}
			_ = e.persist(pctx, s.ID, EventHookStarted, HookStartedPayload{TurnID: turnID, Event: event, Command: hc.Command, Tool: in.ToolName})
			start := time.Now()
			out := h.Run(ctx, HookRun{Command: hc.Command, Timeout: timeout, Dir: dir, SessionID: s.ID, Input: input})
			fin := HookFinishedPayload{
				TurnID: turnID, Event: event, Command: hc.Command, Tool: in.ToolName,
				ExitCode: out.ExitCode, DurationMs: time.Since(start).Milliseconds(), TimedOut: out.TimedOut,
				Stdout: truncateText(out.Stdout, hookEventOutput), Stderr: truncateText(out.Stderr, hookEventOutput),
			}
			if out.Err != nil {
				fin.Error = out.Err.Error()
			}
			_ = e.persist(pctx, s.ID, EventHookFinished, fin)
			e.applyHook(&d, event, hc.Command, out)
		}
	}
	return d
}

func (e *Engine) applyHook(d *hookDecision, event, command string, out HookOutcome) {
	source := "hook " + event + ": " + command
	switch {
	case out.Err != nil || out.TimedOut:
		e.log.Warn("hook failed (non-blocking)", "event", event, "command", command, "timed_out", out.TimedOut, "err", out.Err)
		return
	case out.ExitCode == 2:
		d.block = true
		d.reason = joinReason(d.reason, strings.TrimSpace(out.Stderr))
		return
	case out.ExitCode != 0:
		e.log.Warn("hook exited non-zero (non-blocking)", "event", event, "command", command, "exit_code", out.ExitCode, "stderr", truncateText(out.Stderr, 500))
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
				d.reason = joinReason(d.reason, firstNonEmpty(hs.PermissionDecisionReason, j.Reason))
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
	if stdout != "" && (event == HookUserPromptSubmit || event == HookSessionStart) {
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

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// truncateText is s cut to at most n bytes on a UTF-8 boundary, marked.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return previewText(s, n) + "…[truncated]"
}

// persistHookContext records additional context as system messages with
// the hook as source (MSG-1).
func (e *Engine) persistHookContext(ctx context.Context, sessionID, turnID string, cs []hookContext) {
	for _, c := range cs {
		m := Message{Role: RoleSystem, Text: c.text, Source: c.source, TurnID: turnID}
		if err := e.persist(ctx, sessionID, EventMessageEnd, MessagePayload{Message: m}); err != nil {
			e.log.Warn("record hook context", "session_id", sessionID, "err", err)
		}
	}
}

// isFirstTurn reports whether msgs, a session's history, holds no message
// of a turn other than turnID.
func isFirstTurn(msgs []Message, turnID string) bool {
	for _, m := range msgs {
		if m.TurnID != "" && m.TurnID != turnID {
			return false
		}
	}
	return true
}

// HookUntrustedPayload is the payload of hook_untrusted: a project's hooks
// were not run because the project (or this content of its file) is not
// trusted.
type HookUntrustedPayload struct {
	TurnID  string `json:"turnId,omitempty"`
	Event   string `json:"event"`
	Path    string `json:"path"`
	Changed bool   `json:"changed"`
}

// forgetUntrusted drops the once-per-turn hook_untrusted marker of a turn
// that ended, so the dedup map does not grow with every turn.
func (e *Engine) forgetUntrusted(sessionID, turnID string) {
	e.mu.Lock()
	delete(e.untrustedReported, sessionID+"/"+turnID)
	e.mu.Unlock()
}

// projectHooks returns the matchers of event in the session's project
// hooks file when it is trusted; otherwise it reports the file (once per
// turn) and returns none.
func (e *Engine) projectHooks(ctx context.Context, s Session, turnID, event string) []HookMatcher {
	p, err := e.svc.Project(ctx, s.ProjectID)
	if err != nil {
		return nil
	}
	ph, err := e.cfg.Hooks.ProjectState(ctx, p.Path)
	if err != nil || !ph.Present {
		return nil
	}
	if !ph.Trusted {
		key := s.ID + "/" + turnID
		e.mu.Lock()
		if e.untrustedReported == nil {
			e.untrustedReported = map[string]bool{}
		}
		seen := e.untrustedReported[key]
		e.untrustedReported[key] = true
		e.mu.Unlock()
		if !seen {
			e.log.Warn("project hooks not run: the project is not trusted", "path", ph.Path, "changed", ph.Changed)
			_ = e.persist(ctx, s.ID, EventHookUntrusted, HookUntrustedPayload{TurnID: turnID, Event: event, Path: ph.Path, Changed: ph.Changed})
		}
		return nil
	}
	cfg, err := ParseHookConfig(ph.Document)
	if err != nil {
		return nil
	}
	return cfg[event]
}

// Runs reports whether hooks run at all (a runner is configured).
func (h *Hooks) Runs() bool { return h != nil && h.runner != nil }

// Run runs one hook command through the configured runner.
func (h *Hooks) Run(ctx context.Context, r HookRun) HookOutcome { return h.runner.RunHook(ctx, r) }
