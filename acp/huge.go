package acp

import (
	"context"
	"fmt"

	"github.com/foya-dev/foya/client"
)

// sessionPaged loads a session whose messages do not fit one response
// (docs/limits.md): the session, then its messages page by page; a page
// too large for a response is retried with fewer messages, down to one.
func (a *Agent) sessionPaged(ctx context.Context, id string) (*client.ACPSessionWithMessagesResponse, error) {
	info, err := client.ACPSession(ctx, a.k, id)
	if err != nil || info.Session == nil {
		return &client.ACPSessionWithMessagesResponse{}, err
	}
	out := &client.ACPSessionWithMessagesResponse{Session: &client.ACPSessionWithMessagesSession{ACPSessionFields: info.Session.ACPSessionFields}}
	var after *int
	for n := 50; ; {
		resp, err := client.ACPMessagesPage(ctx, a.k, id, after, n)
		if err != nil && client.ErrorCode(err) == "BAD_INPUT" && n > 1 {
			n /= 2
			continue
		}
		if err != nil {
			return nil, err
		}
		if resp.Session == nil {
			return nil, &client.Error{Message: fmt.Sprintf("session %s not found", id), Code: "NOT_FOUND"}
		}
		msgs := resp.Session.Messages
		for _, m := range msgs {
			out.Session.Messages = append(out.Session.Messages, client.ACPSessionWithMessagesSessionMessagesMessage(m))
		}
		if len(msgs) < n {
			return out, nil
		}
		last := msgs[len(msgs)-1].Seq
		after = &last
	}
}

// wholeMessage replaces the cut text of a truncated live message (over
// 1 MiB, SessionEvent.messageTruncated) by the whole text, read by paging;
// on failure the event goes on with the first 1 MiB (logged): the agent
// never stops on it.
func (s *session) wholeMessage(ev *gqlEvent, m *client.ACPSessionEventsSessionEventsSessionEventMessage) {
	if ev.Message == nil || ev.Seq == nil || m == nil || m.TextBytes <= len(ev.Message.Text) {
		return
	}
	text, err := client.MessageText(s.ctx, s.a.k, s.id, *ev.Seq, m.TextBytes)
	if err != nil {
		s.a.log.Warn("acp: read the whole text of a long message", "session_id", s.id, "seq", *ev.Seq, "bytes", m.TextBytes, "err", err)
		return
	}
	ev.Message.Text = text
}
