package core

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sort"
)

// streamResult is what one model request produced.
type streamResult struct {
	text, reasoning string
	calls           []ToolCall
	segments        []Segment
	usage           *Usage
	finish          string
	state           []byte
	err             error
	cancelled       bool
}

type callAcc struct {
	id, name string
	args     []byte
}

// stream runs one provider request, publishing live deltas (no seq) and
// assembling tool calls by index (MSG-6).
func (e *Engine) stream(ctx context.Context, sessionID string, b boundModel, req ProviderRequest) streamResult {
	var res streamResult
	st, err := b.provider.Stream(ctx, b.endpoint, req)
	if err != nil {
		if ctx.Err() != nil {
			res.cancelled = true
		} else {
			res.err = err
		}
		return res
	}
	defer st.Close()
	var text, reasoning []byte
	calls := map[int]*callAcc{}
	// segs records the streamed order (MSG-11); a tool call segment holds
	// the call's index until the calls are assembled.
	var segs []Segment
	grow := func(kind string, before, after int) {
		if n := len(segs); n > 0 && segs[n-1].Kind == kind {
			segs[n-1].End = after
			return
		}
		segs = append(segs, Segment{Kind: kind, Start: before, End: after})
	}
loop:
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				res.cancelled = true
			} else {
				res.err = err
			}
			break
		}
		switch ev.Kind {
		case StreamText:
			grow(SegmentText, len(text), len(text)+len(ev.Text))
			text = append(text, ev.Text...)
			e.svc.Emit(sessionID, EventMessageDelta, DeltaPayload{Text: ev.Text})
		case StreamReasoning:
			grow(SegmentReasoning, len(reasoning), len(reasoning)+len(ev.Text))
			reasoning = append(reasoning, ev.Text...)
			e.svc.Emit(sessionID, EventReasoningDelta, DeltaPayload{Text: ev.Text})
		case StreamToolCall:
			d := ev.ToolCall
			if d == nil {
				continue
			}
			acc := calls[d.Index]
			if acc == nil {
				acc = &callAcc{}
				calls[d.Index] = acc
				segs = append(segs, Segment{Kind: SegmentToolCall, Start: d.Index})
			}
			if d.ID != "" {
				acc.id = d.ID
			}
			if d.Name != "" {
				acc.name = d.Name
			}
			acc.args = append(acc.args, d.Arguments...)
			idx := d.Index
			e.svc.Emit(sessionID, EventToolCallDelta, DeltaPayload{Text: d.Arguments, ToolCallIndex: &idx, ToolCallID: acc.id, ToolName: acc.name})
		case StreamUsage:
			if ev.Usage != nil {
				u := *ev.Usage
				res.usage = &u
			}
		case StreamState:
			res.state = append([]byte(nil), ev.State...)
		case StreamDone:
			res.finish = ev.FinishReason
		case StreamError:
			if ev.Err != nil {
				res.err = ev.Err
			} else {
				res.err = &ProviderError{Category: ProviderServer, Message: "the provider reported an unknown error"}
			}
			break loop
		}
	}
	res.text, res.reasoning = string(text), string(reasoning)
	idxs := make([]int, 0, len(calls))
	for i := range calls {
		idxs = append(idxs, i)
	}
	sort.Ints(idxs)
	for _, i := range idxs {
		c := calls[i]
		input := json.RawMessage(c.args)
		switch {
		case len(c.args) == 0:
			input = json.RawMessage("{}")
		case !json.Valid(c.args):
			// Keep what the model sent, as a JSON string, so the history
			// stays valid JSON and the model can read its mistake.
			input, _ = json.Marshal(string(c.args))
		}
		id := c.id
		if id == "" {
			id = NewID("call")
		}
		res.calls = append(res.calls, ToolCall{ID: id, Name: c.name, Input: input})
		c.id = id
	}
	for _, sg := range segs {
		if sg.Kind == SegmentToolCall {
			sg = Segment{Kind: SegmentToolCall, ToolCallID: calls[sg.Start].id}
		}
		if sg.Kind == SegmentToolCall || sg.End > sg.Start {
			res.segments = append(res.segments, sg)
		}
	}
	return res
}

// estimateTokens is the local estimate used when a provider reports no
// usage: about four bytes of text per token.
func estimateTokens(n int) int64 { return int64((n + 3) / 4) }

// recordUsage writes a usage event (and so a ledger row) for one request:
// the provider's report, or a local estimate marked as such (PRV-11).
func (e *Engine) recordUsage(ctx context.Context, sessionID string, b boundModel, req ProviderRequest, res streamResult, purpose string) {
	u := res.usage
	if u == nil {
		if res.cancelled && res.text == "" && res.reasoning == "" {
			return
		}
		if neverSent(res.err) {
			return // the connection was refused: not a byte reached the provider
		}
		out := len(res.text) + len(res.reasoning)
		for _, c := range res.calls {
			out += len(c.Input)
		}
		u = &Usage{InputTokens: localTokens(req), OutputTokens: estimateTokens(out), Estimated: true}
	}
	if u.Model == "" {
		u.Model = req.Model
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	if p := b.model.Capabilities.Prices; p != nil {
		c := p.Cost(*u)
		u.Cost = &c
	}
	if err := e.persist(ctx, sessionID, EventUsage, UsagePayload{Usage: *u, Route: b.route, ConnectionID: b.conn.ID, Purpose: purpose}); err != nil && !errors.Is(err, ErrNotFound) {
		e.log.Error("record usage", "session_id", sessionID, "err", err)
	}
}
