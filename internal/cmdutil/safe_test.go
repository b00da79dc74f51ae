package cmdutil

import "testing"

func TestNeutralize(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\nwith\ttabs": "plain text\nwith\ttabs",
		"\x1b[31mred\x1b[0m":     "^[[31mred^[[0m",
		"title\x1b]0;pwned\x07":  "title^[]0;pwned^G",
		"over\rwrite":            "overwrite",
		"crlf\r\n":               "crlf\n",
		"c1 \u009b31m csi":       "c1 <U+009B>31m csi",
		"bidi \u202egnp.exe":     "bidi <U+202E>gnp.exe",
		"isolate \u2066x\u2069":  "isolate <U+2066>x<U+2069>",
		"del\x7f nul\x00 bs\x08": "del^? nul^@ bs^H",
		"ünïcode ✓ עברית":        "ünïcode ✓ עברית",
		"bad utf8 \xff\x9b[2J":   "bad utf8 \uFFFD\uFFFD[2J",
	} {
		if got := Neutralize(in); got != want {
			t.Errorf("Neutralize(%q) = %q, want %q", in, got, want)
		}
	}
}
