package tools

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestUnifiedDiffGolden(t *testing.T) {
	cases := []struct {
		name          string
		before, after string
		bx, ax        bool
		want          string
	}{
		{"one line changed", "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n", "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\n", true, true,
			"--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n", "one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\nfifteen\n", true, true,
			"--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n@@ -12,4 +12,4 @@\n 12\n 13\n 14\n-15\n+fifteen\n"},
		{"close changes share a hunk", "1\n2\n3\n4\n5\n6\n7\n8\n", "x\n2\n3\n4\n5\n6\n7\ny\n", true, true,
			"--- a/f\n+++ b/f\n@@ -1,8 +1,8 @@\n-1\n+x\n 2\n 3\n 4\n 5\n 6\n 7\n-8\n+y\n"},
		{"insert in the middle", "a\nb\nc\n", "a\nb\nnew\nc\n", true, true,
			"--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n a\n b\n+new\n c\n"},
		{"newline added at end", "a\nb", "a\nb\n", true, true,
			"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
		{"create", "", "x\n", false, true, "--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+x\n"},
		{"delete", "x\ny\n", "", true, false, "--- a/f\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y\n"},
		{"empty file created", "", "", false, true, "--- /dev/null\n+++ b/f\n"},
		{"binary", "a\x00", "b\x00", true, true, "--- a/f\n+++ b/f\n" + tooLargeLine},
		{"equal", "same\n", "same\n", true, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b, a []byte
			if tc.bx {
				b = []byte(tc.before)
			}
			if tc.ax {
				a = []byte(tc.after)
			}
			if got := unifiedDiff("f", b, a, tc.bx, tc.ax); got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestUnifiedDiffApplies checks on random edits that applying the diff's
// hunks to the old lines gives the new ones, including past diffMaxEdits.
func TestUnifiedDiffApplies(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 300; i++ {
		n := r.IntN(60)
		if i%50 == 0 {
			n = 3000
		}
		var a []string
		for j := 0; j < n; j++ {
			a = append(a, strconv.Itoa(r.IntN(8))+"\n")
		}
		b := append([]string(nil), a...)
		edits := r.IntN(10)
		if i%50 == 0 {
			edits = 2500 // more than diffMaxEdits
		}
		for e := 0; e < edits; e++ {
			p := r.IntN(len(b) + 1)
			switch r.IntN(3) {
			case 0:
				b = append(b[:p], append([]string{"new" + strconv.Itoa(e) + "\n"}, b[p:]...)...)
			case 1:
				if p < len(b) {
					b = append(b[:p], b[p+1:]...)
				}
			default:
				if p < len(b) {
					b[p] = "chg\n"
				}
			}
		}
		before, after := strings.Join(a, ""), strings.Join(b, "")
		d := unifiedDiff("f", []byte(before), []byte(after), true, true)
		got, err := applyDiff(a, d)
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, d)
		}
		if got != after {
			t.Fatalf("case %d: applying the diff gives\n%q\nwant\n%q\ndiff\n%s", i, got, after, d)
		}
	}
}

// applyDiff applies the hunks of a one-file unified diff to old.
func applyDiff(old []string, diff string) (string, error) {
	if diff == "" {
		return strings.Join(old, ""), nil
	}
	lines := strings.SplitAfter(diff, "\n")
	var out []string
	pos := 0
	for i := 2; i < len(lines) && lines[i] != ""; i++ {
		l := lines[i]
		if strings.HasPrefix(l, "@@") {
			var start int
			if _, err := fmt.Sscanf(l, "@@ -%d", &start); err != nil {
				return "", fmt.Errorf("bad hunk header %q", l)
			}
			if !strings.HasPrefix(l, fmt.Sprintf("@@ -%d,0 ", start)) {
				start-- // to a 0-based index, except for empty ranges
			}
			if start < pos {
				return "", fmt.Errorf("hunk at %d overlaps", start)
			}
			out = append(out, old[pos:start]...)
			pos = start
			continue
		}
		switch l[0] {
		case ' ', '-':
			if pos >= len(old) || old[pos] != l[1:] {
				return "", fmt.Errorf("line %d: context %q does not match %q", pos, l, old[min(pos, len(old)-1)])
			}
			if l[0] == ' ' {
				out = append(out, old[pos])
			}
			pos++
		case '+':
			out = append(out, l[1:])
		default:
			return "", fmt.Errorf("unexpected line %q", l)
		}
	}
	out = append(out, old[pos:]...)
	return strings.Join(out, ""), nil
}

func TestDiffPastEditCap(t *testing.T) {
	if _, ok := myers([]string{"a", "b", "c"}, []string{"x", "y", "z"}, 2); ok {
		t.Fatal("myers went past its edit cap")
	}
	ops := diffLines([]string{"k\n", "a\n", "b\n", "k\n"}, []string{"k\n", "x\n", "y\n", "k\n"})
	var kinds string
	for _, op := range ops {
		kinds += string(op.kind)
	}
	if kinds != " --++ " {
		t.Fatalf("ops %q", kinds)
	}
}
