package core

import (
	"context"
	"encoding/json"
	"time"
)

// ToolInfo describes one tool a tool runner offers.
type ToolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	// ReadOnly tools never change files or other state; they may run
	// without approval and in parallel.
	ReadOnly bool `json:"readOnly"`
	// Action classes a tool that is not read-only for approvals and
	// grants: "write" or "command". Empty means "command" for bash and
	// "write" for every other tool.
	Action string `json:"action,omitempty"`
	// Parallel tools may run concurrently with the other calls of one
	// reply even when they are not read-only (each still passes approval
	// on its own), e.g. MCP tools: a model asks for several calls in one
	// reply only when they do not depend on each other.
	Parallel bool `json:"parallel,omitempty"`
}

// ToolCallRequest is one tool call to run.
type ToolCallRequest struct {
	SessionID  string
	WorkDir    string
	ToolCallID string
	Name       string
	Input      json.RawMessage
	// ScopeDir is the only directory file tools and terminal commands may
	// touch (SES-3): the bound project's directory or a per-session scratch
	// dir. File tools refuse to run without it.
	ScopeDir string
	// Timeout bounds the whole call; zero means the tool's own default.
	Timeout time.Duration
}

// ToolResult is what a tool returned (MSG-7). IsError marks a failure the
// model should see; a Go error from Call means the tool could not run at all.
type ToolResult struct {
	Text    string
	IsError bool
	// FileChanges lists the files the call created, modified or deleted.
	FileChanges []ToolFileChange
	// Diff is a UI-only unified diff of FileChanges; never sent to a model.
	Diff string
	// Attachment is optional content for the model, e.g. an image read.
	Attachment *ToolAttachment
	// Attachments is further content for the model, after Attachment.
	Attachments []ToolAttachment
	// Structured is a structured (JSON) result kept on the tool message
	// besides its text, e.g. an MCP tool's structuredContent.
	Structured json.RawMessage
	// Note is a free-text remark on how the result was produced, e.g.
	// "file change detection skipped: more than 5000 files".
	Note string
}

// ToolFileChange is one file a tool call changed, with the bytes needed to
// store it for rewind (SES-11). Before is nil for a create, After for a
// delete. The hashes are lowercase sha256 hex of the full contents and are set
// whenever that side exists, even when TooLarge says the bytes were left out
// (file over the plugin's size cap, 8 MiB for the built-in tools, or the
// call's byte budget ran out). An empty file arrives as nil bytes; the hash
// tells whether that side exists.
type ToolFileChange struct {
	Path         string // relative to the scope dir, slash-separated
	Action       FileAction
	Before       []byte
	After        []byte
	BeforeSHA256 string
	AfterSHA256  string
	TooLarge     bool
	// BeforeMode is the permission bits (0 to 0777) of the file before the
	// change (0: a create, or not said), kept for rewind.
	BeforeMode uint32
}

// ToolAttachment is content a tool hands the model besides text.
type ToolAttachment struct {
	Name      string
	MediaType string
	Data      []byte
}

// ToolRunner runs tools, typically an out-of-process tool plugin. Call
// honours ctx cancellation.
type ToolRunner interface {
	Tools(ctx context.Context) ([]ToolInfo, error)
	Call(ctx context.Context, req ToolCallRequest) (ToolResult, error)
}
