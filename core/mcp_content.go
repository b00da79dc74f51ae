package core

import "context"

// MCPResourceRef names a resource of an MCP server to attach to a message.
type MCPResourceRef struct {
	ServerID string
	URI      string
}

// MCPResourceContent is one content of a read resource: Text, or Blob for
// binary contents, with its MIME type.
type MCPResourceContent struct {
	URI      string
	MIMEType string
	Text     string
	Blob     []byte
}

// MaxMCPContextBytes bounds what one expanded prompt and the resources
// of one message may add to it, in bytes (the message text limit).
const MaxMCPContextBytes = 256 << 10

// MCPContentRuntime gives the prompts and resources of the running MCP
// servers visible in a tool scope (the session and its ancestors; see
// WithToolScope).
type MCPContentRuntime interface {
	// ExpandPrompt expands a message starting with
	// /mcp__<server>__<prompt> args… by the server's prompt; ok is false
	// when the text names no prompt of a visible server.
	ExpandPrompt(ctx context.Context, scope []string, text string) (expanded string, ok bool, err error)
	// ReadResource reads a resource of a visible server.
	ReadResource(ctx context.Context, scope []string, serverID, uri string) ([]MCPResourceContent, error)
}
