package model

import (
	"encoding/json"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/graph/scalar"
)

// SessionEvent is the GraphQL view of a core.Event. Its fields are methods
// without a context, so gqlgen resolves them inline, one after the other:
// a resolver field would cost a goroutine per field per event, and a
// stream of deltas executes this selection thousands of times per reply.
type SessionEvent struct {
	Event core.Event
	// Live marks an event of the sessionEvents subscription: a message
	// larger than core.LiveMessageTextBytes is cut (MessageTruncated).
	Live bool
}

// NewSessionEvent wraps ev as a live event (the sessionEvents subscription).
func NewSessionEvent(ev core.Event) *SessionEvent { return &SessionEvent{Event: ev, Live: true} }

// mayCut reports whether the event is a live message event large enough
// that its message may be cut (a cheap test before decoding).
func (e *SessionEvent) mayCut() bool {
	return e.Live && (e.Event.Type == core.EventMessageEnd || e.Event.Type == core.EventMessageImported) &&
		len(e.Event.Payload) > core.LiveMessageTextBytes
}

// MessageTruncated reports whether a live event's message was cut.
func (e *SessionEvent) MessageTruncated() (bool, error) {
	if !e.mayCut() {
		return false, nil
	}
	m, err := e.Message()
	if m == nil || err != nil {
		return false, err
	}
	return m.TextBytes > 0, nil
}

// Seq is null for live-only events.
func (e *SessionEvent) Seq() *int64 {
	if e.Event.Seq == 0 {
		return nil
	}
	return &e.Event.Seq
}

// Type is the event type.
func (e *SessionEvent) Type() string { return string(e.Event.Type) }

// At is when the event happened.
func (e *SessionEvent) At() time.Time { return e.Event.At }

// SessionID is the session the event belongs to.
func (e *SessionEvent) SessionID() string { return e.Event.SessionID }

// Message is the message of message_end and message_imported.
func (e *SessionEvent) Message() (*core.Message, error) {
	if e.Event.Type != core.EventMessageEnd && e.Event.Type != core.EventMessageImported {
		return nil, nil
	}
	var p core.MessagePayload
	if err := e.Event.Decode(&p); err != nil {
		return nil, err
	}
	p.Message.Seq, p.Message.Active = e.Event.Seq, true
	if e.Live {
		core.CutForLive(&p.Message)
	}
	return &p.Message, nil
}

func (e *SessionEvent) delta() (*core.DeltaPayload, error) {
	if !e.Event.Type.IsDelta() {
		return nil, nil
	}
	if e.Event.Delta != nil {
		return e.Event.Delta, nil
	}
	var p core.DeltaPayload
	if err := e.Event.Decode(&p); err != nil {
		return nil, err
	}
	return &p, nil
}

// Delta is the text of a delta event.
func (e *SessionEvent) Delta() (*string, error) {
	p, err := e.delta()
	if p == nil || err != nil {
		return nil, err
	}
	return &p.Text, nil
}

// ToolCallIndex is the tool call index of tool_call_delta.
func (e *SessionEvent) ToolCallIndex() (*int64, error) {
	p, err := e.delta()
	if p == nil || p.ToolCallIndex == nil || err != nil {
		return nil, err
	}
	i := int64(*p.ToolCallIndex)
	return &i, nil
}

// Phase is the phase of phase_changed.
func (e *SessionEvent) Phase() (*core.Phase, error) {
	if e.Event.Type != core.EventPhaseChanged {
		return nil, nil
	}
	var p core.PhasePayload
	if err := e.Event.Decode(&p); err != nil {
		return nil, err
	}
	return &p.Phase, nil
}

// Queue is the queue of queue_snapshot.
func (e *SessionEvent) Queue() ([]core.QueueItem, error) {
	if e.Event.Type != core.EventQueueSnapshot {
		return nil, nil
	}
	var p core.QueuePayload
	if err := e.Event.Decode(&p); err != nil {
		return nil, err
	}
	if p.Items == nil {
		p.Items = []core.QueueItem{}
	}
	return p.Items, nil
}

// Approval is the request of approval_requested and approval_resolved.
func (e *SessionEvent) Approval() (*core.ApprovalPayload, error) {
	if e.Event.Type != core.EventApprovalRequested && e.Event.Type != core.EventApprovalResolved {
		return nil, nil
	}
	var p core.ApprovalPayload
	if err := e.Event.Decode(&p); err != nil {
		return nil, err
	}
	return &p, nil
}

// Usage is the usage of a usage event.
func (e *SessionEvent) Usage() (*core.Usage, error) {
	if e.Event.Type != core.EventUsage {
		return nil, nil
	}
	var p core.UsagePayload
	if err := e.Event.Decode(&p); err != nil {
		return nil, err
	}
	if p.Usage.Cost == nil {
		p.Usage.UnpricedTokens = p.Usage.TotalTokens
	}
	return &p.Usage, nil
}

// Payload is the event payload as clients see it: provider-native state is
// never shown (core.ClientPayload).
// A live event's cut message is cut in the payload too, which then says so
// with "messageTruncated": true and the whole text's "textBytes".
func (e *SessionEvent) Payload() scalar.JSON {
	if e.mayCut() {
		var p core.MessagePayload
		if err := e.Event.Decode(&p); err == nil && core.CutForLive(&p.Message) {
			p.Message.ProviderState = nil
			out, err := json.Marshal(struct {
				core.MessagePayload
				MessageTruncated bool `json:"messageTruncated"`
				TextBytes        int  `json:"textBytes"`
			}{p, true, p.Message.TextBytes})
			if err == nil {
				return scalar.JSON(out)
			}
		}
	}
	return scalar.JSON(core.ClientPayload(&e.Event))
}

// GuardianVerdict is the verdict of guardian_verdict.
func (e *SessionEvent) GuardianVerdict() (*core.GuardianVerdictPayload, error) {
	if e.Event.Type != core.EventGuardianVerdict {
		return nil, nil
	}
	var p core.GuardianVerdictPayload
	if err := e.Event.Decode(&p); err != nil {
		return nil, err
	}
	return &p, nil
}
