package openai_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// refusalRecorder also records refusal text (sdk.RefusalSender).
type refusalRecorder struct {
	recorder
	refusal string
}

func (r *refusalRecorder) Refusal(s string) error { r.refusal += s; return nil }

// Content as an array of parts: text, thinking with nested parts,
// reasoning, refusal, an unknown part with text (kept) and one without
// (ignored); reasoning_content as parts too.
func TestStreamArrayContent(t *testing.T) {
	srv, p, ep := setup(t)
	srv.Enqueue(openaitest.Response{Events: []string{
		`{"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"The user "},{"type":"text","text":"asks."}]}]},"finish_reason":null}]}`,
		`{"model":"m","choices":[{"index":0,"delta":{"content":[{"type":"text","text":"3"},{"type":"reference","reference_ids":[1]},{"type":"citation","text":" [1]"}]}}]}`,
		`{"model":"m","choices":[{"index":0,"delta":{"reasoning_content":[{"type":"text","text":" More."}],"content":[{"type":"reasoning","reasoning":" Done."}]}}]}`,
		`{"model":"m","choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":46,"total_tokens":56}}`,
	}})
	rec := &refusalRecorder{}
	finish, err := p.Stream(testCtx(t), ep, userRequest("hi"), rec)
	if err != nil || finish != "stop" {
		t.Fatalf("%q %v", finish, err)
	}
	if rec.text.String() != "3 [1]" || rec.reason.String() != "The user asks. More. Done." || rec.refusal != "" {
		t.Fatalf("text %q reasoning %q refusal %q", rec.text.String(), rec.reason.String(), rec.refusal)
	}
	if len(rec.usage) != 1 || rec.usage[0].OutputTokens != 46 {
		t.Fatalf("usage %+v", rec.usage)
	}
}

func TestStreamRefusal(t *testing.T) {
	srv, p, ep := setup(t)
	srv.Enqueue(openaitest.Response{Events: []string{
		`{"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":"I can't "}}]}`,
		`{"model":"m","choices":[{"index":0,"delta":{"content":[{"type":"refusal","refusal":"do that."}]},"finish_reason":"stop"}]}`,
	}})
	rec := &refusalRecorder{}
	finish, err := p.Stream(testCtx(t), ep, userRequest("hi"), rec)
	if err != nil || finish != sdk.FinishRefusal || rec.refusal != "I can't do that." || rec.text.String() != "" {
		t.Fatalf("%q %v refusal %q text %q", finish, err, rec.refusal, rec.text.String())
	}
}

// Tool call deltas whose id and type come late, and a server that sends
// two calls at index 0 with different ids.
func TestStreamToolCallsLateIDAndReusedIndex(t *testing.T) {
	srv, p, ep := setup(t)
	srv.Enqueue(openaitest.Response{Events: []string{
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"read","arguments":"{\"pa"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"arguments":"th\":1}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_2","type":"function","function":{"name":"glob","arguments":"{}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	}})
	rec := &recorder{}
	finish, err := p.Stream(testCtx(t), ep, userRequest("hi"), rec)
	if err != nil || finish != "tool_calls" || len(rec.calls) != 2 {
		t.Fatalf("%q %v %+v", finish, err, rec.calls)
	}
	if c := rec.calls[0]; c.ID != "call_1" || c.Name != "read" || c.Arguments != `{"path":1}` {
		t.Fatalf("first call %+v", c)
	}
	if c := rec.calls[1]; c.ID != "call_2" || c.Name != "glob" || c.Arguments != `{}` {
		t.Fatalf("second call %+v", c)
	}
}

// A flat error object (vLLM and some proxies) and a chunk of an
// unexpected shape: classified, the second never as a server error.
func TestStreamFlatErrorAndUnexpectedChunk(t *testing.T) {
	srv, p, ep := setup(t)
	srv.Enqueue(openaitest.Response{NoDone: true, Events: []string{
		`{"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}`,
	}}, openaitest.Response{NoDone: true, Events: []string{
		`{"choices":[{"index":0,"delta":{"content":{"text":"x"}}}]}`,
	}}, openaitest.Response{NoDone: true, Events: []string{
		`{"choices":[{"index":0,"delta":{"content":"x"`,
	}})
	for _, want := range []struct {
		cat sdk.ErrorCategory
		msg string
	}{{sdk.CategoryContextOverflow, "maximum context length is 4096"}, {sdk.CategoryBadResponse, "unexpected stream chunk"}, {sdk.CategoryServer, "not JSON"}} {
		_, err := p.Stream(testCtx(t), ep, userRequest("hi"), &recorder{})
		var pe *sdk.Error
		if !errors.As(err, &pe) || pe.Category != want.cat || !strings.Contains(pe.Message, want.msg) {
			t.Fatalf("err %v, want %s …%s…", err, want.cat, want.msg)
		}
	}
}
