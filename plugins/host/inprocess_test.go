package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/plugins/host/hosttest"
	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/openai"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// fakeProvider streams scripted deltas and fails ListModels as told.
type fakeProvider struct {
	caps    []sdk.Capability
	deltas  []string
	err     error
	listErr error
}

func (f *fakeProvider) Describe() sdk.ProviderInfo {
	return sdk.ProviderInfo{Kind: "fake", Version: "1.2.3", Capabilities: f.caps}
}

func (f *fakeProvider) Stream(ctx context.Context, _ sdk.Endpoint, req sdk.Request, out sdk.StreamSender) (string, error) {
	for _, d := range f.deltas {
		if err := out.Text(d); err != nil {
			return "", err
		}
	}
	if err := out.ToolCall(sdk.ToolCallDelta{Index: 1, ID: "call_1", Name: "grep", Arguments: `{"q":`}); err != nil {
		return "", err
	}
	if err := out.Usage(sdk.Usage{InputTokens: 3, OutputTokens: 2, TotalTokens: 5, CachedTokens: 1, Model: req.Model + "-actual"}); err != nil {
		return "", err
	}
	if f.err != nil {
		return "", f.err
	}
	return "stop", nil
}

func (f *fakeProvider) ListModels(context.Context, sdk.Endpoint) ([]sdk.Model, error) {
	if f.listErr != nil {
		return nil, f.listErr
	}
	cw := int64(128000)
	return []sdk.Model{{ID: "m1", Capabilities: sdk.Capabilities{ContextWindow: &cw}}}, nil
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func drain(t *testing.T, s core.ProviderStream) []core.StreamEvent {
	t.Helper()
	defer s.Close()
	var evs []core.StreamEvent
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return evs
		}
		if err != nil {
			t.Fatalf("recv: %v", err)
		}
		evs = append(evs, ev)
	}
}

