package acp

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/foya-dev/foya/client"
)

// promptReader turns a prompt's content blocks into a Foya user input:
// text joined, images and binary resources uploaded as attachments.
type promptReader struct{ k *client.Client }

// input turns prompt content blocks into the message text and attachments.
func (p promptReader) input(ctx context.Context, blocks []json.RawMessage) (string, []string, error) {
	var text []string
	var ids []string
	for i, raw := range blocks {
		var b promptBlock
		if err := json.Unmarshal(raw, &b); err != nil {
			return "", nil, invalidParams("prompt[%d]: %v", i, err)
		}
		t, id, err := p.block(ctx, i, &b)
		if err != nil {
			return "", nil, err
		}
		if id != "" {
			ids = append(ids, id)
		} else {
			text = append(text, t)
		}
	}
	joined := strings.Join(text, "\n\n")
	if strings.TrimSpace(joined) == "" && len(ids) == 0 {
		return "", nil, invalidParams("the prompt is empty")
	}
	return joined, ids, nil
}

// block is the i-th prompt block's text, or the id of the attachment it
// was uploaded as (images and binary resources).
func (p promptReader) block(ctx context.Context, i int, b *promptBlock) (text, attachmentID string, err error) {
	switch b.Type {
	case "text":
		return b.Text, "", nil
	case "resource_link":
		name := cmp.Or(b.Title, b.Name)
		return fmt.Sprintf("[%s](%s)", cmp.Or(name, b.URI), b.URI), "", nil
	case "resource":
		return p.resource(ctx, i, b.Resource)
	case "image":
		data, err := base64.StdEncoding.DecodeString(b.Data)
		if err != nil {
			return "", "", invalidParams("prompt[%d]: image data is not base64: %v", i, err)
		}
		return p.upload(ctx, nameOf(b.URI, "image"+extOf(b.MimeType)), b.MimeType, data)
	case "audio":
		return "", "", invalidParams("prompt[%d]: audio is not supported (promptCapabilities.audio is false)", i)
	}
	return "", "", invalidParams("prompt[%d]: unknown content type %q", i, b.Type)
}

// resource is an embedded resource's text as context, or the id of its
// blob uploaded as an attachment.
func (p promptReader) resource(ctx context.Context, i int, r *embeddedResource) (text, attachmentID string, err error) {
	switch {
	case r == nil:
		return "", "", invalidParams("prompt[%d]: resource is missing", i)
	case r.Text != nil:
		return fmt.Sprintf("<context uri=%q>\n%s\n</context>", r.URI, *r.Text), "", nil
	case r.Blob != nil:
		data, err := base64.StdEncoding.DecodeString(*r.Blob)
		if err != nil {
			return "", "", invalidParams("prompt[%d]: blob is not base64: %v", i, err)
		}
		return p.upload(ctx, nameOf(r.URI, "attachment"), cmp.Or(r.MimeType, "application/octet-stream"), data)
	}
	return "", "", invalidParams("prompt[%d]: resource has neither text nor blob", i)
}

func (p promptReader) upload(ctx context.Context, name, mediaType string, data []byte) (text, attachmentID string, err error) {
	id, err := p.k.Upload(ctx, name, mediaType, data)
	if err != nil {
		return "", "", kernelError(err)
	}
	return "", id, nil
}

func nameOf(uri, def string) string {
	if uri == "" {
		return def
	}
	if u, err := url.Parse(uri); err == nil && u.Path != "" {
		if b := path.Base(u.Path); b != "" && b != "/" && b != "." {
			return b
		}
	}
	return def
}

func extOf(mime string) string {
	switch mime {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	}
	return ""
}
