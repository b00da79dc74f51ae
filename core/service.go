package core

import ()

// CreateSessionInput is what a client may set on a new session; all optional.
type CreateSessionInput struct {
	ConnectionID    string
	Model           string
	ProjectID       string
	ApprovalMode    ApprovalMode
	ReasoningEffort string
	Title           string
	AgentMode       AgentMode
	// ParentID, Source and Agent are set by the kernel for child sessions.
	ParentID string
	Source   string
	Agent    *AgentSnapshot
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
}

const MaxTitleLen = 200

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

func ValidTitle(v string) error {
	if len([]rune(v)) > MaxTitleLen {
		return Errorf(CodeBadInput, "title: at most %d characters", MaxTitleLen)
	}
	if msg := DisplayTextProblem(v); msg != "" {
		return Errorf(CodeBadInput, "title: %s", msg)
	}
	return nil
}
