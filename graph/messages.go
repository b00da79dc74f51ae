package graph

import (
	"context"
	"encoding/json"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/graph/model"
	"github.com/foya-dev/foya/graph/scalar"
)

// The fields of Message and QueueItem that are more than a copy.

// withTurnTimes fills in each turn's start and end on the messages of a
// page (Session.messages). A turn whose messages hold no end (it failed
// before any output, so only its user message was recorded) takes it from
// its turn_finished event, which follows them closely: the next
// turnEndSearch events are read, for each such turn of the page, unless the
// session is busy and the turn is its newest (still running).
func withTurnTimes(ctx context.Context, svc *session.Service, s *core.Session, msgs []core.Message, err error) ([]core.Message, error) {
	if err != nil {
		return msgs, err
	}
	core.FillTurnTimes(msgs)
	open := map[string]int64{} // turn → the seq of its first message here
	var order []string
	for _, m := range msgs {
		if m.TurnID == "" || m.TurnStartedAt == nil || m.TurnFinishedAt != nil {
			continue
		}
		if _, ok := open[m.TurnID]; !ok {
			open[m.TurnID] = m.Seq
			order = append(order, m.TurnID)
		}
	}
	if len(order) > 0 && s.Phase != core.PhaseIdle && msgs[len(msgs)-1].TurnID == order[len(order)-1] {
		order = order[:len(order)-1]
	}
	for _, turn := range order {
		evs, err := svc.Events(ctx, s.ID, open[turn], turnEndSearch)
		if err != nil {
			return msgs, err
		}
		for _, ev := range evs {
			var p core.TurnPayload
			if ev.Type != core.EventTurnFinished || json.Unmarshal(ev.Payload, &p) != nil || p.TurnID != turn || p.FinishedAt == nil {
				continue
			}
			for i := range msgs {
				if msgs[i].TurnID == turn && msgs[i].TurnFinishedAt == nil {
					t := *p.FinishedAt
					msgs[i].TurnFinishedAt = &t
				}
			}
			break
		}
	}
	return msgs, nil
}

// turnEndSearch is how many events after a turn's first message are read
// for its turn_finished (a turn without output has few).
const turnEndSearch = 200

// messageTextBytes is the length of the whole text, also of a message
// whose text was truncated for a live event.
func messageTextBytes(m *core.Message) int64 {
	if m.TextBytes > 0 {
		return int64(m.TextBytes)
	}
	return int64(len(m.Text))
}

// firstFileChange is Message.fileChange: the first file the message
// changed, or null.
func firstFileChange(m *core.Message) *core.FileChange {
	if len(m.FileChanges) == 0 {
		return nil
	}
	return &m.FileChanges[0]
}

// jsonOrNull maps empty JSON to null.
func jsonOrNull(raw json.RawMessage) scalar.JSON {
	if len(raw) == 0 {
		return nil
	}
	return scalar.JSON(raw)
}

// queueItemTextBytes is the length of the queued text, also of a
// queue_snapshot item that carries only a preview.
func queueItemTextBytes(q *core.QueueItem) int64 {
	if q.Truncated {
		return int64(q.TextBytes)
	}
	return int64(len(q.Input.Text))
}

// segments is the display order of an assistant message (MSG-11): the order
// recorded while it streamed, restricted to the tool calls the message kept.
// A message recorded without segments (or whose segments do not cover its
// text) gets the derived order: reasoning, then text, then its tool calls.
func segments(m *core.Message) []model.Segment {
	if m.Role != core.RoleAssistant {
		return []model.Segment{}
	}
	if out, ok := recordedSegments(m); ok {
		return out
	}
	out := []model.Segment{}
	if m.Reasoning != "" {
		out = append(out, model.Segment{Kind: "reasoning", Text: &m.Reasoning})
	}
	if m.Text != "" {
		out = append(out, model.Segment{Kind: "text", Text: &m.Text})
	}
	for i := range m.ToolCalls {
		out = append(out, model.Segment{Kind: "tool_call", ToolCallID: &m.ToolCalls[i].ID})
	}
	return out
}

func recordedSegments(m *core.Message) ([]model.Segment, bool) {
	if len(m.Segments) == 0 {
		return nil, false
	}
	kept := map[string]bool{}
	for _, c := range m.ToolCalls {
		kept[c.ID] = true
	}
	out := []model.Segment{}
	covered := map[string]int{}
	for _, sg := range m.Segments {
		var src string
		switch sg.Kind {
		case core.SegmentToolCall:
			if kept[sg.ToolCallID] {
				id := sg.ToolCallID
				out = append(out, model.Segment{Kind: sg.Kind, ToolCallID: &id})
				covered[sg.Kind]++
			}
			continue
		case core.SegmentText:
			src = m.Text
		case core.SegmentReasoning:
			src = m.Reasoning
		default:
			return nil, false
		}
		if sg.Start < 0 || sg.End > len(src) || sg.Start >= sg.End {
			return nil, false
		}
		text := src[sg.Start:sg.End]
		out = append(out, model.Segment{Kind: sg.Kind, Text: &text})
		covered[sg.Kind] += sg.End - sg.Start
	}
	if covered[core.SegmentText] != len(m.Text) || covered[core.SegmentReasoning] != len(m.Reasoning) || covered[core.SegmentToolCall] != len(m.ToolCalls) {
		return nil, false
	}
	return out, true
}
