package tools

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Diff limits: files with more lines, binary files, or files over the size
// cap get one line instead of hunks; an edit distance over diffMaxEdits
// becomes a single hunk that replaces the whole differing middle.
const (
	diffContext  = 3
	diffMaxLines = 50000
	diffMaxEdits = 1000
	tooLargeLine = "binary or too large to diff\n"
)

type diffOp struct {
	kind byte // ' ', '-' or '+'
	line string
	a, b int // lines of a and b before this op
}

// unifiedDiff returns a unified diff of one file with diffContext lines of
// context, or "" when the contents are equal.
func unifiedDiff(path string, before, after []byte, beforeExists, afterExists bool) string {
	if beforeExists == afterExists && bytes.Equal(before, after) {
		return ""
	}
	head := diffHeader(path, beforeExists, afterExists)
	if isBinary(before) || isBinary(after) {
		return head + tooLargeLine
	}
	a, b := splitLines(before), splitLines(after)
	if len(a) > diffMaxLines || len(b) > diffMaxLines {
		return head + tooLargeLine
	}
	var out strings.Builder
	out.WriteString(head)
	writeHunks(&out, diffLines(a, b))
	return out.String()
}

func diffHeader(path string, beforeExists, afterExists bool) string {
	from, to := "a/"+path, "b/"+path
	if !beforeExists {
		from = "/dev/null"
	}
	if !afterExists {
		to = "/dev/null"
	}
	return "--- " + from + "\n+++ " + to + "\n"
}

// isBinary reports data a line diff makes no sense of.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data)
}

// splitLines splits after each "\n"; a last line without one keeps none.
func splitLines(data []byte) []string {
	var out []string
	s := string(data)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// diffLines returns the edit script from a to b: common prefix and suffix
// are trimmed, the middle is diffed with Myers' algorithm, and past
// diffMaxEdits edits the middle is replaced wholesale.
func diffLines(a, b []string) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []diffOp
	for i := 0; i < pre; i++ {
		ops = append(ops, diffOp{kind: ' ', line: a[i]})
	}
	mid, ok := myers(a[pre:len(a)-suf], b[pre:len(b)-suf], diffMaxEdits)
	if !ok {
		mid = mid[:0]
		for _, l := range a[pre : len(a)-suf] {
			mid = append(mid, diffOp{kind: '-', line: l})
		}
		for _, l := range b[pre : len(b)-suf] {
			mid = append(mid, diffOp{kind: '+', line: l})
		}
	}
	ops = append(ops, mid...)
	for i := len(a) - suf; i < len(a); i++ {
		ops = append(ops, diffOp{kind: ' ', line: a[i]})
	}
	ai, bi := 0, 0
	for i := range ops {
		ops[i].a, ops[i].b = ai, bi
		if ops[i].kind != '+' {
			ai++
		}
		if ops[i].kind != '-' {
			bi++
		}
	}
	return ops
}

// myers computes a shortest edit script, giving up past maxD edits. It keeps
// one window of the V array per step: O(D²) memory, O((N+M)·D) time.
func myers(a, b []string, maxD int) ([]diffOp, bool) {
	n, m := len(a), len(b)
	maxD = min(maxD, n+m)
	off := maxD + 1
	v := make([]int32, 2*maxD+3)
	var trace [][]int32
	end := -1
	for d := 0; d <= maxD && end < 0; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = int(v[off+k+1])
			} else {
				x = int(v[off+k-1]) + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = int32(x)
			if x >= n && y >= m {
				end = d
				break
			}
		}
		trace = append(trace, append([]int32(nil), v[off-d:off+d+1]...))
	}
	if end < 0 {
		return nil, false
	}
	get := func(d, k int) int { return int(trace[d][k+d]) }
	var rev []diffOp
	x, y := n, m
	for d := end; d > 0; d-- {
		k := x - y
		var pk int
		if k == -d || (k != d && get(d-1, k-1) < get(d-1, k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := get(d-1, pk)
		py := px - pk
		for x > px && y > py {
			x, y = x-1, y-1
			rev = append(rev, diffOp{kind: ' ', line: a[x]})
		}
		if pk == k+1 {
			rev = append(rev, diffOp{kind: '+', line: b[py]})
		} else {
			rev = append(rev, diffOp{kind: '-', line: a[px]})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		rev = append(rev, diffOp{kind: ' ', line: a[x]})
	}
	out := make([]diffOp, 0, len(rev))
	for i := len(rev) - 1; i >= 0; i-- {
		out = append(out, rev[i])
	}
	return out, true
}

// writeHunks groups changes with diffContext lines around them; changes
// closer than twice the context share a hunk.
func writeHunks(out *strings.Builder, ops []diffOp) {
	i := 0
	for {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			return
		}
		lo := max(0, i-diffContext)
		hi := i
		for {
			for hi < len(ops) && ops[hi].kind != ' ' {
				hi++
			}
			eq := 0
			for hi+eq < len(ops) && ops[hi+eq].kind == ' ' {
				eq++
			}
			if hi+eq < len(ops) && eq <= 2*diffContext {
				hi += eq
				continue
			}
			hi += min(eq, diffContext)
			break
		}
		writeHunk(out, ops[lo:hi])
		i = hi
	}
}

func writeHunk(out *strings.Builder, ops []diffOp) {
	var na, nb int
	for _, op := range ops {
		if op.kind != '+' {
			na++
		}
		if op.kind != '-' {
			nb++
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(ops[0].a, na), hunkRange(ops[0].b, nb))
	for _, op := range ops {
		out.WriteByte(op.kind)
		out.WriteString(op.line)
		if !strings.HasSuffix(op.line, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange formats a range like GNU diff: an empty range names the line
// before it, a one-line range omits its length.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
