package engine

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/foya-dev/foya/core"
)

// Limits of one user input (MSG-2, MSG-4, MSG-15). Sizes are in bytes of
// UTF-8 text.
const (
	// MaxInputTextBytes bounds the text of one user message.
	MaxInputTextBytes = 256 << 10
	// MaxInputAttachments bounds the attachments of one user message.
	MaxInputAttachments = 10
	// MaxBrowserElements bounds the browser elements of one user message.
	MaxBrowserElements = 10
	// MaxElementURLBytes bounds BrowserElement.URL; only http, https and
	// file URLs are accepted.
	MaxElementURLBytes = 2048
	// MaxElementTitleBytes bounds BrowserElement.Title.
	MaxElementTitleBytes = 512
	// MaxElementTagBytes bounds BrowserElement.Tag.
	MaxElementTagBytes = 64
	// MaxElementSelectorBytes bounds BrowserElement.Selector.
	MaxElementSelectorBytes = 1024
	// MaxElementTextBytes bounds BrowserElement.Text.
	MaxElementTextBytes = 16 << 10
	// MaxElementHTMLBytes bounds BrowserElement.HTML.
	MaxElementHTMLBytes = 32 << 10
	// MaxBrowserElementsBytes bounds the sum of all fields of all browser
	// elements of one user message.
	MaxBrowserElementsBytes = 128 << 10
)

// commandRE is the form of a command id: lowercase, starting with a letter
// or digit, at most 64 characters.
var commandRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_:-]{0,63}$`)

// ValidateUserInput checks a user input before the kernel creates a turn or a
// queue item (MSG-2) and returns the referenced attachments in input order.
// lookup resolves an attachment id; an error matching ErrNotFound is reported
// as bad input, any other error is returned wrapped. caps are the bound
// model's capabilities: only an explicit "no image input" rejects an image
// (PRV-4). Every rejection is a BAD_INPUT *Error naming the field.
func ValidateUserInput(in core.UserInput, lookup func(id string) (core.Attachment, error), caps core.Capabilities) ([]core.Attachment, error) {
	if len(in.Text) > MaxInputTextBytes {
		return nil, core.Errorf(core.CodeBadInput, "text: %d bytes is over the limit of %d bytes; shorten it or attach it as a file", len(in.Text), MaxInputTextBytes)
	}
	if !utf8.ValidString(in.Text) {
		return nil, core.Errorf(core.CodeBadInput, "text: not valid UTF-8")
	}
	if in.Command != "" && !commandRE.MatchString(in.Command) {
		return nil, core.Errorf(core.CodeBadInput, "command: %q is not a command id (lowercase letters, digits, '_', ':' or '-', at most 64 characters)", in.Command)
	}
	atts, err := validateAttachments(in.AttachmentIDs, lookup, caps)
	if err != nil {
		return nil, err
	}
	if err := validateBrowserElements(in.BrowserElements); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Text) == "" && len(atts) == 0 && len(in.BrowserElements) == 0 {
		return nil, core.Errorf(core.CodeBadInput, "text: empty message; write something or attach a file or a page element")
	}
	return atts, nil
}

func validateAttachments(ids []string, lookup func(id string) (core.Attachment, error), caps core.Capabilities) ([]core.Attachment, error) {
	if len(ids) > MaxInputAttachments {
		return nil, core.Errorf(core.CodeBadInput, "attachmentIds: %d attachments is over the limit of %d", len(ids), MaxInputAttachments)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	if lookup == nil {
		return nil, errors.New("validate attachments: no attachment lookup configured")
	}
	seen := make(map[string]bool, len(ids))
	out := make([]core.Attachment, 0, len(ids))
	for i, id := range ids {
		if strings.TrimSpace(id) == "" {
			return nil, core.Errorf(core.CodeBadInput, "attachmentIds[%d]: empty id", i)
		}
		if seen[id] {
			return nil, core.Errorf(core.CodeBadInput, "attachmentIds[%d]: attachment %s is listed twice", i, id)
		}
		seen[id] = true
		a, err := lookup(id)
		if errors.Is(err, core.ErrNotFound) {
			return nil, &core.Error{Code: core.CodeBadInput, Message: fmt.Sprintf("attachmentIds[%d]: attachment %s not found; upload it first", i, id), Err: err}
		}
		if err != nil {
			return nil, fmt.Errorf("look up attachment %s: %w", id, err)
		}
		if a.Kind == "image" && !ImageInputAllowed(caps) {
			return nil, core.Errorf(core.CodeBadInput, "attachmentIds[%d]: %s is an image and the bound model does not accept images; remove it or choose a model with image input", i, a.Name)
		}
		out = append(out, a)
	}
	return out, nil
}

func validateBrowserElements(els []core.BrowserElement) error {
	if len(els) > MaxBrowserElements {
		return core.Errorf(core.CodeBadInput, "browserElements: %d elements is over the limit of %d", len(els), MaxBrowserElements)
	}
	total := 0
	for i, el := range els {
		fields := []struct {
			name  string
			value string
			limit int
		}{
			{"url", el.URL, MaxElementURLBytes},
			{"title", el.Title, MaxElementTitleBytes},
			{"tag", el.Tag, MaxElementTagBytes},
			{"selector", el.Selector, MaxElementSelectorBytes},
			{"text", el.Text, MaxElementTextBytes},
			{"html", el.HTML, MaxElementHTMLBytes},
		}
		for _, f := range fields {
			if len(f.value) > f.limit {
				return core.Errorf(core.CodeBadInput, "browserElements[%d].%s: %d bytes is over the limit of %d bytes", i, f.name, len(f.value), f.limit)
			}
			if !utf8.ValidString(f.value) {
				return core.Errorf(core.CodeBadInput, "browserElements[%d].%s: not valid UTF-8", i, f.name)
			}
			total += len(f.value)
		}
		if err := validateElementURL(el.URL); err != nil {
			return core.Errorf(core.CodeBadInput, "browserElements[%d].url: %s", i, err.Error())
		}
	}
	if total > MaxBrowserElementsBytes {
		return core.Errorf(core.CodeBadInput, "browserElements: %d bytes in total is over the limit of %d bytes; select fewer or smaller elements", total, MaxBrowserElementsBytes)
	}
	return nil
}

func validateElementURL(raw string) error {
	if raw == "" {
		return errors.New("required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("not a valid URL")
	}
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" {
			return errors.New("an http(s) URL needs a host")
		}
	case "file":
	default:
		return errors.New("only http, https and file URLs are accepted")
	}
	return nil
}
