package core

import (
	"time"
)

// Phase is what the kernel is doing with a session (SES-4). Only the kernel
// sets it.
type Phase string

// Phases.
const (
	PhaseIdle       Phase = "idle"
	PhaseTurn       Phase = "turn"
	PhaseCompaction Phase = "compaction"
)

// AgentMode is how the agent may work (SES-5); separate from Phase.
type AgentMode string

// Agent modes.
const (
	AgentExecute              AgentMode = "execute"
	AgentPlan                 AgentMode = "plan"
	AgentAwaitingConfirmation AgentMode = "awaiting_confirmation"
)

// Valid reports whether m is a known agent mode.
func (m AgentMode) Valid() bool {
	switch m {
	case AgentExecute, AgentPlan, AgentAwaitingConfirmation:
		return true
	}
	return false
}

// ApprovalMode is the tool approval policy of a session.
type ApprovalMode string

// Approval modes: explore runs read-only tools and denies the rest; ask runs
// reads and asks for writes and commands; bypass never asks; guarded puts
// what ask would put to a person to the guardian model first, and asks a
// person only when it escalates or fails.
const (
	ApprovalExplore ApprovalMode = "explore"
	ApprovalAsk     ApprovalMode = "ask"
	ApprovalBypass  ApprovalMode = "bypass"
	ApprovalGuarded ApprovalMode = "guarded"
)

// Valid reports whether m is a known approval mode.
func (m ApprovalMode) Valid() bool {
	switch m {
	case ApprovalExplore, ApprovalAsk, ApprovalBypass, ApprovalGuarded:
		return true
	}
	return false
}

// TaskStatus is the state of one task-list item.
type TaskStatus string

// Task statuses.
const (
	TaskPending    TaskStatus = "pending"
	TaskInProgress TaskStatus = "in_progress"
	TaskDone       TaskStatus = "done"
)

// Task is one item of a session's task list (SES-2).
type Task struct {
	ID     string     `json:"id"`
	Text   string     `json:"text"`
	Status TaskStatus `json:"status"`
}

// SessionMeta is the metadata a session event carries (SES-2). Title and
// Pinned never reach a model; connection, project and approval mode shape
// later turns.
type SessionMeta struct {
	ID              string       `json:"id"`
	ParentID        string       `json:"parentId,omitempty"`
	Source          string       `json:"source,omitempty"`
	ProjectID       string       `json:"projectId,omitempty"`
	Title           string       `json:"title,omitempty"`
	Pinned          bool         `json:"pinned,omitempty"`
	ConnectionID    string       `json:"connectionId,omitempty"`
	Model           string       `json:"model,omitempty"`
	ReasoningEffort string       `json:"reasoningEffort,omitempty"`
	ApprovalMode    ApprovalMode `json:"approvalMode"`
	AgentMode       AgentMode    `json:"agentMode"`
	Tasks           []Task       `json:"tasks,omitempty"`
	// Agent is the immutable agent snapshot of a child session (SES-12).
	Agent     *AgentSnapshot `json:"agent,omitempty"`
	CreatedAt time.Time      `json:"createdAt"`
	// FallbackModels is the session's own fallback chain; empty: the
	// LANGUAGE purpose's chain (docs/fallback.md).
	FallbackModels []ModelRef `json:"fallbackModels,omitempty"`
	// Worktree is the git worktree the session works in; nil: the
	// project's directory (docs/worktrees.md).
	Worktree *Worktree `json:"worktree,omitempty"`
}

// The optional text fields of SessionMeta as the API gives them: nil when
// empty. (Plain methods, so that GraphQL resolves them in line: a resolver
// of its own costs each session of a listed page a goroutine per field.)
func (m SessionMeta) TitleOrNil() *string           { return orNil(m.Title) }
func (m SessionMeta) ConnectionIDOrNil() *string    { return orNil(m.ConnectionID) }
func (m SessionMeta) ModelOrNil() *string           { return orNil(m.Model) }
func (m SessionMeta) ReasoningEffortOrNil() *string { return orNil(m.ReasoningEffort) }
func (m SessionMeta) ParentIDOrNil() *string        { return orNil(m.ParentID) }
func (m SessionMeta) SourceOrNil() *string          { return orNil(m.Source) }

func orNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Session is the projected state of a session.
type Session struct {
	SessionMeta
	Phase     Phase
	HeadSeq   int64
	UpdatedAt time.Time
	// UsageTotals is the session's usage as the store read it with the
	// session, when the store keeps the totals with it and they were asked
	// for (SessionStore.Session always, Sessions with SessionFilter.Usage);
	// nil otherwise, and in sessions not read from the store. It is what
	// UsageStore.UsageTotals returns for the session at that moment.
	UsageTotals *Usage
}

// Project is a directory reference (SES-3). Deleting a project never touches
// the directory.
type Project struct {
	ID        string
	Name      string
	Path      string
	CreatedAt time.Time
}

// ProjectInput creates a project.
type ProjectInput struct {
	Name string
	Path string
}

// CreateSessionInput is what a client may set on a new session; all optional.
type CreateSessionInput struct {
	ConnectionID    string
	Model           string
	ProjectID       string
	ApprovalMode    ApprovalMode
	ReasoningEffort string
	Title           string
	AgentMode       AgentMode
	// FallbackModels is the session's own fallback chain (language models).
	FallbackModels []ModelRef
	// ParentID, Source and Agent are set by the kernel for child sessions.
	ParentID string
	Source   string
	Agent    *AgentSnapshot
	// ID and Worktree are set by the kernel for a session created in a git
	// worktree made for it first (core/worktree); empty ID: a new one.
	ID       string
	Worktree *Worktree
}

// UpdateSessionInput changes session settings; nil fields stay as they are.
// Phase is deliberately absent: only the kernel sets it (SES-4).
type UpdateSessionInput struct {
	Title           *string
	Pinned          *bool
	ConnectionID    *string
	Model           *string
	ReasoningEffort *string
	ApprovalMode    *ApprovalMode
	AgentMode       *AgentMode
	ProjectID       *string
	// FallbackModels replaces the session's fallback chain; an empty list
	// clears it (the LANGUAGE chain applies again).
	FallbackModels *[]ModelRef
}

// MaxTitleLen bounds a session title, in characters.
const MaxTitleLen = 200

// ValidReasoningEffort checks a reasoning effort setting.
func ValidReasoningEffort(v string) error {
	if len(v) > 32 {
		return Errorf(CodeBadInput, "reasoningEffort: at most 32 characters (e.g. low, medium, high)")
	}
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return Errorf(CodeBadInput, "reasoningEffort %q: use lowercase letters, digits, '-' or '_' (e.g. low, medium, high)", v)
		}
	}
	return nil
}

// ValidTitle checks a session title.
func ValidTitle(v string) error {
	if len([]rune(v)) > MaxTitleLen {
		return Errorf(CodeBadInput, "title: at most %d characters", MaxTitleLen)
	}
	if msg := DisplayTextProblem(v); msg != "" {
		return Errorf(CodeBadInput, "title: %s", msg)
	}
	return nil
}
