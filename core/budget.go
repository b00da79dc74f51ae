package core

import ()

// ContextUsage is what a session's next request is estimated to take.
type ContextUsage struct {
	Tokens int64
	Limit  int64
	// Estimated is true when no real provider usage anchors the figure.
	Estimated bool
}
