package engine

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"sort"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/core/telemetry"
)

// streamResult is what one model request produced.
type streamResult struct {
	text, reasoning string
	calls           []core.ToolCall
	segments        []core.Segment
	usage           *core.Usage
	finish, refusal string
	state           []byte
	err             error
	cancelled       bool
	first           time.Time // when the first stream event came (time to first token)
	// limit is the output cap that closed the stream (nil: none); the turn
	// ends with OUTPUT_LIMIT. truncated marks a reply cut at a cap, also a
	// tool call's arguments (that call is refused, the turn goes on).
	limit     *outputCap
	truncated bool
}

type callAcc struct {
	id, name string
	args     []byte
	over     bool // the arguments passed the cap: cut there, never run
}

// stream runs one provider request, publishing live deltas (no seq) and
// assembling tool calls by index (MSG-6). It holds at most the output caps
// of one reply (OutputLimits): at a cap the stream is closed and what
// arrived is kept up to it. left is what the turn may still spend of its
// output token budget, counted here at four bytes per token. (b and req
// are pointers for the depth of the stack its Recv waits on, see
// streamWithRetry.)
func (e *Engine) stream(ctx context.Context, sessionID string, b *boundModel, req *core.ProviderRequest, left int64) streamResult {
	var res streamResult
	lim := e.out
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	total := time.AfterFunc(lim.CallTimeout, func() { cancel(errModelCallTime) })
	defer total.Stop()
	idle := time.AfterFunc(lim.IdleTimeout, func() { cancel(errModelIdle) })
	defer idle.Stop()
	// ended classifies a stream that ended with err: a cap of time, a
	// stall (a network error, retried as such), a stopped turn or err.
	ended := func(err error) {
		switch cause := context.Cause(callCtx); {
		case ctx.Err() != nil:
			res.cancelled = true
		case errors.Is(cause, errModelCallTime):
			c := lim.timeCap()
			res.limit, res.truncated = &c, true
		case errors.Is(cause, errModelIdle):
			res.err = lim.idleError()
		default:
			res.err = err
		}
	}
	st, err := openStream(callCtx, b, req)
	if err != nil {
		ended(err)
		return res
	}
	defer st.Close()
	rp := newReply(lim, left)
	emit := func(t core.EventType, d core.DeltaPayload) { e.svc.Emit(sessionID, t, d) }
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			ended(err)
			break
		}
		idle.Reset(lim.IdleTimeout)
		if res.first.IsZero() {
			res.first = time.Now()
		}
		capped, stop := rp.take(ev, &res, emit)
		if stop {
			break
		}
		if capped != nil {
			res.limit, res.truncated = capped, true
			break
		}
	}
	rp.finish(&res)
	return res
}

// openStream sends req to b's provider; a function of its own so that the
// copies of the endpoint and the request passed by value are not in the
// frame of stream, which stays on the stack while the reply streams.
//
//go:noinline
func openStream(ctx context.Context, b *boundModel, req *core.ProviderRequest) (core.ProviderStream, error) {
	return b.provider.Stream(ctx, b.endpoint, *req)
}

// reply accumulates one streamed reply under the output caps.
type reply struct {
	lim    OutputLimits
	budget int // bytes of output the turn's token budget allows
	text   []byte
	// reasoning is the reply's reasoning text.
	reasoning []byte
	out       int // bytes of output kept (text, reasoning, arguments)
	calls     map[int]*callAcc
	// segs records the streamed order (MSG-11); a tool call segment holds
	// the call's index until the calls are assembled.
	segs []core.Segment
}

// take adds one stream event to the reply and to res, emitting the live
// deltas; capped is the output cap it reached, stop says the stream is
// over (a refused tool call, an error event).
func (r *reply) take(ev core.StreamEvent, res *streamResult, emit func(core.EventType, core.DeltaPayload)) (capped *outputCap, stop bool) {
	switch ev.Kind {
	case core.StreamText:
		var s string
		s, capped = r.add(core.SegmentText, &r.text, ev.Text, r.lim.TextBytes, r.lim.textCap)
		if s != "" {
			emit(core.EventMessageDelta, core.DeltaPayload{Text: s})
		}
	case core.StreamReasoning:
		var s string
		s, capped = r.add(core.SegmentReasoning, &r.reasoning, ev.Text, r.lim.ReasoningBytes, r.lim.reasoningCap)
		if s != "" {
			emit(core.EventReasoningDelta, core.DeltaPayload{Text: s})
		}
	case core.StreamToolCall:
		d := ev.ToolCall
		if d == nil {
			return nil, false
		}
		acc, s, reached := r.addCall(d)
		idx := d.Index
		if s != "" || d.Arguments == "" {
			emit(core.EventToolCallDelta, core.DeltaPayload{Text: s, ToolCallIndex: &idx, ToolCallID: acc.id, ToolName: acc.name})
		}
		if reached != nil && reached.what == "args" {
			// The call is refused; nothing after it is read (the
			// rest of its arguments is what the cap is for).
			acc.over, res.truncated = true, true
			return nil, true
		}
		capped = reached
	case core.StreamUsage:
		if ev.Usage != nil {
			u := *ev.Usage
			res.usage = &u
		}
	case core.StreamState:
		res.state = append([]byte(nil), ev.State...)
	case core.StreamDone:
		res.finish, res.refusal = ev.FinishReason, ev.Refusal
	case core.StreamError:
		if ev.Err != nil {
			res.err = ev.Err
		} else {
			res.err = &core.ProviderError{Category: core.ProviderServer, Message: "the provider reported an unknown error"}
		}
		return nil, true
	}
	return capped, false
}

