package sdk

import (
	"context"
	"encoding/json"
	"time"
)

// Tool describes one tool of a tool set.
type Tool struct {
	Name        string
	Description string
	// Schema is the JSON schema of the tool's input.
	Schema   json.RawMessage
	ReadOnly bool
}

// ToolSetInfo describes a tool plugin.
type ToolSetInfo struct {
	Version string
	Tools   []Tool
	// Sandbox says how the processes the tools start are confined:
	// "landlock" or "none"; empty means the plugin does not say (the
	// kernel shows "none"). SandboxDetail explains it for people.
	Sandbox       string
	SandboxDetail string
}

// ToolCallRequest is one call to run.
type ToolCallRequest struct {
	SessionID  string
	WorkDir    string
	ToolCallID string
	Name       string
	Input      json.RawMessage
	// ScopeDir is the only directory file tools and commands may touch; a
	// tool that touches files must refuse to run without it.
	ScopeDir string
	// Timeout bounds the whole call; zero means the tool's own default.
	Timeout time.Duration
}

// ToolResult is a tool's answer. Report failures the model should see with
// IsError; return a Go error only when the tool could not run at all.
type ToolResult struct {
	Text    string
	IsError bool
	// FileChanges lists the files the call created, modified or deleted.
	FileChanges []FileChange
	// Diff is a UI-only unified diff of FileChanges; never sent to a model.
	Diff string
	// Attachment is optional content for the model, e.g. an image read.
	Attachment *Attachment
	// Note is a free-text remark on how the result was produced.
	Note string
}

// FileAction is what a tool did to a file.
type FileAction string

// File actions.
const (
	FileCreate FileAction = "create"
	FileModify FileAction = "modify"
	FileDelete FileAction = "delete"
)

// FileChange is one file a tool call changed. Before is nil for a create,
// After for a delete. The hashes are lowercase sha256 hex of the full
// contents, set whenever that side exists; TooLarge says Before/After were
// left out because the file is over the plugin's size cap.
type FileChange struct {
	Path         string // relative to ScopeDir, slash-separated
	Action       FileAction
	Before       []byte
	After        []byte
	BeforeSHA256 string
	AfterSHA256  string
	TooLarge     bool
	// BeforeMode is the permission bits (0 to 0777) of the file before the
	// change, restored with it by a rewind; 0 for a create or unknown.
	BeforeMode uint32
}

// Attachment is content a tool hands the model besides text.
type Attachment struct {
	Name      string
	MediaType string
	Data      []byte
}

// ToolSet is what a tool plugin implements. Call must return promptly when
// ctx is cancelled.
type ToolSet interface {
	Describe(ctx context.Context) (ToolSetInfo, error)
	Call(ctx context.Context, req ToolCallRequest) (ToolResult, error)
}
