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
	// Truncated marks a call whose arguments passed the kernel's cap
	// (OutputLimits.ToolArgsBytes): Input holds the first bytes as a JSON
	// string, and the call was refused, never run.
	Truncated bool `json:"truncated,omitempty"`
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
	// BeforeMode is the permission bits (0 to 0777) of the file before the
	// change, which a rewind restores with its content. 0 means not
	// recorded (a change recorded before kernels kept it, or a create):
	// a rewind then keeps the mode the file has, or uses 0644 for a file
	// it creates.
	BeforeMode uint32 `json:"beforeMode,omitempty"`
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
	// Source names what made a system message, e.g. "hook UserPromptSubmit: ./check.sh".
	Source string `json:"source,omitempty"`

	// User input (MSG-2).
	Command         string           `json:"command,omitempty"`
	Attachments     []Attachment     `json:"attachments,omitempty"`
	BrowserElements []BrowserElement `json:"browserElements,omitempty"`

	// Assistant (MSG-5). Reasoning is display-only unless Interrupted.
	Reasoning  string     `json:"reasoning,omitempty"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	TurnID     string     `json:"turnId,omitempty"`
	TurnStatus TurnStatus `json:"turnStatus,omitempty"`
	TurnReason string     `json:"turnReason,omitempty"`
	// StartedAt and FinishedAt are the times of this message's model request.
	StartedAt  *time.Time `json:"startedAt,omitempty"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	// TurnStartedAt is when the message's turn started (every message a turn
	// records carries it); TurnFinishedAt is when the turn ended, recorded on
	// the message that ended it (the one with TurnStatus). FillTurnTimes
	// copies it to the turn's other messages for display (MSG-5).
	TurnStartedAt  *time.Time `json:"turnStartedAt,omitempty"`
	TurnFinishedAt *time.Time `json:"turnFinishedAt,omitempty"`
	Interrupted    bool       `json:"interrupted,omitempty"`
	// Truncated marks an assistant message cut at an output cap
	// (OutputLimits): its text, reasoning or a tool call's arguments stop
	// at the cap.
	Truncated bool   `json:"truncated,omitempty"`
	Model     string `json:"model,omitempty"`
	// Segments record the order in which reasoning, text and tool calls
	// streamed (MSG-11): a display projection kept with the message, never
	// sent to a model. Absent on messages recorded before it existed.
	Segments []Segment `json:"segments,omitempty"`
	// ProviderState is the provider-native state (PRV-6, PRV-10) returned
	// with this reply, e.g. signed thinking blocks or encrypted reasoning
	// items. It is handed back only on the route that produced it and is
	// never shown to clients (see ClientPayload).
	ProviderState *ProviderState `json:"providerState,omitempty"`
	// FinishReason is why the model stopped this reply, as its provider
	// normalized it (stop, length, tool_calls, content_filter, refusal, or
	// the service's own word); empty when the reply failed or was cut off.
	// Refusal is the service's explanation of a refusal when it sent one
	// apart from the text.
	FinishReason string `json:"finishReason,omitempty"`
	Refusal      string `json:"refusal,omitempty"`

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

	// TextBytes is the size of the whole text when Text holds only its
	// beginning (a live event's cut message, see LiveMessageTextBytes); 0
	// when Text is whole. Never stored.
	TextBytes int `json:"-"`
}

// Segment is one run of an assistant message's stream: a byte range of
// Reasoning or Text, or one tool call.
type Segment struct {
	Kind       string `json:"kind"` // SegmentReasoning, SegmentText or SegmentToolCall
	Start      int    `json:"start,omitempty"`
	End        int    `json:"end,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
}

// Segment kinds.
const (
	SegmentReasoning = "reasoning"
	SegmentText      = "text"
	SegmentToolCall  = "tool_call"
)

// UserInput is what a client sends (MSG-2).
type UserInput struct {
	Text            string
	Command         string
	AttachmentIDs   []string
	BrowserElements []BrowserElement
}

// FillTurnTimes sets TurnStartedAt and TurnFinishedAt on every message of
// a turn from the messages that recorded them (events are immutable, so the
// turn's earlier messages could not carry its end when they were written).
// msgs is changed in place.
func FillTurnTimes(msgs []Message) {
	type span struct{ start, end *time.Time }
	turns := map[string]*span{}
	for i := range msgs {
		m := &msgs[i]
		if m.TurnID == "" {
			continue
		}
		sp := turns[m.TurnID]
		if sp == nil {
			sp = &span{}
			turns[m.TurnID] = sp
		}
		if sp.start == nil && m.TurnStartedAt != nil {
			sp.start = m.TurnStartedAt
		}
		if m.TurnFinishedAt != nil {
			sp.end = m.TurnFinishedAt
		}
	}
	for i := range msgs {
		m := &msgs[i]
		sp := turns[m.TurnID]
		if sp == nil {
			continue
		}
		if m.TurnStartedAt == nil && sp.start != nil {
			t := *sp.start
			m.TurnStartedAt = &t
		}
		if m.TurnFinishedAt == nil && sp.end != nil {
			t := *sp.end
			m.TurnFinishedAt = &t
		}
	}
}

// MaxFileChangePath bounds the path of one recorded file change (PATH_MAX).
const MaxFileChangePath = 4096
