package graph

import (
	"context"

	"github.com/foya-dev/foya/core"
)

// unpagedMessagesPage is how many messages an unpaged Session.messages
// reads from the store at a time while it checks that they fit one
// response.
const unpagedMessagesPage = 500

// messages serves Session.messages: a page (first/afterSeq,
// last/beforeSeq) read through the store's (session, seq) index, or,
// without first and last, every message in the range read page by page
// until they no longer fit the response, which is then refused with
// BAD_INPUT naming the paging arguments (never read further).
func (r *Resolver) messages(ctx context.Context, sessionID string, includeInactive bool, first, afterSeq, last, beforeSeq *int64) ([]core.Message, error) {
	q := core.MessageQuery{IncludeInactive: includeInactive}
	if afterSeq != nil {
		if *afterSeq < 0 {
			return nil, core.Errorf(core.CodeBadInput, "messages: afterSeq must be 0 or more")
		}
		q.AfterSeq = *afterSeq
	}
	if beforeSeq != nil {
		if *beforeSeq < 1 {
			return nil, core.Errorf(core.CodeBadInput, "messages: beforeSeq must be 1 or more")
		}
		q.BeforeSeq = *beforeSeq
	}
	if first != nil && last != nil {
		return nil, core.Errorf(core.CodeBadInput, "messages: give first (with afterSeq) or last (with beforeSeq), not both")
	}
	for _, n := range []struct {
		name string
		v    *int64
	}{{"first", first}, {"last", last}} {
		if n.v == nil {
			continue
		}
		if *n.v < 1 || *n.v > core.MaxMessagePage {
			return nil, core.Errorf(core.CodeBadInput, "messages: %s must be between 1 and %d", n.name, core.MaxMessagePage)
		}
		q.Limit, q.Last = int(*n.v), n.name == "last"
	}
	if q.AfterSeq > 0 && q.BeforeSeq > 0 && q.BeforeSeq <= q.AfterSeq+1 {
		return []core.Message{}, nil
	}
	if q.Limit > 0 {
		return r.Service.MessagePage(ctx, sessionID, q)
	}
	b, _ := ctx.Value(budgetKey{}).(*responseBudget)
	limit, left := int64(MaxResponseBytes), int64(MaxResponseBytes)
	if b != nil {
		limit, left = b.max, b.left.Load()
	}
	out := []core.Message{}
	var size int64
	q.Limit = unpagedMessagesPage
	for {
		page, err := r.Service.MessagePage(ctx, sessionID, q)
		if err != nil {
			return nil, err
		}
		for i := range page {
			size += approxMessageBytes(&page[i])
		}
		if size > limit {
			return nil, core.Errorf(core.CodeBadInput,
				"the messages of session %s are larger than one response can carry (%s, the response size limit): page them with "+
					"messages(last: 50) for the newest, then messages(last: 50, beforeSeq: <the first seq you have>) backward or "+
					"messages(first: 50, afterSeq: <the last seq you have>) forward (first and last: 1 to %d); "+
					"Message.text(offset:, limit:) pages one long text", sessionID, ByteSize(limit), core.MaxMessagePage)
		}
		if size > left {
			// Over what is left of this response but maybe not over the
			// limit: only counted on (not kept) to tell which refusal.
			out = nil
		} else {
			out = append(out, page...)
		}
		if len(page) < q.Limit {
			if size > left {
				// They would fit a response of their own: this response is
				// what is too large, and is refused whole whichever of its
				// fields was resolved first.
				return nil, b.refuse()
			}
			return out, nil
		}
		q.AfterSeq = page[len(page)-1].Seq
	}
}

// approxMessageBytes estimates what a message adds to a response with its
// content selected: its strings and JSON, plus the fixed fields.
func approxMessageBytes(m *core.Message) int64 {
	n := int64(len(m.Text) + len(m.Reasoning) + len(m.Diff) + len(m.StructuredContent) + 256)
	for _, tc := range m.ToolCalls {
		n += int64(len(tc.Input) + len(tc.Name) + len(tc.ID) + 32)
	}
	for _, be := range m.BrowserElements {
		n += int64(len(be.HTML) + len(be.Text) + len(be.URL) + 64)
	}
	n += int64(len(m.Attachments)*200 + len(m.FileChanges)*200)
	return n
}

// messageText serves Message.text(offset:, limit:) (byte offsets, see
// core.TextPage).
func messageText(m *core.Message, offset, limit *int64) (string, error) {
	if offset == nil && limit == nil {
		return m.Text, nil
	}
	off, lim := int64(0), int64(-1)
	if offset != nil {
		if *offset < 0 {
			return "", core.Errorf(core.CodeBadInput, "text: offset must be 0 or more")
		}
		off = *offset
	}
	if limit != nil {
		if *limit < 0 {
			return "", core.Errorf(core.CodeBadInput, "text: limit must be 0 or more")
		}
		lim = *limit
	}
	if off >= int64(len(m.Text)) {
		return "", nil
	}
	if lim > int64(len(m.Text)) {
		lim = -1
	}
	return core.TextPage(m.Text, int(off), int(lim)), nil
}

// sessionPage is the paging of Query.sessions (first, after).
func sessionPage(first *int64, after *string) (core.SessionFilter, error) {
	var f core.SessionFilter
	if first != nil {
		if *first < 1 || *first > core.MaxMessagePage {
			return f, core.Errorf(core.CodeBadInput, "sessions: first must be between 1 and %d", core.MaxMessagePage)
		}
		f.First = int(*first)
	}
	if after != nil {
		if *after == "" {
			return f, core.Errorf(core.CodeBadInput, "sessions: after must be a session id")
		}
		f.After = *after
	}
	return f, nil
}
