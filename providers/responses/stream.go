package responses

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/internal/httpwire"
)

// wireUsage is the Responses usage object; input_tokens includes the
// cached ones.
type wireUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	OutputTokens       int64 `json:"output_tokens"`
	TotalTokens        int64 `json:"total_tokens"`
	InputTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

func (u wireUsage) sdk(model string) sdk.Usage {
	total := u.TotalTokens
	if total == 0 {
		total = u.InputTokens + u.OutputTokens
	}
	return sdk.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: total, CachedTokens: u.InputTokensDetails.CachedTokens, Model: model}
}

// item is an output item.
type item struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Content   []struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Refusal     string `json:"refusal"`
		Annotations []struct {
			Type  string `json:"type"`
			URL   string `json:"url"`
			Title string `json:"title"`
		} `json:"annotations"`
	} `json:"content"`
}

// response is the response object of response.completed and of
// non-streaming calls.
type response struct {
	Model             string            `json:"model"`
	Status            string            `json:"status"`
	Output            []json.RawMessage `json:"output"`
	Usage             wireUsage         `json:"usage"`
	Error             *apiError         `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
}

// text joins the output_text of the message items and lists url citations.
func (r *response) text() (string, []sdk.WebSource) {
	var b strings.Builder
	var sources []sdk.WebSource
	seen := map[string]bool{}
	for _, raw := range r.Output {
		var it item
		if json.Unmarshal(raw, &it) != nil || it.Type != "message" {
			continue
		}
		for _, c := range it.Content {
			if c.Type != "output_text" {
				continue
			}
			b.WriteString(c.Text)
			for _, a := range c.Annotations {
				if a.Type == "url_citation" && !seen[a.URL] {
					seen[a.URL] = true
					sources = append(sources, sdk.WebSource{Title: a.Title, URL: a.URL})
				}
			}
		}
	}
	return b.String(), sources
}

func (r *response) finishReason() string {
	for _, raw := range r.Output {
		var it item
		if json.Unmarshal(raw, &it) == nil && it.Type == "function_call" {
			return "tool_calls"
		}
	}
	if r.Status == "incomplete" && r.IncompleteDetails != nil {
		switch r.IncompleteDetails.Reason {
		case "max_output_tokens":
			return "length"
		case "content_filter":
			return "content_filter"
		}
		return r.IncompleteDetails.Reason
	}
	return "stop"
}

type streamEvent struct {
	Type         string          `json:"type"`
	OutputIndex  int             `json:"output_index"`
	SummaryIndex int             `json:"summary_index"`
	ContentIndex int             `json:"content_index"`
	Text         string          `json:"text"` // output_text.done
	Delta        string          `json:"delta"`
	Item         json.RawMessage `json:"item"`
	Response     *response       `json:"response"`
	// error events: the live API nests the error object
	// ({"type":"error","error":{"type","code","message","param"}}); older
	// streams and compatible servers put code and message at the top.
	Error   *apiError       `json:"error"`
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
	// refusal events
	Refusal string `json:"refusal"`
}

// errorObject is the error an error event carries, in either shape.
func (ev *streamEvent) errorObject() *apiError {
	e := &apiError{Message: ev.Message, RawCode: ev.Code}
	if n := ev.Error; n != nil {
		if n.Message != "" {
			e.Message = n.Message
		}
		if n.code() != "" {
			e.RawCode, e.Code = nil, n.code()
		}
		e.Type = n.Type
	}
	return e
}

// mergeErrors completes the error of an error event with the one of the
// response.failed event that follows it: the first message and the first
// code win.
func mergeErrors(first, failed *apiError) *apiError {
	if first == nil {
		return failed
	}
	if failed == nil {
		return first
	}
	out := *first
	if out.Message == "" {
		out.Message = failed.Message
	}
	if out.code() == "" {
		out.Code, out.RawCode = failed.code(), nil
	}
	if out.Type == "" {
		out.Type = failed.Type
	}
	return &out
}

// serverItems are output items of tools the service runs itself: the
// reply's text follows them, so they are skipped (logged once).
var serverItems = map[string]bool{
	"web_search_call": true, "file_search_call": true, "code_interpreter_call": true, "image_generation_call": true,
	"mcp_call": true, "mcp_list_tools": true, "compaction": true,
}

// call is a function call being streamed, by output index.
type call struct {
	index int
	args  bool // argument deltas arrived
}

// readStream translates a Responses event stream into SDK events. The
// reply's reasoning items, complete with encrypted_content, are sent as
// native state when the response completed.
//
// Errors: an error event is held until the next event, so that the
// response.failed that follows it can complete its code (the error event's
// code may be null); response.failed alone is classified by its error.
// An output item the kernel cannot act on (a call of a tool type it never
// offers, e.g. custom_tool_call or local_shell_call) is a bad_response,
// so that it is neither lost nor retried.
func readStream(ctx context.Context, log *slog.Logger, body io.Reader, out sdk.StreamSender) (string, error) {
	r := &streamReader{log: log, out: out, calls: map[int]*call{}, logged: map[string]bool{}, streamed: map[[2]int]*strings.Builder{}}
	if err := httpwire.ReadEvents(ctx, body, func() bool { return r.final != nil || r.failed }, r.handle); err != nil {
		return "", err
	}
	if r.pending != nil {
		return "", classifyObject(0, nil, r.pending)
	}
	final := r.final
	if final == nil {
		return "", &sdk.Error{Category: sdk.CategoryNetwork, Message: "the stream ended before response.completed"}
	}
	if err := out.Usage(final.Usage.sdk(final.Model)); err != nil {
		return "", err
	}
	if len(r.reasoning) > 0 {
		if err := out.State(httpwire.Marshal(nativeState{Items: r.reasoning})); err != nil {
			return "", err
		}
	}
	if len(r.calls) > 0 {
		return sdk.FinishToolCalls, nil
	}
	if r.refused || r.refusal.Len() > 0 {
		if err := sdk.SendRefusal(out, r.refusal.String()); err != nil {
			return "", err
		}
		return sdk.FinishRefusal, nil
	}
	return final.finishReason(), nil
}

// streamReader is the state of one readStream.
type streamReader struct {
	log       *slog.Logger
	out       sdk.StreamSender
	calls     map[int]*call
	reasoning []json.RawMessage
	final     *response
	pending   *apiError // an error event waiting for response.failed
	failed    bool
	refusal   strings.Builder
	refused   bool // a refusal.done or refusal content part arrived
	logged    map[string]bool
	// streamed holds the text deltas of each output text part, so that
	// output_text.done can complete a stream that skipped some.
	streamed map[[2]int]*strings.Builder
}

// handle takes one server-sent event.
func (r *streamReader) handle(event string, data []byte) error {
	if strings.TrimSpace(string(data)) == "[DONE]" {
		return nil
	}
	var ev streamEvent
	if err := httpwire.DecodeEvent(event, data, &ev); err != nil {
		if r.pending != nil {
			return classifyObject(0, nil, r.pending)
		}
		return err
	}
	if ev.Type == "" {
		ev.Type = event
	}
	if r.pending != nil && ev.Type != "response.failed" {
		return classifyObject(0, nil, r.pending)
	}
	switch ev.Type {
	case "response.output_text.delta":
		if ev.Delta != "" {
			key := [2]int{ev.OutputIndex, ev.ContentIndex}
			if r.streamed[key] == nil {
				r.streamed[key] = &strings.Builder{}
			}
			r.streamed[key].WriteString(ev.Delta)
			return r.out.Text(ev.Delta)
		}
	case "response.output_text.done":
		return r.textDone(ev)
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if ev.Delta != "" {
			return r.out.Reasoning(ev.Delta)
		}
	case "response.reasoning_summary_part.added":
		if ev.SummaryIndex > 0 {
			return r.out.Reasoning("\n\n")
		}
	case "response.refusal.delta":
		r.refusal.WriteString(ev.Delta)
	case "response.refusal.done":
		if r.refusal.Len() == 0 {
			r.refusal.WriteString(ev.Refusal)
		}
		r.refused = true
	case "response.output_item.added":
		return r.itemAdded(ev)
	case "response.function_call_arguments.delta":
		c := r.calls[ev.OutputIndex]
		if c == nil {
			return &sdk.Error{Category: sdk.CategoryBadResponse, Message: fmt.Sprintf("arguments for an unknown function call (output index %d)", ev.OutputIndex)}
		}
		c.args = true
		return r.out.ToolCall(sdk.ToolCallDelta{Index: c.index, Arguments: ev.Delta})
	case "response.output_item.done":
		return r.itemDone(ev)
	case "response.completed", "response.incomplete":
		r.final = ev.Response
		if r.final == nil {
			r.final = &response{Status: "completed"}
		}
	case "response.failed":
		r.failed = true
		var e *apiError
		if ev.Response != nil {
			e = ev.Response.Error
		}
		if e = mergeErrors(r.pending, e); e != nil {
			return classifyObject(0, nil, e)
		}
		return sdk.Errorf(sdk.CategoryServer, "the response failed without saying why")
	case "error":
		r.pending = ev.errorObject()
	}
	return nil
}

// itemAdded takes a new output item: a function call starts a tool call.
func (r *streamReader) itemAdded(ev streamEvent) error {
	it, err := decodeItem(ev.Item)
	if err != nil {
		return err
	}
	if it.Type == "function_call" {
		c := &call{index: len(r.calls)}
		r.calls[ev.OutputIndex] = c
		return r.out.ToolCall(sdk.ToolCallDelta{Index: c.index, ID: it.CallID, Name: it.Name})
	}
	return nil
}

// textDone takes the final text of an output text part: what the deltas
// left out (a proxy that drops some) still reaches the reply.
func (r *streamReader) textDone(ev streamEvent) error {
	var got string
	if b := r.streamed[[2]int{ev.OutputIndex, ev.ContentIndex}]; b != nil {
		got = b.String()
	}
	delete(r.streamed, [2]int{ev.OutputIndex, ev.ContentIndex})
	switch {
	case len(ev.Text) > len(got) && strings.HasPrefix(ev.Text, got):
		return r.out.Text(ev.Text[len(got):])
	case ev.Text != got && ev.Text != "":
		r.log.Warn("output_text.done differs from its deltas; the deltas are kept", "streamed_bytes", len(got), "done_bytes", len(ev.Text))
	}
	return nil
}

// itemDone takes a finished output item: reasoning kept for the state, a
// function call completed, a refusal noted; an item of a tool the service
// ran is skipped, any other is a bad_response.
func (r *streamReader) itemDone(ev streamEvent) error {
	it, err := decodeItem(ev.Item)
	if err != nil {
		return err
	}
	switch it.Type {
	case "reasoning":
		r.reasoning = append(r.reasoning, append(json.RawMessage(nil), ev.Item...))
	case "function_call":
		c := r.calls[ev.OutputIndex]
		if c == nil {
			c = &call{index: len(r.calls)}
			r.calls[ev.OutputIndex] = c
			if err := r.out.ToolCall(sdk.ToolCallDelta{Index: c.index, ID: it.CallID, Name: it.Name}); err != nil {
				return err
			}
		}
		if !c.args && it.Arguments != "" {
			c.args = true
			return r.out.ToolCall(sdk.ToolCallDelta{Index: c.index, Arguments: it.Arguments})
		}
	case "message":
		for _, c := range it.Content {
			if c.Type == "refusal" {
				if r.refusal.Len() == 0 {
					r.refusal.WriteString(c.Refusal)
				}
				r.refused = true
			}
		}
	default:
		if serverItems[it.Type] {
			if !r.logged[it.Type] {
				r.logged[it.Type] = true
				r.log.Info("skipped an output item of a tool the service ran", "type", it.Type)
			}
			return nil
		}
		return &sdk.Error{Category: sdk.CategoryBadResponse, Message: "the model returned a " + it.Type + " output item, which Foya never asks for and cannot act on"}
	}
	return nil
}

// decodeItem decodes an output item: the fields of the types the provider
// acts on, only the type of others (whose fields may differ, e.g. the
// object arguments of a tool_search_call).
func decodeItem(raw json.RawMessage) (item, error) {
	var it item
	if err := json.Unmarshal(raw, &struct {
		Type *string `json:"type"`
	}{&it.Type}); err != nil {
		return it, httpwire.DecodeError("output item", raw, err)
	}
	switch it.Type {
	case "message", "function_call", "reasoning":
		if err := json.Unmarshal(raw, &it); err != nil {
			return it, httpwire.DecodeError("output item", raw, err)
		}
	}
	return it, nil
}
