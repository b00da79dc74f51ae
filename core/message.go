package core

import (
	"encoding/json"
	"time"
)

// Role is who a message speaks for (MSG-1).
type Role string

// Message roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
	// RoleSystem is persistent kernel-made context (e.g. hook context). The
	// per-request system prompt is never stored as a message.
	RoleSystem Role = "system"
)

// Valid reports whether r is one of the four roles.
func (r Role) Valid() bool {
	switch r {
	case RoleUser, RoleAssistant, RoleTool, RoleSystem:
		return true
	}
	return false
}

// TurnStatus is how a turn ended.
type TurnStatus string

// Turn statuses (API TurnStatus).
const (
	TurnCompleted TurnStatus = "completed"
	TurnCancelled TurnStatus = "cancelled"
	TurnFailed    TurnStatus = "failed"
)

// Attachment describes stored bytes (MSG-3). The bytes live in the artifact
// store, addressed by SHA256; messages hold only this reference.
type Attachment struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Kind      string `json:"kind"` // "image" or "file"
	MediaType string `json:"mediaType"`
	Size      int64  `json:"size"`
	Width     int    `json:"width,omitempty"`
	Height    int    `json:"height,omitempty"`
	SHA256    string `json:"sha256"`
}

// BrowserElement is a piece of a web page the user selected (MSG-4). The
// provider view marks it as untrusted, user-selected page data.
type BrowserElement struct {
	URL      string `json:"url"`
	Title    string `json:"title,omitempty"`
	Tag      string `json:"tag,omitempty"`
	Selector string `json:"selector,omitempty"`
	Text     string `json:"text,omitempty"`
	HTML     string `json:"html,omitempty"`
}

// ToolCall is one call the model asked for (MSG-6): id, tool name and the
// complete JSON input.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// FileAction is what a tool did to a file.
type FileAction string

// File actions.
const (
	FileCreate FileAction = "create"
	FileModify FileAction = "modify"
	FileDelete FileAction = "delete"
)

// FileChange records one file a tool changed, with the content hashes of the
// before and after bytes kept in the artifact store (needed by rewind).
type FileChange struct {
	// Path is relative to the session's working directory, with / separators.
	Path       string     `json:"path"`
	Action     FileAction `json:"action"`
	BeforeHash string     `json:"beforeHash,omitempty"`
	AfterHash  string     `json:"afterHash,omitempty"`
	// BytesMissing is set when the before or after bytes could not be kept
	// (too large); rewind cannot restore such a change.
	BytesMissing bool `json:"bytesMissing,omitempty"`
}

// Message is one complete history message. The struct is the canonical
// payload of message_end and message_imported events; it is decoupled from
// any provider SDK type. Fields that do not apply to a role stay empty.
type Message struct {
	// Seq is the event_seq of the event that persisted the message (MSG-10).
	// It comes from the projection and is not part of the payload.
	Seq int64 `json:"-"`
	// Active is false once a rewind removed the message from the projection.
	Active bool `json:"-"`

	Role Role   `json:"role"`
	Text string `json:"text,omitempty"`

	// User input (MSG-2).
	Command         string           `json:"command,omitempty"`
	Attachments     []Attachment     `json:"attachments,omitempty"`
	BrowserElements []BrowserElement `json:"browserElements,omitempty"`

	// Assistant (MSG-5). Reasoning is display-only unless Interrupted.
	Reasoning   string     `json:"reasoning,omitempty"`
	ToolCalls   []ToolCall `json:"toolCalls,omitempty"`
	TurnID      string     `json:"turnId,omitempty"`
	TurnStatus  TurnStatus `json:"turnStatus,omitempty"`
	TurnReason  string     `json:"turnReason,omitempty"`
	StartedAt   *time.Time `json:"startedAt,omitempty"`
	FinishedAt  *time.Time `json:"finishedAt,omitempty"`
	Interrupted bool       `json:"interrupted,omitempty"`
	Model       string     `json:"model,omitempty"`
	// ProviderState is the provider-native state (PRV-6, PRV-10) returned
	// with this reply, e.g. signed thinking blocks or encrypted reasoning
	// items. It is handed back only on the route that produced it and is
	// never shown to clients (see ClientPayload).
	ProviderState *ProviderState `json:"providerState,omitempty"`

	// Tool result (MSG-7).
	ToolCallID  string       `json:"toolCallId,omitempty"`
	ToolName    string       `json:"toolName,omitempty"`
	IsError     bool         `json:"isError,omitempty"`
	FileChanges []FileChange `json:"fileChanges,omitempty"`
	// Diff is a UI-only unified diff; never sent to a model.
	Diff string `json:"diff,omitempty"`
	// StructuredContent is a tool's structured (JSON) result, kept for
	// clients; the model reads the text.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
}

// UserInput is what a client sends (MSG-2).
type UserInput struct {
	Text            string
	Command         string
	AttachmentIDs   []string
	BrowserElements []BrowserElement
}
