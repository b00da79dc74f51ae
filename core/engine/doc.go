// Package engine runs turns: the per-session queue, the turn loop, provider
// streams with retries and output limits, tool execution with approvals,
// questions and scopes, hooks at their events, compaction and the context
// budget, rewind, sub-agents, image and video generation, web search,
// titles, uploads, and session export and import.
//
// It imports only the standard library, core and the packages under core.
package engine
