package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func searchTree(t *testing.T) string {
	t.Helper()
	scope := realTemp(t)
	files(t, scope, map[string]string{
		"a.go":                 "package a\n// TODO: first\n",
		"sub/b.go":             "package sub\nfunc B() {} // todo: lower\n",
		"sub/deep/c.go":        "package deep\n// TODO: deep\n",
		"x.txt":                "TODO in text\n",
		"bin.dat":              "TODO\x00binary",
		".git/d.go":            "TODO hidden\n",
		"node_modules/m/e.go":  "TODO vendored\n",
		"sub/deep/z_test.go":   "package deep\n",
		"docs/readme.markdown": "nothing here\n",
	})
	base := time.Now().Add(-time.Hour)
	for i, p := range []string{"x.txt", "a.go", "sub/b.go", "sub/deep/c.go", "sub/deep/z_test.go", "bin.dat", "docs/readme.markdown"} {
		mt := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(filepath.Join(scope, p), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	return scope
}

func TestGlob(t *testing.T) {
	scope := searchTree(t)
	s := New(Config{})
	cases := []struct {
		name    string
		input   map[string]any
		want    string
		isError bool
	}{
		{"recursive, newest first", map[string]any{"pattern": "**/*.go"}, "sub/deep/z_test.go\nsub/deep/c.go\nsub/b.go\na.go\n", false},
		{"top level only", map[string]any{"pattern": "*.go"}, "a.go\n", false},
		{"segment patterns", map[string]any{"pattern": "sub/**/[bc].go"}, "sub/deep/c.go\nsub/b.go\n", false},
		{"under a path", map[string]any{"pattern": "**/*_test.go", "path": "sub"}, "sub/deep/z_test.go\n", false},
		{"no match", map[string]any{"pattern": "*.rs"}, "no files match \"*.rs\"\n", false},
		{"bad pattern", map[string]any{"pattern": "[a"}, "syntax error in pattern", true},
		{"absolute pattern", map[string]any{"pattern": "/etc/*"}, "must be relative", true},
		{"path is a file", map[string]any{"pattern": "*", "path": "a.go"}, "a.go is not a directory", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, s, scope, "glob", tc.input)
			if res.IsError != tc.isError || (!tc.isError && res.Text != tc.want) || (tc.isError && !strings.Contains(res.Text, tc.want)) {
				t.Fatalf("got %+v, want %q", res, tc.want)
			}
		})
	}
	t.Run("cap", func(t *testing.T) {
		res := run(t, New(Config{MaxGlobResults: 2}), scope, "glob", map[string]any{"pattern": "**"})
		if res.Text != "docs/readme.markdown\nbin.dat\n[showing 2 of 7 matches, newest first; narrow the pattern]\n" {
			t.Fatalf("got %q", res.Text)
		}
	})
}

func TestGrep(t *testing.T) {
	scope := searchTree(t)
	s := New(Config{})
	cases := []struct {
		name    string
		input   map[string]any
		want    string
		isError bool
	}{
		{"all text files", map[string]any{"pattern": "TODO"}, "a.go:2: // TODO: first\nsub/deep/c.go:2: // TODO: deep\nx.txt:1: TODO in text\n", false},
		{"case insensitive", map[string]any{"pattern": "todo: (first|lower)", "case_insensitive": true}, "a.go:2: // TODO: first\nsub/b.go:2: func B() {} // todo: lower\n", false},
		{"glob on names", map[string]any{"pattern": "TODO", "glob": "*.txt"}, "x.txt:1: TODO in text\n", false},
		{"glob on paths", map[string]any{"pattern": "package", "glob": "sub/**/*.go"}, "sub/b.go:1: package sub\nsub/deep/c.go:1: package deep\nsub/deep/z_test.go:1: package deep\n", false},
		{"one file", map[string]any{"pattern": "TODO", "path": "sub/deep/c.go"}, "sub/deep/c.go:2: // TODO: deep\n", false},
		{"under a dir", map[string]any{"pattern": "^package", "path": "sub/deep"}, "sub/deep/c.go:1: package deep\nsub/deep/z_test.go:1: package deep\n", false},
		{"no match", map[string]any{"pattern": "nope"}, "no matches for \"nope\"\n", false},
		{"bad regexp", map[string]any{"pattern": "(unclosed"}, "invalid pattern", true},
		{"missing path", map[string]any{"pattern": "x", "path": "nope"}, "nope", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, s, scope, "grep", tc.input)
			if res.IsError != tc.isError || (!tc.isError && res.Text != tc.want) || (tc.isError && !strings.Contains(res.Text, tc.want)) {
				t.Fatalf("got %+v, want %q", res, tc.want)
			}
		})
	}
	t.Run("cap", func(t *testing.T) {
		res := run(t, New(Config{MaxGrepMatches: 2}), scope, "grep", map[string]any{"pattern": "TODO"})
		if res.Text != "a.go:2: // TODO: first\nsub/deep/c.go:2: // TODO: deep\n[stopped after 2 matches; narrow the pattern, path or glob]\n" {
			t.Fatalf("got %q", res.Text)
		}
	})
	t.Run("large files skipped", func(t *testing.T) {
		res := run(t, New(Config{MaxFileBytes: 8}), scope, "grep", map[string]any{"pattern": "TODO", "glob": "*.txt"})
		if res.Text != "no matches for \"TODO\"\n[skipped 1 files over 8 bytes]\n" {
			t.Fatalf("got %q", res.Text)
		}
	})
}

func TestReadOnlyFlags(t *testing.T) {
	info, err := New(Config{}).Describe(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"read": true, "glob": true, "grep": true, "write": false, "edit": false, "bash": false}
	if len(info.Tools) != len(want) || info.Version != Version {
		t.Fatalf("tools %+v", info)
	}
	for _, tool := range info.Tools {
		if ro, ok := want[tool.Name]; !ok || ro != tool.ReadOnly || tool.Description == "" || !strings.Contains(string(tool.Schema), `"type":"object"`) {
			t.Errorf("tool %+v", tool)
		}
	}
}
