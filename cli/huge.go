package cli

import (
	"context"
	"fmt"

	"github.com/foya-dev/foya/client"
)

// Reading huge sessions (docs/limits.md): their messages do not fit one
// response, so commands page them, and a message text over a page is read
// in pieces with Message.text(offset:, limit:).
const (
	// messagesPage is how many messages one page reads.
	messagesPage = 20
	// textPage is the most text bytes of one message a page carries.
	textPage = 512 << 10
)

// sessionPaged loads a session and all its messages page by page, for a
// session too large for the one-request Session query.
func sessionPaged(ctx context.Context, c *client.Client, id string) (*client.SessionResponse, error) {
	info, err := client.SessionInfo(ctx, c, id)
	if err != nil {
		return nil, err
	}
	out := &client.SessionResponse{}
	for _, cn := range info.Connections {
		out.Connections = append(out.Connections, client.SessionConnectionsConnection(cn))
	}
	if info.Session == nil {
		return out, nil
	}
	out.Session = &client.SessionSession{SessionFields: info.Session.SessionFields}
	var after *int
	for {
		resp, err := client.SessionMessagesPage(ctx, c, id, after, messagesPage, textPage)
		if err != nil {
			return nil, err
		}
		if resp.Session == nil {
			return nil, &client.Error{Message: fmt.Sprintf("session %s not found", id), Code: "NOT_FOUND"}
		}
		msgs := resp.Session.Messages
		for _, m := range msgs {
			text := m.Text
			if m.TextBytes > len(text) {
				if text, err = client.MessageText(ctx, c, id, m.Seq, m.TextBytes); err != nil {
					return nil, err
				}
			}
			mf := client.MessageFields{Seq: m.Seq, Role: m.Role, Text: text, ToolName: m.ToolName, IsError: m.IsError,
				TurnStatus: m.TurnStatus, TurnReason: m.TurnReason}
			for _, tc := range m.ToolCalls {
				mf.ToolCalls = append(mf.ToolCalls, client.MessageFieldsToolCallsToolCall(tc))
			}
			sm := client.SessionSessionMessagesMessage{MessageFields: mf}
			for _, a := range m.Attachments {
				sm.Attachments = append(sm.Attachments, client.SessionSessionMessagesMessageAttachmentsAttachment(a))
			}
			out.Session.Messages = append(out.Session.Messages, sm)
		}
		if len(msgs) < messagesPage {
			return out, nil
		}
		last := msgs[len(msgs)-1].Seq
		after = &last
	}
}

// wholeMessage replaces the cut text of a truncated live message by the
// whole text, read by paging. A failure is a note, never the end of the
// command: the turn goes on and the first 1 MiB is shown.
func (t *turnWatch) wholeMessage(ctx context.Context, ev *execEvent) {
	m := ev.Message
	if m == nil || ev.Seq == nil || m.TextBytes <= len(m.Text) {
		return
	}
	text, err := client.MessageText(ctx, t.c, t.sessionID, *ev.Seq, m.TextBytes)
	if err != nil {
		t.pr.note("message %d is %d bytes; showing its first %d (reading the rest failed: %v)", *ev.Seq, m.TextBytes, len(m.Text), err)
		return
	}
	m.Text = text
}
