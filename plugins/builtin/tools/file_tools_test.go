package tools

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/plugins/sdk"
)

// pngHeader is the start of a real PNG file.
var pngHeader = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00")

func TestRead(t *testing.T) {
	scope := realTemp(t)
	var lines strings.Builder
	for i := 1; i <= 3000; i++ {
		lines.WriteString("line " + strings.Repeat("x", i%7) + "\n")
	}
	files(t, scope, map[string]string{
		"a.txt":     "alpha\nbeta\ngamma\n",
		"noeol.txt": "one\ntwo",
		"long.txt":  lines.String(),
		"wide.txt":  strings.Repeat("é", 3000) + "\nshort\n",
		"empty.txt": "",
		"bin.dat":   "ELF\x00\x01\x02",
		"pic.png":   string(pngHeader),
		"dir/x":     "",
	})
	s := New(Config{MaxImageBytes: 1 << 10})
	cases := []struct {
		name    string
		input   map[string]any
		want    []string // substrings of Text
		notWant []string
		isError bool
	}{
		{"whole file", map[string]any{"path": "a.txt"}, []string{"     1\talpha\n     2\tbeta\n     3\tgamma\n"}, []string{"showing"}, false},
		{"offset and limit", map[string]any{"path": "a.txt", "offset": 2, "limit": 1}, []string{"     2\tbeta\n", "[showing lines 2-2 of 3;"}, []string{"alpha", "gamma"}, false},
		{"no final newline", map[string]any{"path": "noeol.txt"}, []string{"     2\ttwo\n"}, nil, false},
		{"default limit", map[string]any{"path": "long.txt"}, []string{"  2000\tline", "[showing lines 1-2000 of 3000;"}, []string{"  2001\t"}, false},
		{"long line cut", map[string]any{"path": "wide.txt"}, []string{"… [line cut, 4000 more bytes]", "     2\tshort"}, nil, false},
		{"empty", map[string]any{"path": "empty.txt"}, []string{"empty.txt is empty"}, nil, false},
		{"offset past end", map[string]any{"path": "a.txt", "offset": 9}, []string{"offset 9 is past the end of a.txt (3 lines)"}, nil, true},
		{"binary", map[string]any{"path": "bin.dat"}, []string{"bin.dat is a binary file"}, nil, true},
		{"missing", map[string]any{"path": "nope.txt"}, []string{"nope.txt does not exist"}, nil, true},
		{"directory", map[string]any{"path": "dir"}, []string{"dir is a directory"}, nil, true},
		{"negative", map[string]any{"path": "a.txt", "limit": -1}, []string{"must not be negative"}, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, s, scope, "read", tc.input)
			if res.IsError != tc.isError || len(res.FileChanges) != 0 {
				t.Fatalf("got %+v", res)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("missing %q in\n%s", w, res.Text)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(res.Text, w) {
					t.Errorf("unexpected %q in\n%s", w, res.Text)
				}
			}
		})
	}
	t.Run("image", func(t *testing.T) {
		res := run(t, s, scope, "read", map[string]any{"path": "pic.png"})
		a := res.Attachment
		if res.IsError || a == nil || a.MediaType != "image/png" || a.Name != "pic.png" || !bytes.Equal(a.Data, pngHeader) || !strings.Contains(res.Text, "image pic.png (image/png") {
			t.Fatalf("got %+v", res)
		}
	})
	t.Run("image over the cap", func(t *testing.T) {
		files(t, scope, map[string]string{"big.png": string(pngHeader) + strings.Repeat("\x00", 2<<10)})
		if res := run(t, s, scope, "read", map[string]any{"path": "big.png"}); !res.IsError || res.Attachment != nil || !strings.Contains(res.Text, "the limit is 1024 bytes") {
			t.Fatalf("got %+v", res)
		}
	})
}

func TestImageType(t *testing.T) {
	for head, want := range map[string]string{
		string(pngHeader):              "image/png",
		"\xff\xd8\xff\xe0\x00\x10":     "image/jpeg",
		"GIF89a\x01\x00":               "image/gif",
		"RIFF\x10\x00\x00\x00WEBPVP8 ": "image/webp",
		"RIFF\x10\x00\x00\x00WAVEfmt ": "",
		"plain text":                   "",
	} {
		if got := imageType([]byte(head)); got != want {
			t.Errorf("imageType(%q) = %q, want %q", head, got, want)
		}
	}
}

