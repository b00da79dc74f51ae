package mcphost

import (
	"encoding/json"
	"fmt"
	"mime"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foya-dev/foya/core"
)

// convertResult turns an MCP tool result into a kernel tool result: text
// parts and embedded text resources become the text, images (content or
// embedded blobs) become attachments, structuredContent is kept (and is the
// text when the server sent no text), isError marks a tool error. Other
// content is named in a short note.
func convertResult(res *mcp.CallToolResult) core.ToolResult {
	var out core.ToolResult
	var texts []string
	for i, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			texts = append(texts, c.Text)
		case *mcp.ImageContent:
			out.Attachments = append(out.Attachments, core.ToolAttachment{Name: attachmentName(i, c.MIMEType), MediaType: c.MIMEType, Data: c.Data})
			texts = append(texts, fmt.Sprintf("[image %d: %s, %d bytes; shown to the model after the results when it accepts images]", i+1, c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			texts = append(texts, fmt.Sprintf("[audio %d: %s, %d bytes; not shown to the model]", i+1, c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			texts = append(texts, fmt.Sprintf("[resource link: %s (%s)%s]", c.URI, c.Name, prefixed(": ", c.Description)))
		case *mcp.EmbeddedResource:
			r := c.Resource
			switch {
			case r == nil:
			case r.Text != "" || len(r.Blob) == 0:
				texts = append(texts, r.Text)
			case strings.HasPrefix(r.MIMEType, "image/"):
				out.Attachments = append(out.Attachments, core.ToolAttachment{Name: attachmentName(i, r.MIMEType), MediaType: r.MIMEType, Data: r.Blob})
				texts = append(texts, fmt.Sprintf("[resource %s: %s image, %d bytes]", r.URI, r.MIMEType, len(r.Blob)))
			default:
				texts = append(texts, fmt.Sprintf("[resource %s: %s, %d bytes of binary data not shown]", r.URI, r.MIMEType, len(r.Blob)))
			}
		default:
			texts = append(texts, fmt.Sprintf("[content of type %T not shown]", c))
		}
	}
	if res.StructuredContent != nil {
		if raw, err := json.Marshal(res.StructuredContent); err == nil {
			out.Structured = raw
			if len(texts) == 0 {
				texts = append(texts, string(raw))
			}
		}
	}
	out.Text = strings.Join(texts, "\n")
	out.IsError = res.IsError
	return out
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

func attachmentName(i int, mediaType string) string {
	ext := ".bin"
	if exts, _ := mime.ExtensionsByType(mediaType); len(exts) > 0 {
		ext = exts[0]
	}
	switch mediaType {
	case "image/png":
		ext = ".png"
	case "image/jpeg":
		ext = ".jpg"
	}
	return fmt.Sprintf("mcp-content-%d%s", i+1, ext)
}
