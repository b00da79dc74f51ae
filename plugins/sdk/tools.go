package sdk

import (
	"context"
	"encoding/json"
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
}

// ToolCallRequest is one call to run.
type ToolCallRequest struct {
	SessionID  string
	WorkDir    string
	ToolCallID string
	Name       string
	Input      json.RawMessage
}

// ToolResult is a tool's answer. Report failures the model should see with
// IsError; return a Go error only when the tool could not run at all.
type ToolResult struct {
	Text    string
	IsError bool
}

// ToolSet is what a tool plugin implements. Call must return promptly when
// ctx is cancelled.
type ToolSet interface {
	Describe(ctx context.Context) (ToolSetInfo, error)
	Call(ctx context.Context, req ToolCallRequest) (ToolResult, error)
}