func TestInProcessStream(t *testing.T) {
	p, _ := hosttest.NewInProcess(t, sdk.ServeConfig{Provider: &fakeProvider{deltas: []string{"a", "b"}}})
	s, err := p.Stream(ctxT(t), core.Endpoint{ConnectionID: "c"}, core.ProviderRequest{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	evs := drain(t, s)
	var kinds []string
	for _, ev := range evs {
		kinds = append(kinds, string(ev.Kind))
	}
	if got := strings.Join(kinds, ","); got != "text,text,tool_call,usage,done" {
		t.Fatalf("events %s", got)
	}
	if tc := evs[2].ToolCall; tc.Index != 1 || tc.ID != "call_1" || tc.Name != "grep" || tc.Arguments != `{"q":` {
		t.Fatalf("tool call %+v", tc)
	}
	if u := evs[3].Usage; *u != (core.Usage{InputTokens: 3, OutputTokens: 2, TotalTokens: 5, CachedTokens: 1, Model: "m-actual"}) {
		t.Fatalf("usage %+v", u)
	}
	if evs[4].FinishReason != "stop" {
		t.Fatalf("done %+v", evs[4])
	}
}

func TestInProcessStreamErrorEvent(t *testing.T) {
	p, _ := hosttest.NewInProcess(t, sdk.ServeConfig{Provider: &fakeProvider{
		deltas: []string{"partial"},
		err:    &sdk.Error{Category: sdk.CategoryRateLimit, Message: "slow down", StatusCode: 429, RetryAfter: 3 * time.Second},
	}})
	s, err := p.Stream(ctxT(t), core.Endpoint{}, core.ProviderRequest{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	evs := drain(t, s)
	last := evs[len(evs)-1]
	if last.Kind != core.StreamError || *last.Err != (core.ProviderError{Category: core.ProviderRateLimit, Message: "slow down", StatusCode: 429, RetryAfter: 3 * time.Second}) {
		t.Fatalf("last event %+v err %+v", last, last.Err)
	}
}

func TestCapabilityChecks(t *testing.T) {
	p, _ := hosttest.NewInProcess(t, sdk.ServeConfig{Provider: &fakeProvider{caps: []sdk.Capability{sdk.CapModelLister}}})
	if got := p.Capabilities(); len(got) != 1 || got[0] != core.CapModelLister {
		t.Fatalf("capabilities %v", got)
	}
	models, err := p.ListModels(ctxT(t), core.Endpoint{})
	if err != nil || len(models) != 1 || *models[0].Capabilities.ContextWindow != 128000 {
		t.Fatalf("models %+v err %v", models, err)
	}
	_, err = p.(core.WebSearcher).WebSearch(ctxT(t), core.Endpoint{}, core.WebSearchRequest{Query: "x"})
	if !errors.Is(err, core.ErrUnavailable) || err.Error() != "provider fake does not support web_search" {
		t.Fatalf("web search: %v", err)
	}
	if _, err := p.Complete(ctxT(t), core.Endpoint{}, core.ProviderRequest{}); !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("complete: %v", err)
	}
}

func TestUnaryProviderError(t *testing.T) {
	p, _ := hosttest.NewInProcess(t, sdk.ServeConfig{Provider: &fakeProvider{
		caps:    []sdk.Capability{sdk.CapModelLister},
		listErr: &sdk.Error{Category: sdk.CategoryAuth, Message: "bad key", StatusCode: 401},
	}})
	_, err := p.ListModels(ctxT(t), core.Endpoint{})
	var pe *core.ProviderError
	if core.ErrorCode(err) != core.CodeProviderError || !errors.As(err, &pe) || pe.Category != core.ProviderAuth || pe.StatusCode != 401 {
		t.Fatalf("err %v", err)
	}
}

func TestInProcessOpenAIToolCalls(t *testing.T) {
	srv := openaitest.New(t)
	srv.Enqueue(openaitest.Response{Events: []string{
		openaitest.Chunk("m", map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_a", "type": "function", "function": map[string]any{"name": "ls", "arguments": ""}}}}, ""),
		openaitest.Chunk("m", map[string]any{"tool_calls": []any{map[string]any{"index": 1, "id": "call_b", "type": "function", "function": map[string]any{"name": "cat", "arguments": `{"f":`}}}}, ""),
		openaitest.Chunk("m", map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": `{}`}}}}, ""),
		openaitest.Chunk("m", map[string]any{"tool_calls": []any{map[string]any{"index": 1, "function": map[string]any{"arguments": `"x"}`}}}}, "tool_calls"),
	}})
	p, _ := hosttest.NewInProcess(t, sdk.ServeConfig{Provider: openai.New(openai.Config{})})
	s, err := p.Stream(ctxT(t), core.Endpoint{BaseURL: srv.BaseURL()}, core.ProviderRequest{Model: "m",
		Messages: []core.ProviderMessage{{Role: core.RoleUser, Content: []core.ContentPart{{Type: "text", Text: "hi"}}}},
		Tools:    []core.ToolSchema{{Name: "ls", Parameters: json.RawMessage(`{"type":"object"}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	args := map[int]string{}
	ids := map[int]string{}
	var finish string
	for _, ev := range drain(t, s) {
		switch ev.Kind {
		case core.StreamToolCall:
			args[ev.ToolCall.Index] += ev.ToolCall.Arguments
			if ev.ToolCall.ID != "" {
				ids[ev.ToolCall.Index] = ev.ToolCall.ID
			}
		case core.StreamDone:
			finish = ev.FinishReason
		}
	}
	if args[0] != `{}` || args[1] != `{"f":"x"}` || ids[0] != "call_a" || ids[1] != "call_b" || finish != "tool_calls" {
		t.Fatalf("args %v ids %v finish %q", args, ids, finish)
	}
	if tools := srv.LastRequest().JSON()["tools"].([]any); len(tools) != 1 {
		t.Fatalf("tools %v", tools)
	}
}

// sleepyTools has one tool that waits for cancellation.
type sleepyTools struct{ started chan struct{} }

func (s *sleepyTools) Describe(context.Context) (sdk.ToolSetInfo, error) {
	return sdk.ToolSetInfo{Version: "1", Tools: []sdk.Tool{
		{Name: "echo", Description: "echo input", Schema: json.RawMessage(`{"type":"object"}`), ReadOnly: true},
		{Name: "sleep", Description: "wait"},
	}}, nil
}

func (s *sleepyTools) Call(ctx context.Context, req sdk.ToolCallRequest) (sdk.ToolResult, error) {
	if req.Name == "echo" {
		return sdk.ToolResult{Text: req.SessionID + " " + req.WorkDir + " " + req.ToolCallID + " " + string(req.Input)}, nil
	}
	close(s.started)
	<-ctx.Done()
	return sdk.ToolResult{}, ctx.Err()
}

func TestInProcessTools(t *testing.T) {
	tools := &sleepyTools{started: make(chan struct{})}
	_, r := hosttest.NewInProcess(t, sdk.ServeConfig{Tools: tools})
	infos, err := r.Tools(ctxT(t))
	if err != nil || len(infos) != 2 || !infos[0].ReadOnly || string(infos[0].Schema) != `{"type":"object"}` {
		t.Fatalf("tools %+v err %v", infos, err)
	}
	res, err := r.Call(ctxT(t), core.ToolCallRequest{SessionID: "ses_1", WorkDir: "/w", ToolCallID: "call_1", Name: "echo", Input: json.RawMessage(`{"a":1}`)})
	if err != nil || res.Text != `ses_1 /w call_1 {"a":1}` || res.IsError {
		t.Fatalf("result %+v err %v", res, err)
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	go func() {
		<-tools.started
		cancel()
	}()
	_, err = r.Call(ctx, core.ToolCallRequest{Name: "sleep"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
}

// richTools answers with every result field the contract carries.
type richTools struct{}

func (richTools) Describe(context.Context) (sdk.ToolSetInfo, error) {
	return sdk.ToolSetInfo{Version: "1", Tools: []sdk.Tool{{Name: "rich"}}}, nil
}

func (richTools) Call(_ context.Context, req sdk.ToolCallRequest) (sdk.ToolResult, error) {
	return sdk.ToolResult{
		Text: req.ScopeDir + " " + req.Timeout.String(),
		FileChanges: []sdk.FileChange{
			{Path: "a.txt", Action: sdk.FileModify, Before: []byte("old\n"), After: []byte("new\n"), BeforeSHA256: "b1", AfterSHA256: "a1"},
			{Path: "big.bin", Action: sdk.FileCreate, AfterSHA256: "a2", TooLarge: true},
			{Path: "gone", Action: sdk.FileDelete, Before: []byte{}, BeforeSHA256: "b3"},
		},
		Diff:       "--- a/a.txt\n+++ b/a.txt\n",
		Attachment: &sdk.Attachment{Name: "p.png", MediaType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
		Note:       "a note",
	}, nil
}

func TestInProcessToolResultFields(t *testing.T) {
	_, r := hosttest.NewInProcess(t, sdk.ServeConfig{Tools: richTools{}})
	res, err := r.Call(ctxT(t), core.ToolCallRequest{Name: "rich", ScopeDir: "/scope", Timeout: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	want := core.ToolResult{
		Text: "/scope 1.5s",
		FileChanges: []core.ToolFileChange{
			{Path: "a.txt", Action: core.FileModify, Before: []byte("old\n"), After: []byte("new\n"), BeforeSHA256: "b1", AfterSHA256: "a1"},
			{Path: "big.bin", Action: core.FileCreate, AfterSHA256: "a2", TooLarge: true},
			{Path: "gone", Action: core.FileDelete, BeforeSHA256: "b3"},
		},
		Diff:       "--- a/a.txt\n+++ b/a.txt\n",
		Attachment: &core.ToolAttachment{Name: "p.png", MediaType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
		Note:       "a note",
	}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("result\n got %+v\nwant %+v", res, want)
	}
}
