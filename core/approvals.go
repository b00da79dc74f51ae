package core

import (
	"encoding/json"
)

// ApprovalDecision is a person's answer to an approval request.
type ApprovalDecision string

// Approval decisions.
const (
	ApprovalApproved           ApprovalDecision = "approved"
	ApprovalApprovedForSession ApprovalDecision = "approved_for_session"
	ApprovalDenied             ApprovalDecision = "denied"
	// ApprovalCancelled ends a request nobody decided before its turn
	// stopped; it appears only in approval_resolved and is never accepted
	// from a client.
	ApprovalCancelled ApprovalDecision = "cancelled"
)

// ApprovalPayload is the payload of approval_requested and approval_resolved.
type ApprovalPayload struct {
	RequestID  string           `json:"requestId"`
	ToolCallID string           `json:"toolCallId"`
	Tool       string           `json:"tool"`
	Action     string           `json:"action"`
	Summary    string           `json:"summary"`
	Input      json.RawMessage  `json:"input,omitempty"`
	Decision   ApprovalDecision `json:"decision,omitempty"`
	// ChildSessionID is set on the copy recorded in a parent session's log:
	// the request belongs to that sub-agent child session (SES-12).
	ChildSessionID string `json:"childSessionId,omitempty"`
}

// QuestionPayload is the payload of question_requested and question_answered.
type QuestionPayload struct {
	RequestID  string `json:"requestId"`
	ToolCallID string `json:"toolCallId"`
	Question   string `json:"question"`
	Answer     string `json:"answer,omitempty"`
	// Cancelled is set on the question_answered that ends a question nobody
	// answered before its turn stopped.
	Cancelled bool `json:"cancelled,omitempty"`
	// ChildSessionID: as on ApprovalPayload.
	ChildSessionID string `json:"childSessionId,omitempty"`
	// Elicitation is set when an MCP server asks (elicitation/create): its
	// fields or URL. Action (accept, decline or cancel) and Content (the
	// accepted fields) are set on its question_answered.
	Elicitation *Elicitation   `json:"elicitation,omitempty"`
	Action      string         `json:"action,omitempty"`
	Content     map[string]any `json:"content,omitempty"`
}
