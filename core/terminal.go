package core

import (
	"context"
	"io"
	"time"
)

// Terminal event types: terminal_started and terminal_exited are persisted;
// terminal_output carries new output live and is never stored.
const (
	EventTerminalStarted EventType = "terminal_started"
	EventTerminalExited  EventType = "terminal_exited"
	EventTerminalOutput  EventType = "terminal_output"
)

// TerminalStatus is where a background terminal stands.
type TerminalStatus string

// Terminal statuses.
const (
	TerminalRunning TerminalStatus = "running"
	TerminalExited  TerminalStatus = "exited"
	TerminalKilled  TerminalStatus = "killed"
)

// Terminal is one background command of a session: started by the model
// (terminal_start) or a client, it outlives the call and the turn that
// started it and ends when it exits, is killed, its session is deleted or
// the kernel stops (docs/terminals.md).
type Terminal struct {
	ID        string         `json:"id"`
	SessionID string         `json:"sessionId"`
	Command   string         `json:"command"`
	Cwd       string         `json:"cwd"`
	Status    TerminalStatus `json:"status"`
	// ExitCode is set once the command ended on its own (-1: a signal).
	ExitCode  *int       `json:"exitCode,omitempty"`
	StartedAt time.Time  `json:"startedAt"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
	// OutputBytes counts every byte of output so far; DroppedBytes those
	// no longer kept (the buffer holds the last ones only).
	OutputBytes  int64 `json:"outputBytes"`
	DroppedBytes int64 `json:"droppedBytes"`
	// ToolCallID is the call that started it, when a model did.
	ToolCallID string `json:"toolCallId,omitempty"`
}

// TerminalOutput is a slice of a terminal's output: bytes from Offset
// (counted from the first byte the terminal ever wrote) to NextOffset.
// Dropped counts bytes between the asked offset and Offset that the buffer
// no longer holds.
type TerminalOutput struct {
	Text       string
	Offset     int64
	NextOffset int64
	Dropped    int64
	// More says more output is already buffered past NextOffset.
	More     bool
	Terminal Terminal
}

// TerminalStart is what starting a terminal needs.
type TerminalStart struct {
	SessionID string
	Command   string
	// Dir is the absolute working directory, inside the session's scope.
	Dir string
	// ScopeDir is the session's scope (the writable root).
	ScopeDir string
	// Env are extra environment variables for the command.
	Env        map[string]string
	ToolCallID string
}

// TerminalStartedPayload is the payload of terminal_started.
type TerminalStartedPayload struct {
	Terminal Terminal `json:"terminal"`
}

// TerminalExitedPayload is the payload of terminal_exited: the terminal
// at its end and the artifact (sha256) holding the last part of its
// output.
type TerminalExitedPayload struct {
	Terminal     Terminal `json:"terminal"`
	OutputSHA256 string   `json:"outputSha256,omitempty"`
}

// TerminalOutputPayload is the payload of the live terminal_output event:
// Text is the output from Offset on.
type TerminalOutputPayload struct {
	TerminalID string `json:"terminalId"`
	Offset     int64  `json:"offset"`
	Text       string `json:"text"`
}

// TerminalProcess is one running terminal command, started by a
// TerminalLauncher. Output yields its combined stdout and stderr until it
// ends (then io.EOF); Wait returns its exit code (-1 when a signal ended it).
type TerminalProcess interface {
	Output() io.Reader
	Input() io.WriteCloser
	// Signal sends sig (a name such as "TERM", "INT", "KILL") to every
	// process of the terminal.
	Signal(sig string) error
	Wait() (exitCode int, err error)
}

// TerminalLauncher starts terminal commands under the same confinement as
// the bash tool (plugins/terminal).
type TerminalLauncher interface {
	StartTerminal(ctx context.Context, spec TerminalStart) (TerminalProcess, error)
}

// Terminals is the kernel's terminal service (core/terminal) as the engine
// and the GraphQL layer use it.
type Terminals interface {
	Start(ctx context.Context, spec TerminalStart) (Terminal, error)
	// Read returns output after afterOffset, waiting up to wait for some
	// when there is none yet, at most limit bytes (0: the default).
	Read(ctx context.Context, sessionID, id string, afterOffset int64, limit int, wait time.Duration) (TerminalOutput, error)
	Write(ctx context.Context, sessionID, id, input string) error
	// Kill signals the terminal (default KILL) and, for KILL, waits for it
	// to end.
	Kill(ctx context.Context, sessionID, id, signal string) (Terminal, error)
	List(sessionID string) []Terminal
	// KillSession kills every running terminal of a session.
	KillSession(ctx context.Context, sessionID string) int
	// Forget kills a deleted session's terminals without recording events
	// and forgets them.
	Forget(sessionID string)
}
