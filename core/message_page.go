package core

import (
	"context"
	"unicode/utf8"
)

// Bounds of reading a session's messages in pages (docs/limits.md).
const (
	// MaxMessagePage bounds first and last of Session.messages.
	MaxMessagePage = 1000
	// LiveMessageTextBytes bounds the text (and the reasoning) of the
	// message a live sessionEvents event carries: a longer one is cut to its
	// first LiveMessageTextBytes (on a character boundary) and the event is
	// marked; clients page the rest with Message.text(offset:, limit:).
	LiveMessageTextBytes = 1 << 20
)

// MessageQuery selects a page of a session's messages in seq order.
type MessageQuery struct {
	IncludeInactive bool
	// AfterSeq and BeforeSeq bound the seqs (exclusive); 0 is unbounded.
	AfterSeq, BeforeSeq int64
	// Limit is the most messages returned; 0 is all.
	Limit int
	// Last selects the Limit newest messages of the range instead of the
	// oldest (still returned in seq order).
	Last bool
}

// MessagePager reads a page of the messages projection through an index on
// (session, seq), without reading the rest of the session.
type MessagePager interface {
	MessagePage(ctx context.Context, sessionID string, q MessageQuery) ([]Message, error)
}

// TextBoundary moves byte offset i of s back to the start of the character
// it falls in (a UTF-8 continuation byte is never a start), clamped to
// [0, len(s)].
func TextBoundary(s string, i int) int {
	if i <= 0 {
		return 0
	}
	if i >= len(s) {
		return len(s)
	}
	for j := 0; j < utf8.UTFMax-1 && i > 0 && !utf8.RuneStart(s[i]); j++ {
		i--
	}
	return i
}

// TextPage is bytes [offset, offset+limit) of s with both ends moved back
// to a character boundary (TextBoundary), so that the pages at offsets 0,
// L, 2L, … concatenate to s, each character in exactly one page. limit < 0
// is the rest of s.
func TextPage(s string, offset, limit int) string {
	start := TextBoundary(s, offset)
	end := len(s)
	if limit >= 0 && offset < len(s)-limit {
		end = TextBoundary(s, offset+limit)
	}
	if end < start {
		return ""
	}
	return s[start:end]
}

// CutText is s cut to at most n bytes on a character boundary, and whether
// it was cut.
func CutText(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	return s[:TextBoundary(s, n)], true
}

// CutForLive cuts m's text and reasoning to LiveMessageTextBytes for a live
// event (segments are clipped to match) and reports whether it cut
// anything; m.TextBytes then holds the whole text's size.
func CutForLive(m *Message) bool {
	full := len(m.Text)
	text, cutText := CutText(m.Text, LiveMessageTextBytes)
	reasoning, cutReasoning := CutText(m.Reasoning, LiveMessageTextBytes)
	if !cutText && !cutReasoning {
		return false
	}
	m.Text, m.Reasoning, m.TextBytes = text, reasoning, full
	if len(m.Segments) > 0 {
		segs := make([]Segment, 0, len(m.Segments))
		for _, sg := range m.Segments {
			n := -1
			switch sg.Kind {
			case SegmentText:
				n = len(m.Text)
			case SegmentReasoning:
				n = len(m.Reasoning)
			}
			if n >= 0 {
				if sg.Start >= n {
					continue
				}
				sg.End = min(sg.End, n)
			}
			segs = append(segs, sg)
		}
		m.Segments = segs
	}
	return true
}
