package session

import (
	"github.com/foya-dev/foya/core"
	"strings"
	"testing"
	"unicode/utf8"
)

// pagesOf reads s in pages of limit bytes at offsets 0, limit, 2·limit, …
func pagesOf(s string, limit int) []string {
	var out []string
	for off := 0; off < len(s); off += limit {
		out = append(out, core.TextPage(s, off, limit))
	}
	return out
}

func TestTextPageKeepsCharactersWhole(t *testing.T) {
	s := strings.Repeat("aé😀€", 100)
	for limit := 1; limit <= 13; limit++ {
		pages := pagesOf(s, limit)
		if got := strings.Join(pages, ""); got != s {
			t.Fatalf("limit %d: pages join to %q", limit, got)
		}
		for _, p := range pages {
			if !utf8.ValidString(p) {
				t.Fatalf("limit %d: page %q splits a character", limit, p)
			}
		}
	}
	if got := core.TextPage("héllo", 2, -1); got != "éllo" {
		t.Fatalf("offset inside é: %q", got)
	}
	if got := core.TextPage("héllo", 10, 5); got != "" {
		t.Fatalf("offset past the end: %q", got)
	}
}

func FuzzTextPage(f *testing.F) {
	f.Add("aé😀€", 3)
	f.Add(strings.Repeat("😀", 10), 1)
	f.Add("\xff\xfeabc", 2)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		if limit < 1 || limit > 64 {
			return
		}
		if got := strings.Join(pagesOf(s, limit), ""); got != s {
			t.Fatalf("pages of %q (limit %d) join to %q", s, limit, got)
		}
	})
}

func TestCutForLive(t *testing.T) {
	text := strings.Repeat("€", core.LiveMessageTextBytes/3+10) // 3-byte characters over the bound
	m := core.Message{Role: core.RoleAssistant, Text: text, Reasoning: "r", Segments: []core.Segment{
		{Kind: core.SegmentReasoning, Start: 0, End: 1}, {Kind: core.SegmentText, Start: 0, End: 30}, {Kind: core.SegmentText, Start: 30, End: len(text)}}}
	if !core.CutForLive(&m) {
		t.Fatal("not cut")
	}
	if m.TextBytes != len(text) || len(m.Text) > core.LiveMessageTextBytes || !utf8.ValidString(m.Text) || !strings.HasPrefix(text, m.Text) {
		t.Fatalf("cut to %d bytes, TextBytes %d", len(m.Text), m.TextBytes)
	}
	if last := m.Segments[len(m.Segments)-1]; last.End != len(m.Text) || m.Reasoning != "r" {
		t.Fatalf("segments %+v", m.Segments)
	}
	small := core.Message{Text: "short"}
	if core.CutForLive(&small) || small.TextBytes != 0 {
		t.Fatal("a short message was cut")
	}
}
