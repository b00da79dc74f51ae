// Package engine runs turns: the per-session queue, the turn loop, provider
// streams with retries and output limits, tool execution with approvals,
// questions and scopes, hooks at their events, compaction and the context
// budget, rewind, sub-agents, image and video generation, web search,
// titles, uploads, and session export and import.
//
// Engine orchestrates turns; each other concern is a type that owns its
// state: Requests (approvals and questions), Queues, Rewinder, Generator,
// Archiver, and inside the package toolRunner (tool calls), compactor
// (checkpoints), models (binding a session to a model) and hookRunner.
// docs/architecture.md maps them to files.
//
// It imports only the standard library, core and the packages under core.
package engine
