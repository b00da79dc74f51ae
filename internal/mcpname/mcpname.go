// Package mcpname is the rule that names an MCP server's tool for a model
// (mcp__<server>__<tool>), shared by the kernel's MCP host and the CLI that
// lists those names. It imports only the standard library.
package mcpname

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Max is the longest tool name offered to a model (the OpenAI function
// name limit).
const Max = 64

// Sanitize replaces every character outside [A-Za-z0-9_-] with '_', as the
// kernel does with the server and tool parts of an exposed tool name.
func Sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

// Exposed is mcp__<server>__<tool>, sanitized; a name over Max keeps its
// start and ends with a short hash of the original server and tool names,
// so that long names stay distinct. (Two tools whose exposed names still
// collide get a suffix from the host, which knows every server's tools.)
func Exposed(server, tool string) string {
	n := "mcp__" + Sanitize(server) + "__" + Sanitize(tool)
	if len(n) <= Max {
		return n
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	return n[:Max-9] + "_" + hex.EncodeToString(sum[:4])
}
