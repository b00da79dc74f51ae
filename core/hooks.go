package core

import (
	"context"
	"encoding/json"
	"time"
)

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

// HookUntrustedPayload is the payload of hook_untrusted: a project's hooks
// were not run because the project (or this content of its file) is not
// trusted.
type HookUntrustedPayload struct {
	TurnID  string `json:"turnId,omitempty"`
	Event   string `json:"event"`
	Path    string `json:"path"`
	Changed bool   `json:"changed"`
}
