package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/internal/httpwire"
)

// wireUsage is Anthropic's usage object. input_tokens excludes the tokens
// read from or written to the prompt cache.
type wireUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	// Iterations are the sampling steps of one request (compaction beta,
	// server-side fallback): {type, input_tokens, output_tokens}.
	Iterations []wireIteration `json:"iterations"`
}

type wireIteration struct {
	Type         string `json:"type"`
	InputTokens  int64  `json:"input_tokens"`
	OutputTokens int64  `json:"output_tokens"`
}

// tokens are the input (uncached) and output tokens of the request. The
// top-level figures leave out a compaction's own sampling step; when the
// request compacted, the compaction and message steps are summed, as
// Anthropic bills them. A reply served by a server-side fallback keeps the
// top-level figures (its iterations hold the refused first attempt).
func (u wireUsage) tokens() (in, out int64) {
	compacted := false
	for _, it := range u.Iterations {
		if it.Type == "fallback_message" {
			return u.InputTokens, u.OutputTokens
		}
		compacted = compacted || it.Type == "compaction"
	}
	if !compacted {
		return u.InputTokens, u.OutputTokens
	}
	for _, it := range u.Iterations {
		if it.Type == "compaction" || it.Type == "message" {
			in, out = in+it.InputTokens, out+it.OutputTokens
		}
	}
	return in, out
}

// sdk reports the whole prompt as input (uncached + cache writes + cache
// reads) and the cache reads as cached, a subset of input.
func (u wireUsage) sdk(model string) sdk.Usage {
	uncached, output := u.tokens()
	in := uncached + u.CacheReadInputTokens + u.CacheCreationInputTokens
	return sdk.Usage{
		InputTokens: in, OutputTokens: output, TotalTokens: in + output,
		CachedTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens, Model: model,
	}
}

// merge takes the non-zero fields of a message_delta usage (cumulative).
func (u *wireUsage) merge(d wireUsage) {
	if d.InputTokens > 0 {
		u.InputTokens = d.InputTokens
	}
	if d.OutputTokens > 0 {
		u.OutputTokens = d.OutputTokens
	}
	if d.CacheReadInputTokens > 0 {
		u.CacheReadInputTokens = d.CacheReadInputTokens
	}
	if d.CacheCreationInputTokens > 0 {
		u.CacheCreationInputTokens = d.CacheCreationInputTokens
	}
	if len(d.Iterations) > 0 {
		u.Iterations = d.Iterations
	}
}

