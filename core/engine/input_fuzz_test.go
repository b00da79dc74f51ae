package engine_test

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/engine"
)

// FuzzValidateUserInput drives ValidateUserInput with arbitrary text,
// command, attachment ids (comma-separated; "att_*" exist, "img_*" are
// images, others are unknown) and up to 11 copies of one browser element
// whose HTML is padded by pad bytes. It must not panic; a rejection is a
// BAD_INPUT naming its field; an acceptance satisfies every documented
// limit and returns the attachments in input order.
func FuzzValidateUserInput(f *testing.F) {
	f.Add("hello", "", "", "", "", "", uint8(0), uint16(0), uint8(0))
	f.Add("", "review:pr-2_a", "att_a,img_b", "https://example.com/p?q=1#f", "Title", "selected text", uint8(1), uint16(0), uint8(0))
	f.Add(" \n\t", "compact", "", "", "", "", uint8(0), uint16(0), uint8(0))
	f.Add("x", "Review", "att_a,att_a", "javascript:alert(1)", "", "", uint8(1), uint16(0), uint8(1))
	f.Add("", "", "img_x", "HTTPS://E.COM", "t", "", uint8(1), uint16(40000), uint8(1))
	f.Add("a\xffb", "", ",att_a", "http:///x", "\xff", "\xc0", uint8(2), uint16(0), uint8(2))
	f.Add("ok", "", "", "https://e.com/\xff", "\xff", "\xc0", uint8(1), uint16(0), uint8(2))
	f.Add("x", "", "att_1,att_2,att_3,att_4,att_5,att_6,att_7,att_8,att_9,att_10,att_11", "file:///tmp/a.html", "", "", uint8(11), uint16(0), uint8(0))
	f.Add("", "", "", "file:", "", "", uint8(4), uint16(32768), uint8(0))

	no, yes := false, true
	lookup := func(id string) (core.Attachment, error) {
		switch {
		case strings.HasPrefix(id, "att_"):
			return core.Attachment{ID: id, Name: "f.txt", Kind: "file", MediaType: "text/plain"}, nil
		case strings.HasPrefix(id, "img_"):
			return core.Attachment{ID: id, Name: "i.png", Kind: "image", MediaType: "image/png"}, nil
		}
		return core.Attachment{}, core.Errorf(core.CodeNotFound, "attachment %s not found", id)
	}

	f.Fuzz(func(t *testing.T, text, command, ids, elURL, elTitle, elText string, nEls uint8, pad uint16, flags uint8) {
		in := core.UserInput{Text: text, Command: command}
		if ids != "" {
			in.AttachmentIDs = strings.Split(ids, ",")
		}
		el := core.BrowserElement{URL: elURL, Title: elTitle, Tag: "div", Text: elText, HTML: strings.Repeat("h", int(pad))}
		for range nEls % 12 {
			in.BrowserElements = append(in.BrowserElements, el)
		}
		var caps core.Capabilities
		switch flags % 3 {
		case 1:
			caps.ImageInput = &no
		case 2:
			caps.ImageInput = &yes
		}

		atts, err := engine.ValidateUserInput(in, lookup, caps)
		if err != nil {
			if code := core.ErrorCode(err); code != core.CodeBadInput {
				t.Fatalf("code %s, want BAD_INPUT: %v", code, err)
			}
			msg := err.Error()
			named := false
			for _, field := range []string{"text:", "command:", "attachmentIds", "browserElements"} {
				named = named || strings.HasPrefix(msg, field)
			}
			if !named {
				t.Fatalf("error names no field: %q", msg)
			}
			if atts != nil {
				t.Fatalf("rejected (%v) but returned attachments %v", err, atts)
			}
			return
		}

		if len(text) > engine.MaxInputTextBytes || !utf8.ValidString(text) {
			t.Fatalf("accepted text of %d bytes (valid UTF-8: %v)", len(text), utf8.ValidString(text))
		}
		if command != "" && !commandOK(command) {
			t.Fatalf("accepted command %q", command)
		}
		if len(atts) != len(in.AttachmentIDs) || len(atts) > engine.MaxInputAttachments {
			t.Fatalf("accepted %d ids, returned %d attachments", len(in.AttachmentIDs), len(atts))
		}
		seen := map[string]bool{}
		for i, a := range atts {
			if a.ID != in.AttachmentIDs[i] || seen[a.ID] || strings.TrimSpace(a.ID) == "" {
				t.Fatalf("attachment %d: %q for id %q (ids %q)", i, a.ID, in.AttachmentIDs[i], in.AttachmentIDs)
			}
			seen[a.ID] = true
			if a.Kind == "image" && caps.ImageInput != nil && !*caps.ImageInput {
				t.Fatalf("accepted image %s for a model without image input", a.ID)
			}
		}
		if len(in.BrowserElements) > engine.MaxBrowserElements {
			t.Fatalf("accepted %d browser elements", len(in.BrowserElements))
		}
		total := 0
		for _, e := range in.BrowserElements {
			for _, v := range []string{e.URL, e.Title, e.Tag, e.Selector, e.Text, e.HTML} {
				if !utf8.ValidString(v) {
					t.Fatalf("accepted a browser element field that is not valid UTF-8: %q", v)
				}
				total += len(v)
			}
			if len(e.URL) > engine.MaxElementURLBytes || len(e.Title) > engine.MaxElementTitleBytes ||
				len(e.Text) > engine.MaxElementTextBytes || len(e.HTML) > engine.MaxElementHTMLBytes {
				t.Fatalf("accepted an oversized browser element field")
			}
			u, err := url.Parse(e.URL)
			if err != nil {
				t.Fatalf("accepted url %q: %v", e.URL, err)
			}
			switch strings.ToLower(u.Scheme) {
			case "http", "https":
				if u.Host == "" {
					t.Fatalf("accepted url %q without a host", e.URL)
				}
			case "file":
			default:
				t.Fatalf("accepted url %q with scheme %q", e.URL, u.Scheme)
			}
		}
		if total > engine.MaxBrowserElementsBytes {
			t.Fatalf("accepted %d bytes of browser elements", total)
		}
		if strings.TrimSpace(text) == "" && len(atts) == 0 && len(in.BrowserElements) == 0 {
			t.Fatal("accepted an empty message")
		}
	})
}

// commandOK is the documented command id form, checked without a regexp.
func commandOK(c string) bool {
	if len(c) == 0 || len(c) > 64 {
		return false
	}
	for i, r := range c {
		lowerOrDigit := (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')
		if !lowerOrDigit && (i == 0 || !strings.ContainsRune("_:-", r)) {
			return false
		}
	}
	return true
}