func TestWrite(t *testing.T) {
	scope := realTemp(t)
	files(t, scope, map[string]string{"old.txt": "before\n"})
	if err := os.Chmod(filepath.Join(scope, "old.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := New(Config{})

	res := run(t, s, scope, "write", map[string]any{"path": "new/deep/n.txt", "content": "x\ny\n"})
	want := sdk.FileChange{Path: "new/deep/n.txt", Action: sdk.FileCreate, After: []byte("x\ny\n"), AfterSHA256: sha("x\ny\n")}
	if res.IsError || len(res.FileChanges) != 1 || !equalChange(res.FileChanges[0], want) || res.Text != "created new/deep/n.txt (4 bytes)" {
		t.Fatalf("create: %+v", res)
	}
	if res.Diff != "--- /dev/null\n+++ b/new/deep/n.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n" {
		t.Fatalf("create diff:\n%s", res.Diff)
	}
	if got := readFile(t, filepath.Join(scope, "new/deep/n.txt")); got != "x\ny\n" {
		t.Fatalf("content %q", got)
	}

	res = run(t, s, scope, "write", map[string]any{"path": filepath.Join(scope, "old.txt"), "content": "after\n"})
	want = sdk.FileChange{Path: "old.txt", Action: sdk.FileModify, Before: []byte("before\n"), After: []byte("after\n"), BeforeSHA256: sha("before\n"), AfterSHA256: sha("after\n")}
	if res.IsError || len(res.FileChanges) != 1 || !equalChange(res.FileChanges[0], want) || !strings.HasPrefix(res.Text, "updated old.txt") {
		t.Fatalf("modify: %+v", res)
	}
	if fi, err := os.Stat(filepath.Join(scope, "old.txt")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode not kept: %v %v", fi.Mode(), err)
	}

	res = run(t, s, scope, "write", map[string]any{"path": "old.txt", "content": "after\n"})
	if res.IsError || len(res.FileChanges) != 0 || res.Diff != "" || !strings.Contains(res.Text, "nothing changed") {
		t.Fatalf("unchanged: %+v", res)
	}

	for name, in := range map[string]map[string]any{
		"no content":    {"path": "x.txt"},
		"directory":     {"path": "new", "content": "x"},
		"scope itself":  {"path": ".", "content": "x"},
		"parent a file": {"path": "old.txt/x", "content": "x"},
	} {
		if res := run(t, s, scope, "write", in); !res.IsError || len(res.FileChanges) != 0 {
			t.Errorf("%s: got %+v", name, res)
		}
	}
}

func TestWriteTooLarge(t *testing.T) {
	scope := realTemp(t)
	big := strings.Repeat("a", 2048)
	files(t, scope, map[string]string{"big.txt": big})
	s := New(Config{MaxFileBytes: 1024})
	res := run(t, s, scope, "write", map[string]any{"path": "big.txt", "content": "small\n"})
	c := res.FileChanges[0]
	if res.IsError || !c.TooLarge || c.Before != nil || string(c.After) != "small\n" || c.BeforeSHA256 != sha(big) || c.AfterSHA256 != sha("small\n") {
		t.Fatalf("got %+v", res)
	}
	if !strings.Contains(res.Diff, tooLargeLine) {
		t.Fatalf("diff %q", res.Diff)
	}
}

func TestEdit(t *testing.T) {
	scope := realTemp(t)
	const orig = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	s := New(Config{})
	cases := []struct {
		name    string
		file    string
		input   map[string]any
		want    string // file content afterwards
		text    string
		isError bool
	}{
		{"replace once", orig, map[string]any{"old_string": "e\n", "new_string": "E\n"}, strings.Replace(orig, "e\n", "E\n", 1), "edited f.txt: replaced 1 occurrence", false},
		{"not found", orig, map[string]any{"old_string": "zzz", "new_string": "y"}, orig, "old_string not found in f.txt", true},
		{"ambiguous", "x\nx\n", map[string]any{"old_string": "x", "new_string": "y"}, "x\nx\n", "old_string appears 2 times in f.txt; add context or set replace_all", true},
		{"replace all", "x\nx\n", map[string]any{"old_string": "x", "new_string": "y", "replace_all": true}, "y\ny\n", "replaced 2 occurrences", false},
		{"identical", orig, map[string]any{"old_string": "a", "new_string": "a"}, orig, "identical", true},
		{"empty old", orig, map[string]any{"old_string": "", "new_string": "a"}, orig, "old_string is empty", true},
		{"crlf file", "one\r\ntwo\r\n", map[string]any{"old_string": "one\ntwo", "new_string": "1\n2"}, "1\r\n2\r\n", "replaced 1 occurrence", false},
		{"binary", "a\x00b", map[string]any{"old_string": "a", "new_string": "c"}, "a\x00b", "binary", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files(t, scope, map[string]string{"f.txt": tc.file})
			tc.input["path"] = "f.txt"
			res := run(t, s, scope, "edit", tc.input)
			if res.IsError != tc.isError || !strings.Contains(res.Text, tc.text) {
				t.Fatalf("got %+v", res)
			}
			if got := readFile(t, filepath.Join(scope, "f.txt")); got != tc.want {
				t.Fatalf("file %q, want %q", got, tc.want)
			}
			if tc.isError {
				if len(res.FileChanges) != 0 || res.Diff != "" {
					t.Fatalf("failed edit reported changes: %+v", res)
				}
				return
			}
			want := sdk.FileChange{Path: "f.txt", Action: sdk.FileModify, Before: []byte(tc.file), After: []byte(tc.want), BeforeSHA256: sha(tc.file), AfterSHA256: sha(tc.want)}
			if len(res.FileChanges) != 1 || !equalChange(res.FileChanges[0], want) {
				t.Fatalf("changes %+v", res.FileChanges)
			}
		})
	}
	t.Run("diff", func(t *testing.T) {
		files(t, scope, map[string]string{"f.txt": orig})
		res := run(t, s, scope, "edit", map[string]any{"path": "f.txt", "old_string": "e\n", "new_string": "E\n"})
		const golden = "--- a/f.txt\n+++ b/f.txt\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"
		if res.Diff != golden {
			t.Fatalf("diff\n%s\nwant\n%s", res.Diff, golden)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		res := run(t, s, scope, "edit", map[string]any{"path": "nope.txt", "old_string": "a", "new_string": "b"})
		if !res.IsError || !strings.Contains(res.Text, "nope.txt does not exist") {
			t.Fatalf("got %+v", res)
		}
	})
}

func equalChange(a, b sdk.FileChange) bool {
	return a.Path == b.Path && a.Action == b.Action && bytes.Equal(a.Before, b.Before) && bytes.Equal(a.After, b.After) &&
		(a.Before == nil) == (b.Before == nil) && (a.After == nil) == (b.After == nil) &&
		a.BeforeSHA256 == b.BeforeSHA256 && a.AfterSHA256 == b.AfterSHA256 && a.TooLarge == b.TooLarge
}
