package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/foya-dev/foya/plugins/sdk"
)

// contentPart is one element of an array-valued content (or reasoning)
// field of a Chat Completions delta or message. Seen in real streams:
//
//	{"type":"text","text":"3"}
//	{"type":"thinking","thinking":[{"type":"text","text":"…"}]}   (Mistral)
//	{"type":"thinking","thinking":"…"} / {"type":"reasoning","text":"…"}
//	{"type":"refusal","refusal":"…"}
//
// reasoning marks a part that came from a reasoning field or a thinking
// part; unknown is the type of a part that carries no text.
type contentPart struct {
	Type      string
	Text      string
	Reasoning bool
	Refusal   bool
}

// UnmarshalJSON accepts content, reasoning_content and reasoning as a
// string or as an array of parts. Anything else in those fields is an
// error, which the stream reports as a bad_response.
func (d *chatDelta) UnmarshalJSON(b []byte) error {
	var raw struct {
		Content          json.RawMessage `json:"content"`
		ReasoningContent json.RawMessage `json:"reasoning_content"`
		Reasoning        json.RawMessage `json:"reasoning"`
		Refusal          *string         `json:"refusal"`
		ToolCalls        []chatToolCall  `json:"tool_calls"`
	}
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*d = chatDelta{Refusal: raw.Refusal, ToolCalls: raw.ToolCalls}
	var err error
	if d.ReasoningContent, err = d.flex("reasoning_content", raw.ReasoningContent, true); err != nil {
		return err
	}
	if d.Reasoning, err = d.flex("reasoning", raw.Reasoning, true); err != nil {
		return err
	}
	d.Content, err = d.flex("content", raw.Content, false)
	return err
}

// flex decodes a string-or-parts field: a string is returned, parts are
// appended to d.Parts.
func (d *chatDelta) flex(field string, raw json.RawMessage, reasoning bool) (*string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return &s, nil
	case '[':
		var parts []json.RawMessage
		if err := json.Unmarshal(raw, &parts); err != nil {
			return nil, err
		}
		for _, p := range parts {
			if err := appendPart(&d.Parts, p, reasoning, 0); err != nil {
				return nil, fmt.Errorf("%s: %w", field, err)
			}
		}
		return nil, nil
	}
	return nil, fmt.Errorf("%s is neither a string nor an array of parts", field)
}

// appendPart flattens one part (thinking parts nest text parts).
func appendPart(out *[]contentPart, raw json.RawMessage, reasoning bool, depth int) error {
	if depth > 4 {
		return fmt.Errorf("parts nested too deeply")
	}
	var p struct {
		Type      string          `json:"type"`
		Text      *string         `json:"text"`
		Thinking  json.RawMessage `json:"thinking"`
		Reasoning json.RawMessage `json:"reasoning"`
		Refusal   *string         `json:"refusal"`
		Content   json.RawMessage `json:"content"`
	}
	if raw = bytes.TrimSpace(raw); len(raw) > 0 && raw[0] == '"' {
		// A bare string in the array.
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		*out = append(*out, contentPart{Type: "text", Text: s, Reasoning: reasoning})
		return nil
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("part: %w", err)
	}
	switch p.Type {
	case "thinking", "reasoning", "reasoning_text", "summary_text":
		nested := p.Thinking
		if p.Type != "thinking" || len(nested) == 0 {
			nested = firstRaw(p.Reasoning, nested)
		}
		if p.Text != nil {
			*out = append(*out, contentPart{Type: p.Type, Text: *p.Text, Reasoning: true})
		}
		return appendNested(out, nested, depth)
	case "refusal":
		if p.Refusal != nil {
			*out = append(*out, contentPart{Type: p.Type, Text: *p.Refusal, Refusal: true})
		} else if p.Text != nil {
			*out = append(*out, contentPart{Type: p.Type, Text: *p.Text, Refusal: true})
		}
		return nil
	}
	// "text", "output_text" and any other part that carries text.
	if p.Text != nil {
		*out = append(*out, contentPart{Type: p.Type, Text: *p.Text, Reasoning: reasoning})
		return nil
	}
	*out = append(*out, contentPart{Type: p.Type}) // no text: ignored, logged once
	return nil
}

