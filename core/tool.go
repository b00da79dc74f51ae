package core

import (
	"context"
	"encoding/json"
)

// ToolInfo describes one tool a tool runner offers.
type ToolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	// ReadOnly tools never change files or other state; they may run
	// without approval and in parallel.
	ReadOnly bool `json:"readOnly"`
}

// ToolCallRequest is one tool call to run.
type ToolCallRequest struct {
	SessionID  string
	WorkDir    string
	ToolCallID string
	Name       string
	Input      json.RawMessage
}

// ToolResult is what a tool returned (MSG-7). IsError marks a failure the
// model should see; a Go error from Call means the tool could not run at all.
type ToolResult struct {
	Text    string
	IsError bool
}

// ToolRunner runs tools, typically an out-of-process tool plugin. Call
// honours ctx cancellation.
type ToolRunner interface {
	Tools(ctx context.Context) ([]ToolInfo, error)
	Call(ctx context.Context, req ToolCallRequest) (ToolResult, error)
}
