package engine_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/engine"
)

func TestValidateUserInput(t *testing.T) {
	stored := map[string]core.Attachment{
		"att_img":  {ID: "att_img", Name: "shot.png", Kind: "image", MediaType: "image/png"},
		"att_doc":  {ID: "att_doc", Name: "notes.pdf", Kind: "file", MediaType: "application/pdf"},
		"att_doc2": {ID: "att_doc2", Name: "more.txt", Kind: "file", MediaType: "text/plain"},
	}
	lookup := func(id string) (core.Attachment, error) {
		if id == "att_broken" {
			return core.Attachment{}, errors.New("database is locked")
		}
		a, ok := stored[id]
		if !ok {
			return core.Attachment{}, core.Errorf(core.CodeNotFound, "attachment %s not found", id)
		}
		return a, nil
	}
	no, yes := false, true
	noImages := core.Capabilities{ImageInput: &no}
	el := func(mod func(*core.BrowserElement)) []core.BrowserElement {
		e := core.BrowserElement{URL: "https://example.com/", Tag: "div", Text: "hello"}
		if mod != nil {
			mod(&e)
		}
		return []core.BrowserElement{e}
	}
	manyIDs := func(n int) []string {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("att_%d", i)
		}
		return ids
	}

	tests := []struct {
		name    string
		in      core.UserInput
		caps    core.Capabilities
		want    []string // attachment ids returned
		errCode core.Code
		errHas  string // substring of the message
	}{
		{name: "plain text", in: core.UserInput{Text: "hi"}},
		{name: "empty", in: core.UserInput{}, errCode: core.CodeBadInput, errHas: "text: empty message; write something or attach a file or a page element"},
		{name: "blank", in: core.UserInput{Text: " \n\t"}, errCode: core.CodeBadInput, errHas: "empty message"},
		{name: "command without text", in: core.UserInput{Command: "compact"}, errCode: core.CodeBadInput, errHas: "empty message"},
		{name: "empty text with attachment", in: core.UserInput{AttachmentIDs: []string{"att_doc"}}, want: []string{"att_doc"}},
		{name: "empty text with browser element", in: core.UserInput{BrowserElements: el(nil)}},
		{name: "text at limit", in: core.UserInput{Text: strings.Repeat("a", engine.MaxInputTextBytes)}},
		{name: "text over limit", in: core.UserInput{Text: strings.Repeat("a", engine.MaxInputTextBytes+1)}, errCode: core.CodeBadInput, errHas: "limit of 262144 bytes"},
		{name: "text not utf-8", in: core.UserInput{Text: "a\xffb"}, errCode: core.CodeBadInput, errHas: "UTF-8"},
		{name: "command ok", in: core.UserInput{Text: "x", Command: "review:pr-2_a"}},
		{name: "command uppercase", in: core.UserInput{Text: "x", Command: "Review"}, errCode: core.CodeBadInput, errHas: "command:"},
		{name: "command leading dash", in: core.UserInput{Text: "x", Command: "-x"}, errCode: core.CodeBadInput, errHas: "command:"},
		{name: "command with slash", in: core.UserInput{Text: "x", Command: "/review"}, errCode: core.CodeBadInput, errHas: "command:"},
		{name: "command 64 chars", in: core.UserInput{Text: "x", Command: strings.Repeat("a", 64)}},
		{name: "command 65 chars", in: core.UserInput{Text: "x", Command: strings.Repeat("a", 65)}, errCode: core.CodeBadInput, errHas: "command:"},
		{name: "attachments in order", in: core.UserInput{Text: "x", AttachmentIDs: []string{"att_doc2", "att_img"}}, want: []string{"att_doc2", "att_img"}},
		{name: "attachment missing", in: core.UserInput{Text: "x", AttachmentIDs: []string{"att_doc", "att_nope"}}, errCode: core.CodeBadInput, errHas: "attachmentIds[1]: attachment att_nope not found"},
		{name: "attachment lookup fails", in: core.UserInput{Text: "x", AttachmentIDs: []string{"att_broken"}}, errCode: core.CodeInternal, errHas: "database is locked"},
		{name: "attachment duplicate", in: core.UserInput{Text: "x", AttachmentIDs: []string{"att_doc", "att_doc"}}, errCode: core.CodeBadInput, errHas: "attachmentIds[1]: attachment att_doc is listed twice"},
		{name: "attachment empty id", in: core.UserInput{Text: "x", AttachmentIDs: []string{""}}, errCode: core.CodeBadInput, errHas: "attachmentIds[0]: empty id"},
		{name: "too many attachments", in: core.UserInput{Text: "x", AttachmentIDs: manyIDs(engine.MaxInputAttachments + 1)}, errCode: core.CodeBadInput, errHas: "limit of 10"},
		{name: "image with unknown capability", in: core.UserInput{AttachmentIDs: []string{"att_img"}}, want: []string{"att_img"}},
		{name: "image with image input", in: core.UserInput{AttachmentIDs: []string{"att_img"}}, caps: core.Capabilities{ImageInput: &yes}, want: []string{"att_img"}},
		{name: "image without image input", in: core.UserInput{AttachmentIDs: []string{"att_img"}}, caps: noImages, errCode: core.CodeBadInput, errHas: "the bound model does not accept images"},
		{name: "file without image input", in: core.UserInput{AttachmentIDs: []string{"att_doc"}}, caps: noImages, want: []string{"att_doc"}},
		{name: "too many elements", in: core.UserInput{BrowserElements: make([]core.BrowserElement, engine.MaxBrowserElements+1)}, errCode: core.CodeBadInput, errHas: "browserElements: 11 elements is over the limit of 10"},
		{name: "element url missing", in: core.UserInput{BrowserElements: el(func(e *core.BrowserElement) { e.URL = "" })}, errCode: core.CodeBadInput, errHas: "browserElements[0].url: required"},
		{name: "element url javascript", in: core.UserInput{BrowserElements: el(func(e *core.BrowserElement) { e.URL = "javascript:alert(1)" })}, errCode: core.CodeBadInput, errHas: "browserElements[0].url: only http, https and file"},
		{name: "element url no host", in: core.UserInput{BrowserElements: el(func(e *core.BrowserElement) { e.URL = "http:///x" })}, errCode: core.CodeBadInput, errHas: "needs a host"},
		{name: "element url file", in: core.UserInput{BrowserElements: el(func(e *core.BrowserElement) { e.URL = "file:///tmp/a.html" })}},
		{name: "element url upper-case scheme", in: core.UserInput{BrowserElements: el(func(e *core.BrowserElement) { e.URL = "HTTPS://example.com" })}},
		{name: "element url too long", in: core.UserInput{BrowserElements: el(func(e *core.BrowserElement) {
			e.URL = "https://e.com/" + strings.Repeat("a", engine.MaxElementURLBytes)
		})},
			errCode: core.CodeBadInput, errHas: "browserElements[0].url: 2062 bytes is over the limit of 2048 bytes"},
		{name: "element title too long", in: core.UserInput{BrowserElements: el(func(e *core.BrowserElement) { e.Title = strings.Repeat("a", engine.MaxElementTitleBytes+1) })},
			errCode: core.CodeBadInput, errHas: "browserElements[0].title: 513 bytes is over the limit of 512 bytes"},
		{name: "element tag too long", in: core.UserInput{BrowserElements: el(func(e *core.BrowserElement) { e.Tag = strings.Repeat("a", engine.MaxElementTagBytes+1) })},
			errCode: core.CodeBadInput, errHas: "browserElements[0].tag: 65 bytes is over the limit of 64 bytes"},
		{name: "element selector too long", in: core.UserInput{BrowserElements: el(func(e *core.BrowserElement) { e.Selector = strings.Repeat("a", engine.MaxElementSelectorBytes+1) })},
			errCode: core.CodeBadInput, errHas: "browserElements[0].selector: 1025 bytes is over the limit of 1024 bytes"},
		{name: "element text too long", in: core.UserInput{BrowserElements: el(func(e *core.BrowserElement) { e.Text = strings.Repeat("a", engine.MaxElementTextBytes+1) })},
			errCode: core.CodeBadInput, errHas: "browserElements[0].text: 16385 bytes is over the limit of 16384 bytes"},
		{name: "element html too long", in: core.UserInput{BrowserElements: el(func(e *core.BrowserElement) { e.HTML = strings.Repeat("a", engine.MaxElementHTMLBytes+1) })},
			errCode: core.CodeBadInput, errHas: "browserElements[0].html: 32769 bytes is over the limit of 32768 bytes"},
		{name: "elements at field limits within total", in: core.UserInput{BrowserElements: repeatElement(2, core.BrowserElement{
			URL: "https://e.com/", Text: strings.Repeat("t", engine.MaxElementTextBytes), HTML: strings.Repeat("h", engine.MaxElementHTMLBytes)})}},
		{name: "elements over total limit", in: core.UserInput{BrowserElements: repeatElement(3, core.BrowserElement{
			URL: "https://e.com/", Text: strings.Repeat("t", engine.MaxElementTextBytes), HTML: strings.Repeat("h", engine.MaxElementHTMLBytes)})},
			errCode: core.CodeBadInput, errHas: "over the limit of 131072 bytes"},
		{name: "second element named", in: core.UserInput{BrowserElements: append(el(nil), core.BrowserElement{URL: "ftp://x"})}, errCode: core.CodeBadInput, errHas: "browserElements[1].url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := engine.ValidateUserInput(tt.in, lookup, tt.caps)
			if tt.errCode != "" {
				if err == nil {
					t.Fatalf("accepted, want %s containing %q", tt.errCode, tt.errHas)
				}
				if code := core.ErrorCode(err); code != tt.errCode {
					t.Errorf("code = %s, want %s (%v)", code, tt.errCode, err)
				}
				if !strings.Contains(err.Error(), tt.errHas) {
					t.Errorf("error %q does not contain %q", err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("rejected: %v", err)
			}
			var ids []string
			for _, a := range got {
				ids = append(ids, a.ID)
			}
			if !reflect.DeepEqual(ids, tt.want) {
				t.Errorf("attachments = %v, want %v", ids, tt.want)
			}
		})
	}
}

func repeatElement(n int, e core.BrowserElement) []core.BrowserElement {
	out := make([]core.BrowserElement, n)
	for i := range out {
		out[i] = e
	}
	return out
}

func TestValidateUserInputNilLookup(t *testing.T) {
	if _, err := engine.ValidateUserInput(core.UserInput{Text: "hi"}, nil, core.Capabilities{}); err != nil {
		t.Fatalf("text-only input with no lookup: %v", err)
	}
	_, err := engine.ValidateUserInput(core.UserInput{AttachmentIDs: []string{"a"}}, nil, core.Capabilities{})
	if err == nil || core.ErrorCode(err) != core.CodeInternal {
		t.Fatalf("err = %v, want an internal error", err)
	}
}