// streamEvent is the data of one SSE event; which fields are set depends on
// its type.
type streamEvent struct {
	Type  string `json:"type"`
	Start *struct {
		Model string    `json:"model"`
		Usage wireUsage `json:"usage"`
		// Content is what the message starts with: empty, except for
		// the tool calls of code the service runs (programmatic tool
		// calling), which arrive whole in message_start.
		Content []json.RawMessage `json:"content"`
	} `json:"-"`
	Index        int             `json:"index"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		// Content is a compaction_delta's summary (null when the
		// compaction failed).
		Content    *string `json:"content"`
		StopReason string  `json:"stop_reason"`
		// stop_details explains a refusal: {"type":"refusal",
		// "category":"cyber","explanation":"…"}.
		StopDetails *struct {
			Type        string `json:"type"`
			Explanation string `json:"explanation"`
		} `json:"stop_details"`
	} `json:"delta"`
	Usage *wireUsage `json:"usage"`
	Error *apiError  `json:"error"`
	// A flat error event (some gateways): {"type":"error","message":"…"}.
	Message json.RawMessage `json:"message"`
}

// block is a content block being assembled.
type block struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
	Data      string `json:"data"` // redacted_thinking
	// summary is a compaction block's; nil when the compaction failed
	// (such a block is not kept). Other blocks' content is not read.
	summary *string
	// Input is a tool_use block's input as the block starts: {} when the
	// input follows in input_json_delta, the whole input otherwise.
	Input     json.RawMessage `json:"input"`
	gotInput  bool            // an input_json_delta came
	toolIndex int
}

// maxStateBytes bounds the thinking and signatures kept for the reply's
// native state: the kernel keeps at most 8 MiB of state per reply, so more
// is dropped here (the reply then sends no state) rather than held.
const maxStateBytes = 8 << 20

// readStream translates a Messages event stream into SDK events. The
// thinking blocks of the reply are sent as native state once the message
// is complete; a stream cut off before message_stop never sends state.
func readStream(ctx context.Context, body io.Reader, out sdk.StreamSender) (string, error) {
	r := &streamReader{out: out, blocks: map[int]*block{}}
	if err := httpwire.ReadEvents(ctx, body, func() bool { return r.stopped }, r.handle); err != nil {
		return "", err
	}
	if !r.stopped {
		return "", &sdk.Error{Category: sdk.CategoryNetwork, Message: "the stream ended before message_stop"}
	}
	if err := out.Usage(r.usage.sdk(r.model)); err != nil {
		return "", err
	}
	if err := r.sendState(); err != nil {
		return "", err
	}
	if r.stop == "" && r.tools > 0 {
		// A message of tool calls from the service's code execution ends
		// without a stop reason: the calls wait for their results.
		r.stop = "tool_use"
	}
	if r.stop == "refusal" {
		if err := sdk.SendRefusal(out, r.explanation); err != nil {
			return "", err
		}
	}
	return finishReason(r.stop), nil
}

// streamReader is the state of one readStream.
type streamReader struct {
	out         sdk.StreamSender
	model, stop string
	explanation string // stop_details of a refusal
	usage       wireUsage
	blocks      map[int]*block
	order       []int
	tools       int
	stopped     bool
	kept        int // bytes of thinking and signatures kept for the state
}

func (r *streamReader) keep(dst *string, s string) {
	if r.kept += len(s); r.kept <= maxStateBytes {
		*dst += s
	}
}

// handle takes one server-sent event.
func (r *streamReader) handle(event string, data []byte) error {
	var ev streamEvent
	if err := httpwire.DecodeEvent(event, data, &ev); err != nil {
		return err
	}
	if ev.Type == "" {
		ev.Type = event
	}
	if ev.Type == "message_start" && len(ev.Message) > 0 {
		if err := httpwire.DecodeEvent(event, ev.Message, &ev.Start); err != nil {
			return err
		}
	}
	switch ev.Type {
	case "message_start":
		if len(r.order) > 0 {
			// A proxy that retried upstream and spliced a second
			// message into the stream: what was forwarded of the first
			// cannot be taken back.
			return &sdk.Error{Category: sdk.CategoryServer, Message: "the stream started a second message before the first ended"}
		}
		if ev.Start != nil {
			r.model = ev.Start.Model
			r.usage = ev.Start.Usage
			for i, raw := range ev.Start.Content {
				// Whole blocks: each starts and stops at once.
				if err := r.blockStart(streamEvent{Index: -1 - i, ContentBlock: raw}); err != nil {
					return err
				}
				if err := r.blockStop(-1 - i); err != nil {
					return err
				}
			}
		}
	case "content_block_start":
		return r.blockStart(ev)
	case "content_block_delta":
		return r.blockDelta(ev)
	case "content_block_stop":
		return r.blockStop(ev.Index)
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != "" {
			r.stop = ev.Delta.StopReason
			if d := ev.Delta.StopDetails; d != nil && d.Explanation != "" {
				r.explanation = d.Explanation
			}
		}
		if ev.Usage != nil {
			r.usage.merge(*ev.Usage)
		}
	case "message_stop":
		r.stopped = true
	case "error":
		e := ev.Error
		if e == nil {
			e = &apiError{}
			_ = json.Unmarshal(ev.Message, &e.Message) // a string, or left empty
		}
		return classifyAPIError(0, nil, e)
	}
	return nil
}

// blockStart opens a content block, sending what it starts with.
func (r *streamReader) blockStart(ev streamEvent) error {
	b := &block{}
	if err := json.Unmarshal(ev.ContentBlock, b); err != nil {
		return httpwire.DecodeError("content block", ev.ContentBlock, err)
	}
	r.blocks[ev.Index] = b
	r.order = append(r.order, ev.Index)
	switch b.Type {
	case "text":
		var t struct{ Text string }
		if err := json.Unmarshal(ev.ContentBlock, &t); err != nil {
			return httpwire.DecodeError("content block", ev.ContentBlock, err)
		}
		if t.Text != "" {
			return r.out.Text(t.Text)
		}
	case "thinking":
		if b.Thinking != "" {
			return r.out.Reasoning(b.Thinking)
		}
	case "compaction":
		var c struct{ Content *string }
		if err := json.Unmarshal(ev.ContentBlock, &c); err != nil {
			return httpwire.DecodeError("content block", ev.ContentBlock, err)
		}
		if c.Content != nil {
			b.summary = new(string)
			r.keep(b.summary, *c.Content)
		}
	case "tool_use":
		b.toolIndex = r.tools
		r.tools++
		return r.out.ToolCall(sdk.ToolCallDelta{Index: b.toolIndex, ID: b.ID, Name: b.Name})
	}
	return nil
}

// blockDelta adds to an open content block.
func (r *streamReader) blockDelta(ev streamEvent) error {
	b := r.blocks[ev.Index]
	if b == nil || ev.Delta == nil {
		return &sdk.Error{Category: sdk.CategoryBadResponse, Message: fmt.Sprintf("content_block_delta for an unknown block (index %d)", ev.Index)}
	}
	switch ev.Delta.Type {
	case "text_delta":
		return r.out.Text(ev.Delta.Text)
	case "thinking_delta":
		r.keep(&b.Thinking, ev.Delta.Thinking)
		return r.out.Reasoning(ev.Delta.Thinking)
	case "signature_delta":
		r.keep(&b.Signature, ev.Delta.Signature)
	case "compaction_delta":
		// The whole summary, in one delta: kept for the reply's state,
		// never shown as text (the compaction is the service's own).
		if b.Type == "compaction" && ev.Delta.Content != nil {
			if b.summary == nil {
				b.summary = new(string)
			}
			r.keep(b.summary, *ev.Delta.Content)
		}
	case "input_json_delta":
		// Only the kernel's tools: the input of a tool the service
		// runs itself (server_tool_use) is not a tool call.
		if b.Type == "tool_use" && ev.Delta.PartialJSON != "" {
			b.gotInput = true
			return r.out.ToolCall(sdk.ToolCallDelta{Index: b.toolIndex, Arguments: ev.Delta.PartialJSON})
		}
	}
	return nil
}

// blockStop closes a content block: a tool_use block whose input came
// whole in its start (no input_json_delta followed) sends that input now.
func (r *streamReader) blockStop(index int) error {
	b := r.blocks[index]
	if b == nil || b.Type != "tool_use" || b.gotInput {
		return nil
	}
	var input map[string]json.RawMessage
	if json.Unmarshal(b.Input, &input) != nil || len(input) == 0 {
		return nil // {} (the input followed in deltas, or there is none), or not an object
	}
	b.gotInput = true
	return r.out.ToolCall(sdk.ToolCallDelta{Index: b.toolIndex, Arguments: string(b.Input)})
}

// sendState sends the reply's compaction and thinking blocks as native
// state, unless they passed maxStateBytes.
func (r *streamReader) sendState() error {
	var st nativeState
	for _, i := range r.order {
		b := r.blocks[i]
		var raw []byte
		switch b.Type {
		case "compaction":
			if b.summary == nil || *b.summary == "" {
				continue // a failed compaction: a no-op the API need not see
			}
			raw = compactionBlock(*b.summary)
		case "thinking":
			raw = httpwire.Marshal(struct {
				Type      string `json:"type"`
				Thinking  string `json:"thinking"`
				Signature string `json:"signature"`
			}{"thinking", b.Thinking, b.Signature})
		case "redacted_thinking":
			raw = httpwire.Marshal(struct {
				Type string `json:"type"`
				Data string `json:"data"`
			}{"redacted_thinking", b.Data})
		default:
			continue
		}
		st.Blocks = append(st.Blocks, raw)
	}
	if len(st.Blocks) > 0 && r.kept <= maxStateBytes {
		return r.out.State(httpwire.Marshal(st))
	}
	return nil
}
