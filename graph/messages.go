package graph

import (
	"encoding/json"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/graph/model"
	"github.com/foya-dev/foya/graph/scalar"
)

// The fields of Message and QueueItem that are more than a copy.

// withTurnTimes fills in each turn's start and end on the messages of a
// page (Session.messages).
func withTurnTimes(msgs []core.Message, err error) ([]core.Message, error) {
	core.FillTurnTimes(msgs)
	return msgs, err
}

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
