package core

// AgentSnapshot is the agent definition a child session was created with
// (SES-12). It is stored in the child's metadata at creation and never
// changes, whatever happens to the definition later.
type AgentSnapshot struct {
	Name         string `json:"name"`
	Description  string `json:"description,omitempty"`
	Instructions string `json:"instructions,omitempty"`
	// Tools lists the tools the agent may use. A definition without a
	// tools: list is frozen at the child's creation to the tools that
	// existed then (SES-12); empty (snapshots stored before that) means
	// every tool but task (children do not start children).
	Tools    []string `json:"tools,omitempty"`
	MaxTurns int      `json:"maxTurns,omitempty"`
	// Model is "CONNECTION_ID/MODEL", or empty for the parent's model.
	Model string `json:"model,omitempty"`
	// ContextSeqs are the seqs of the parent's messages the task call handed
	// the child before its prompt (MSG-10), in order.
	ContextSeqs []int64 `json:"contextSeqs,omitempty"`
}
