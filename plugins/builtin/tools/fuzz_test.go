package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/plugins/sdk"
)

// outsideMarker is in every name outside the scope and secretContent in
// every file there, so a leak through any tool's output is visible.
const (
	outsideMarker = "zzOUTSIDEzz"
	secretContent = "qqSECRETqq"
)

// fuzzTree builds root/project (the scope) and root/outside, with symlinks
// out of the scope (to a file, to a directory, dangling, a loop, a chain
// that leaves and comes back) and inside it.
func fuzzTree(f *testing.F) (scopeDir, outside string) {
	root, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	scopeDir = filepath.Join(root, "project")
	outside = filepath.Join(root, "outside")
	for name, content := range map[string]string{
		filepath.Join(outside, outsideMarker+".txt"):      secretContent + "\n",
		filepath.Join(outside, "sub", outsideMarker):      secretContent + "\n",
		filepath.Join(scopeDir, "in.txt"):                 "inside\n",
		filepath.Join(scopeDir, "dir", "nested", "a.go"):  "package a\n",
		filepath.Join(scopeDir, ".git", "HEAD"):           "ref\n",
		filepath.Join(scopeDir, "sp ace", "ü.txt"):        "unicode\n",
		filepath.Join(root, "project-sibling", "x.txt"):   secretContent + "\n",
		filepath.Join(scopeDir, "dir", "..dots", "f.txt"): "dots\n",
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"link_out":        filepath.Join(outside, outsideMarker+".txt"),
		"dirlink":         outside,
		"rel_dirlink":     "../outside",
		"sibling":         "../project-sibling",
		"dangling":        filepath.Join(outside, "nothing-yet"),
		"link_in":         "in.txt",
		"dir/up":          "..",
		"dir/nested/top":  "../../..",
		"loop_a":          "loop_b",
		"loop_b":          "loop_a",
		"chain":           "dirlink/../project/in.txt",
		"root":            "/",
		"dir/abs_in":      filepath.Join(scopeDir, "dir", "nested"),
		"dir/nested/self": ".",
	} {
		p := filepath.Join(scopeDir, link)
		if err := os.Symlink(target, p); err != nil {
			f.Fatal(err)
		}
	}
	return scopeDir, outside
}

// inside reports whether the clean absolute path p is dir or lies under it.
func inside(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// FuzzScopeResolve checks that no path argument resolves outside the scope:
// resolve's answer is clean, absolute, lexically under the scope and, with
// every symlink of its existing prefix evaluated again independently, still
// under it; rel agrees with abs. The same argument through the read, glob
// and grep tools never shows anything from outside.
func FuzzScopeResolve(f *testing.F) {
	scopeDir, _ := fuzzTree(f)
	s, err := newScope(scopeDir)
	if err != nil {
		f.Fatal(err)
	}
	set := New(Config{})
	for _, p := range []string{
		".", "in.txt", "./in.txt", "dir/nested/a.go", "../outside/" + outsideMarker + ".txt",
		"sub/../../outside", "/etc/passwd", "link_out", "dirlink/sub", "rel_dirlink", "sibling/x.txt",
		"dangling", "dangling/child", "link_in", "dir/up/in.txt", "dir/up/../outside", "dir/nested/top/outside",
		"loop_a", "loop_a/x", "chain", "root/etc/passwd", "dir/abs_in/a.go", "dir/nested/self/self/a.go",
		scopeDir, scopeDir + "/../project/in.txt", scopeDir + "-sibling", "missing/../../outside",
		"missing/deeper/../../in.txt", "sp ace/ü.txt", "dir/..dots/f.txt", "in.txt\x00/../../outside", "//", "\\..\\outside",
		"..", "...", " ", "in.txt/", "in.txt/.", ".git/HEAD",
	} {
		f.Add(p, "**/*")
	}
	f.Add("dir", "*/a.go")
	f.Add(".", "**/"+outsideMarker+"*")
	f.Add("dirlink", "*")

	f.Fuzz(func(t *testing.T, p, pattern string) {
		abs, rel, err := s.resolve(p)
		if err == nil {
			if !filepath.IsAbs(abs) || filepath.Clean(abs) != abs {
				t.Fatalf("resolve(%q) = %q: not a clean absolute path", p, abs)
			}
			if !inside(s.real, abs) {
				t.Fatalf("resolve(%q) = %q: outside the scope %s", p, abs, s.real)
			}
			if again := evalPrefix(abs); !inside(s.real, again) {
				t.Fatalf("resolve(%q) = %q, whose symlinks lead to %q outside the scope", p, abs, again)
			}
			want, _ := filepath.Rel(s.real, abs)
			if rel != filepath.ToSlash(want) || rel == ".." || strings.HasPrefix(rel, "../") {
				t.Fatalf("resolve(%q): rel %q, abs %q", p, rel, abs)
			}
		} else if abs != "" || rel != "" {
			t.Fatalf("resolve(%q) failed (%v) but returned %q, %q", p, err, abs, rel)
		}

		ctx := context.Background()
		for _, c := range []struct {
			name  string
			input map[string]any
		}{
			{"read", map[string]any{"path": p, "limit": 50}},
			{"glob", map[string]any{"pattern": pattern, "path": p}},
			{"grep", map[string]any{"pattern": "SECRET", "path": p, "glob": pattern}},
		} {
			b, err := json.Marshal(c.input)
			if err != nil {
				t.Fatal(err)
			}
			res, err := set.Call(ctx, sdk.ToolCallRequest{SessionID: "ses_f", ToolCallID: "call_f", Name: c.name, Input: b, ScopeDir: scopeDir})
			if err != nil {
				continue // a Go error is reported by the host as a tool failure
			}
			echoed := strings.Contains(p, secretContent) || strings.Contains(pattern, secretContent)
			if strings.Contains(res.Text, secretContent) && !echoed {
				t.Fatalf("%s(path %q, pattern %q) read a file outside the scope:\n%s", c.name, p, pattern, res.Text)
			}
			// Refusals may name where a symlink leads; successes list nothing outside.
			echoed = strings.Contains(p, outsideMarker) || strings.Contains(pattern, outsideMarker)
			if !res.IsError && strings.Contains(res.Text, outsideMarker) && !echoed {
				t.Fatalf("%s(path %q, pattern %q) listed something outside the scope:\n%s", c.name, p, pattern, res.Text)
			}
		}
	})
}

// evalPrefix evaluates the symlinks of the longest existing prefix of the
// clean absolute path p and appends the rest, independently of resolve.
func evalPrefix(p string) string {
	rest := ""
	for cur := p; ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
