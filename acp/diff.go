package acp

import "strings"

// fileDiff is one file of a unified diff, as the old and new text of its
// hunks (the whole file for a created one).
type fileDiff struct {
	path             string
	oldText, newText string
	created          bool
}

// parseUnifiedDiff splits a unified diff (the tool message's diff) into
// files; hunks of one file are joined in order.
func parseUnifiedDiff(d string) []fileDiff {
	var out []fileDiff
	var cur *fileDiff
	var oldB, newB strings.Builder
	flush := func() {
		if cur != nil && (oldB.Len() > 0 || newB.Len() > 0) {
			cur.oldText, cur.newText = oldB.String(), newB.String()
			out = append(out, *cur)
		}
		cur = nil
		oldB.Reset()
		newB.Reset()
	}
	lines := strings.SplitAfter(d, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") {
			flush()
			from := strings.TrimSpace(strings.TrimPrefix(l, "--- "))
			to := strings.TrimSpace(strings.TrimPrefix(lines[i+1], "+++ "))
			i++
			p := strings.TrimPrefix(to, "b/")
			if to == "/dev/null" {
				p = strings.TrimPrefix(from, "a/")
			}
			cur = &fileDiff{path: p, created: from == "/dev/null"}
			continue
		}
		if cur == nil || l == "" {
			continue
		}
		switch l[0] {
		case ' ':
			oldB.WriteString(l[1:])
			newB.WriteString(l[1:])
		case '-':
			oldB.WriteString(l[1:])
		case '+':
			newB.WriteString(l[1:])
		}
	}
	flush()
	return out
}