// newReply starts a reply; left is what the turn may still spend of its
// output token budget, counted at four bytes per token.
func newReply(lim OutputLimits, left int64) *reply {
	r := &reply{lim: lim, budget: math.MaxInt, calls: map[int]*callAcc{}}
	if left > 0 && left < math.MaxInt/4 {
		r.budget = int(left) * 4
	}
	return r
}

func (r *reply) grow(kind string, before, after int) {
	if n := len(r.segs); n > 0 && r.segs[n-1].Kind == kind {
		r.segs[n-1].End = after
		return
	}
	r.segs = append(r.segs, core.Segment{Kind: kind, Start: before, End: after})
}

// fit cuts s, to be added to have bytes, to the room left under limit and
// under the turn's token budget (on a character boundary); it returns the
// cap it reached, if any.
func (r *reply) fit(have int, s string, limit int, reached func() outputCap) (string, *outputCap) {
	if room := have + r.budget - r.out; room < limit {
		limit, reached = room, r.lim.tokensCap
	}
	if have+len(s) <= limit {
		return s, nil
	}
	c := reached()
	return string(trimCutRune([]byte(s[:max(limit-have, 0)]))), &c
}

// add appends what fits of a text or reasoning delta s to buf; it returns
// what was kept and the cap reached, if any.
func (r *reply) add(kind string, buf *[]byte, s string, limit int, reached func() outputCap) (string, *outputCap) {
	kept, capped := r.fit(len(*buf), s, limit, reached)
	if kept != "" {
		r.grow(kind, len(*buf), len(*buf)+len(kept))
		*buf = append(*buf, kept...)
		r.out += len(kept)
	}
	return kept, capped
}

// addCall adds a tool call delta to the call of its index; it returns the
// call, the part of the arguments kept and the cap reached, if any.
func (r *reply) addCall(d *core.ToolCallDelta) (*callAcc, string, *outputCap) {
	acc := r.calls[d.Index]
	if acc == nil {
		acc = &callAcc{}
		r.calls[d.Index] = acc
		r.segs = append(r.segs, core.Segment{Kind: core.SegmentToolCall, Start: d.Index})
	}
	if d.ID != "" {
		acc.id = d.ID
	}
	if d.Name != "" {
		acc.name = d.Name
	}
	s, reached := r.fit(len(acc.args), d.Arguments, r.lim.ToolArgsBytes, func() outputCap { return outputCap{what: "args"} })
	acc.args = append(acc.args, s...)
	r.out += len(s)
	return acc, s, reached
}

// finish sets res's text, reasoning, tool calls (assembled in index order)
// and segments.
func (r *reply) finish(res *streamResult) {
	res.text, res.reasoning = string(r.text), string(r.reasoning)
	idxs := make([]int, 0, len(r.calls))
	for i := range r.calls {
		idxs = append(idxs, i)
	}
	sort.Ints(idxs)
	for _, i := range idxs {
		c := r.calls[i]
		input := json.RawMessage(c.args)
		switch {
		case len(c.args) == 0:
			input = json.RawMessage("{}")
		case c.over || !json.Valid(c.args):
			// Keep what the model sent, as a JSON string, so the history
			// stays valid JSON and the model can read its mistake.
			input, _ = json.Marshal(string(c.args))
		}
		id := c.id
		if id == "" {
			id = core.NewID("call")
		}
		res.calls = append(res.calls, core.ToolCall{ID: id, Name: c.name, Input: input, Truncated: c.over})
		c.id = id
	}
	for _, sg := range r.segs {
		if sg.Kind == core.SegmentToolCall {
			sg = core.Segment{Kind: core.SegmentToolCall, ToolCallID: r.calls[sg.Start].id}
		}
		if sg.Kind == core.SegmentToolCall || sg.End > sg.Start {
			res.segments = append(res.segments, sg)
		}
	}
}

// estimateTokens is the local estimate used when a provider reports no
// usage: about four bytes of text per token.
func estimateTokens(n int) int64 { return int64((n + 3) / 4) }

// usageRecorder records the usage of model requests on their sessions.
type usageRecorder struct {
	svc *session.Service
	log *slog.Logger
}

// recordUsage writes a usage event (and so a ledger row) for one request:
// the provider's report, or a local estimate marked as such (PRV-11).
func (rec usageRecorder) recordUsage(ctx context.Context, sessionID string, b boundModel, req core.ProviderRequest, res streamResult, purpose string) {
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
		u = &core.Usage{InputTokens: localTokens(req), OutputTokens: estimateTokens(out), Estimated: true}
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
	if telemetry.On() {
		usageMetrics(b, b.project, *u)
	}
	if err := appendEvent(ctx, rec.svc, sessionID, core.EventUsage, core.UsagePayload{Usage: *u, Route: b.route, ConnectionID: b.conn.ID, Purpose: purpose}); err != nil && !errors.Is(err, core.ErrNotFound) {
		rec.log.Error("record usage", "session_id", sessionID, "err", err)
	}
}
