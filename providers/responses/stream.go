package responses

import (
	"context"
	"encoding/json"
	"io"
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
	Delta        string          `json:"delta"`
	Item         json.RawMessage `json:"item"`
	Response     *response       `json:"response"`
	// error events
	Code    string `json:"code"`
	Message string `json:"message"`
}

// call is a function call being streamed, by output index.
type call struct {
	index int
	args  bool // argument deltas arrived
}

// readStream translates a Responses event stream into SDK events. The
// reply's reasoning items, complete with encrypted_content, are sent as
// native state when the response completed.
func readStream(ctx context.Context, body io.Reader, out sdk.StreamSender) (string, error) {
	var (
		calls     = map[int]*call{}
		reasoning []json.RawMessage
		final     *response
	)
	handle := func(event string, data []byte) error {
		if strings.TrimSpace(string(data)) == "[DONE]" {
			return nil
		}
		var ev streamEvent
		if err := httpwire.DecodeEvent(event, data, &ev); err != nil {
			return err
		}
		if ev.Type == "" {
			ev.Type = event
		}
		switch ev.Type {
		case "response.output_text.delta":
			if ev.Delta != "" {
				return out.Text(ev.Delta)
			}
		case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
			if ev.Delta != "" {
				return out.Reasoning(ev.Delta)
			}
		case "response.reasoning_summary_part.added":
			if ev.SummaryIndex > 0 {
				return out.Reasoning("\n\n")
			}
		case "response.output_item.added":
			var it item
			if err := json.Unmarshal(ev.Item, &it); err != nil {
				return &sdk.Error{Category: sdk.CategoryServer, Message: "malformed output item: " + err.Error()}
			}
			if it.Type == "function_call" {
				c := &call{index: len(calls)}
				calls[ev.OutputIndex] = c
				return out.ToolCall(sdk.ToolCallDelta{Index: c.index, ID: it.CallID, Name: it.Name})
			}
		case "response.function_call_arguments.delta":
			c := calls[ev.OutputIndex]
			if c == nil {
				return &sdk.Error{Category: sdk.CategoryServer, Message: "arguments for an unknown function call"}
			}
			c.args = true
			return out.ToolCall(sdk.ToolCallDelta{Index: c.index, Arguments: ev.Delta})
		case "response.output_item.done":
			var it item
			if err := json.Unmarshal(ev.Item, &it); err != nil {
				return &sdk.Error{Category: sdk.CategoryServer, Message: "malformed output item: " + err.Error()}
			}
			switch it.Type {
			case "reasoning":
				reasoning = append(reasoning, append(json.RawMessage(nil), ev.Item...))
			case "function_call":
				c := calls[ev.OutputIndex]
				if c == nil {
					c = &call{index: len(calls)}
					calls[ev.OutputIndex] = c
					if err := out.ToolCall(sdk.ToolCallDelta{Index: c.index, ID: it.CallID, Name: it.Name}); err != nil {
						return err
					}
				}
				if !c.args && it.Arguments != "" {
					c.args = true
					return out.ToolCall(sdk.ToolCallDelta{Index: c.index, Arguments: it.Arguments})
				}
			}
		case "response.completed", "response.incomplete":
			final = ev.Response
			if final == nil {
				final = &response{Status: "completed"}
			}
		case "response.failed":
			if ev.Response != nil && ev.Response.Error != nil {
				return classifyObject(0, nil, ev.Response.Error)
			}
			return sdk.Errorf(sdk.CategoryServer, "the response failed")
		case "error":
			return classifyObject(0, nil, &apiError{Code: ev.Code, Message: ev.Message})
		}
		return nil
	}
	if err := httpwire.ReadEvents(ctx, body, func() bool { return final != nil }, handle); err != nil {
		return "", err
	}
	if final == nil {
		return "", &sdk.Error{Category: sdk.CategoryNetwork, Message: "the stream ended before response.completed"}
	}
	if err := out.Usage(final.Usage.sdk(final.Model)); err != nil {
		return "", err
	}
	if len(reasoning) > 0 {
		if err := out.State(httpwire.Marshal(nativeState{Items: reasoning})); err != nil {
			return "", err
		}
	}
	if len(calls) > 0 {
		return "tool_calls", nil
	}
	return final.finishReason(), nil
}