// appendNested adds the reasoning held in a thinking part: a string or an
// array of parts.
func appendNested(out *[]contentPart, raw json.RawMessage, depth int) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		*out = append(*out, contentPart{Type: "thinking", Text: s, Reasoning: true})
		return nil
	case '[':
		var parts []json.RawMessage
		if err := json.Unmarshal(raw, &parts); err != nil {
			return err
		}
		for _, p := range parts {
			if err := appendPart(out, p, true, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("thinking is neither a string nor an array of parts")
}

func firstRaw(rs ...json.RawMessage) json.RawMessage {
	for _, r := range rs {
		if len(r) > 0 {
			return r
		}
	}
	return nil
}

// text is the reply text of a non-streamed message (string or parts).
func (d *chatDelta) text() string {
	if d.Content != nil {
		return *d.Content
	}
	var s string
	for _, p := range d.Parts {
		if !p.Reasoning && !p.Refusal {
			s += p.Text
		}
	}
	return s
}

// deltaState forwards the deltas of one stream: text and reasoning in
// whichever shape they come, refusal text kept for the end, tool call
// fragments mapped to the kernel's indexes, and a log line once per kind
// of content the provider does not understand.
type deltaState struct {
	out     sdk.StreamSender
	log     *slog.Logger
	model   string
	refusal strings.Builder
	logged  map[string]bool
	// calls maps an endpoint's tool call index to the kernel's; ids
	// records each call's id, so that a server that sends every call at
	// index 0 with a new id still gets separate calls.
	calls map[int]int
	ids   map[int]string
	next  int
}

func (s *deltaState) once(kind, msg string) {
	if s.logged == nil {
		s.logged = map[string]bool{}
	}
	if !s.logged[kind] {
		s.logged[kind] = true
		s.log.Warn(msg, "model", s.model, "kind", kind)
	}
}

func (s *deltaState) forward(d chatDelta) error {
	if d.ReasoningContent != nil && *d.ReasoningContent != "" {
		if err := s.out.Reasoning(*d.ReasoningContent); err != nil {
			return err
		}
	} else if d.Reasoning != nil && *d.Reasoning != "" {
		if err := s.out.Reasoning(*d.Reasoning); err != nil {
			return err
		}
	}
	if d.Content != nil && *d.Content != "" {
		if err := s.out.Text(*d.Content); err != nil {
			return err
		}
	}
	for _, p := range d.Parts {
		var err error
		switch {
		case p.Refusal:
			s.refusal.WriteString(p.Text)
		case p.Text == "" && !known[p.Type]:
			s.once("part:"+p.Type, "ignored a content part without text of an unknown type")
		case p.Text == "":
		case p.Reasoning:
			err = s.out.Reasoning(p.Text)
		default:
			if !known[p.Type] {
				s.once("part:"+p.Type, "kept the text of a content part of an unknown type")
			}
			err = s.out.Text(p.Text)
		}
		if err != nil {
			return err
		}
	}
	if d.Refusal != nil {
		s.refusal.WriteString(*d.Refusal)
	}
	for i, tc := range d.ToolCalls {
		idx := i
		if tc.Index != nil {
			idx = *tc.Index
		}
		if tc.Type != "" && tc.Type != "function" {
			s.once("tool:"+tc.Type, "a tool call of an unknown type is treated as a function call")
		}
		if s.calls == nil {
			s.calls, s.ids = map[int]int{}, map[int]string{}
		}
		k, seen := s.calls[idx]
		if !seen || (tc.ID != "" && s.ids[idx] != "" && tc.ID != s.ids[idx]) {
			k = s.next
			s.next++
			s.calls[idx] = k
		}
		if tc.ID != "" {
			s.ids[idx] = tc.ID
		}
		delta := sdk.ToolCallDelta{Index: k, ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		if delta.ID == "" && delta.Name == "" && delta.Arguments == "" {
			continue
		}
		if err := s.out.ToolCall(delta); err != nil {
			return err
		}
	}
	return nil
}

// known part types; others are logged once.
var known = map[string]bool{"text": true, "output_text": true, "thinking": true, "reasoning": true, "reasoning_text": true, "summary_text": true, "refusal": true}

// normalizeFinish maps the finish reasons of compatible servers onto the
// normalized ones (sdk.Finish*); others pass as the server spells them.
func normalizeFinish(r string) string {
	switch r {
	case "", "stop", "eos", "end_turn", "stop_sequence":
		return sdk.FinishStop
	case "length", "max_tokens", "model_length":
		return sdk.FinishLength
	case "tool_calls", "function_call", "tool_use":
		return sdk.FinishToolCalls
	case "content_filter", "safety":
		return sdk.FinishContentFilter
	}
	return r
}
