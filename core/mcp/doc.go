// Package mcp owns the configuration of MCP servers: the kernel-wide list
// and the servers attached to one session, their validation and redaction,
// and the hand-off of every change to the MCP runtime (core.MCPRuntime, run
// outside core by plugins/mcphost).
//
// It imports only the standard library, core and core/pubsub.
package mcp
