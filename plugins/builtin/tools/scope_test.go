package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScopeEscapesRefused(t *testing.T) {
	root := realTemp(t)
	scope := filepath.Join(root, "project")
	outside := filepath.Join(root, "outside")
	files(t, outside, map[string]string{"secret": "top secret\n"})
	files(t, scope, map[string]string{"in.txt": "inside\n"})
	for link, target := range map[string]string{
		"link_out": filepath.Join(outside, "secret"),
		"dirlink":  outside,
		"dangling": filepath.Join(outside, "nothing-yet"),
		"link_in":  filepath.Join(scope, "in.txt"),
	} {
		if err := os.Symlink(target, filepath.Join(scope, link)); err != nil {
			t.Fatal(err)
		}
	}
	s := New(Config{})
	cases := []struct {
		name, tool string
		input      map[string]any
		want       string // in the error text besides "error:"
	}{
		{"dotdot", "read", map[string]any{"path": "../outside/secret"}, "outside the scope " + scope},
		{"dotdot inside a path", "read", map[string]any{"path": "sub/../../outside/secret"}, "outside the scope"},
		{"absolute elsewhere", "read", map[string]any{"path": "/etc/passwd"}, "/etc/passwd is outside the scope " + scope},
		{"symlink to a file outside", "read", map[string]any{"path": "link_out"}, "link_out resolves to " + filepath.Join(outside, "secret") + ", outside the scope"},
		{"symlinked parent dir", "read", map[string]any{"path": "dirlink/secret"}, "outside the scope"},
		{"write through symlinked parent", "write", map[string]any{"path": "dirlink/new.txt", "content": "x"}, "outside the scope"},
		{"write through symlink", "write", map[string]any{"path": "link_out", "content": "pwned"}, "outside the scope"},
		{"write through dangling symlink", "write", map[string]any{"path": "dangling", "content": "pwned"}, "dangling symlink"},
		{"edit through symlink", "edit", map[string]any{"path": "link_out", "old_string": "top", "new_string": "no"}, "outside the scope"},
		{"grep outside", "grep", map[string]any{"pattern": "secret", "path": "dirlink"}, "outside the scope"},
		{"glob outside", "glob", map[string]any{"pattern": "*", "path": ".."}, "outside the scope"},
		{"glob pattern with ..", "glob", map[string]any{"pattern": "../outside/*"}, "must not contain .."},
		{"empty path", "read", map[string]any{"path": ""}, "path is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, s, scope, tc.tool, tc.input)
			if !res.IsError || !strings.HasPrefix(res.Text, "error: ") || !strings.Contains(res.Text, tc.want) {
				t.Fatalf("got %+v, want an error with %q", res, tc.want)
			}
			if strings.Contains(res.Text, "top secret") {
				t.Fatal("leaked the outside file")
			}
		})
	}
	if got := readFile(t, filepath.Join(outside, "secret")); got != "top secret\n" {
		t.Fatalf("outside file changed: %q", got)
	}
	for _, p := range []string{filepath.Join(outside, "new.txt"), filepath.Join(outside, "nothing-yet")} {
		if _, err := os.Lstat(p); err == nil {
			t.Fatalf("%s was created outside the scope", p)
		}
	}
	t.Run("symlink inside the scope is fine", func(t *testing.T) {
		if res := run(t, s, scope, "read", map[string]any{"path": "link_in"}); res.IsError || !strings.Contains(res.Text, "inside") {
			t.Fatalf("got %+v", res)
		}
	})
	t.Run("absolute path inside the scope is fine", func(t *testing.T) {
		if res := run(t, s, scope, "read", map[string]any{"path": filepath.Join(scope, "in.txt")}); res.IsError {
			t.Fatalf("got %+v", res)
		}
	})
	t.Run("scope reached through a symlink", func(t *testing.T) {
		alias := filepath.Join(root, "alias")
		if err := os.Symlink(scope, alias); err != nil {
			t.Fatal(err)
		}
		res := run(t, s, alias, "read", map[string]any{"path": filepath.Join(alias, "in.txt")})
		if res.IsError {
			t.Fatalf("got %+v", res)
		}
	})
}

func TestScopeRequired(t *testing.T) {
	s := New(Config{})
	for _, scope := range []string{"", "relative/dir", filepath.Join(t.TempDir(), "missing")} {
		res := run(t, s, scope, "read", map[string]any{"path": "x"})
		if !res.IsError || !strings.Contains(res.Text, "scope") {
			t.Fatalf("scope %q: got %+v", scope, res)
		}
	}
}

func TestUnknownToolAndBadInput(t *testing.T) {
	s := New(Config{})
	scope := t.TempDir()
	if res := run(t, s, scope, "rm_rf", map[string]any{}); !res.IsError || !strings.Contains(res.Text, `unknown tool "rm_rf"`) {
		t.Fatalf("got %+v", res)
	}
	r := req(t, scope, "read", nil)
	r.Input = []byte(`{"path": 3}`)
	res, err := s.Call(ctxT(t), r)
	if err != nil || !res.IsError || !strings.Contains(res.Text, "invalid input for read") {
		t.Fatalf("got %+v %v", res, err)
	}
}

// The kernel's data directory is invisible to the path tools even when the
// project contains it, and bash's change detection never reads it; a
// session's scratch directory inside it works, another directory there does
// not.
func TestDataDirHiddenFromPathTools(t *testing.T) {
	root := realTemp(t)
	data := filepath.Join(root, "data")
	files(t, root, map[string]string{"notes.txt": "apiKey lookalike\n"})
	files(t, data, map[string]string{"connections.json": `{"apiKey":"sk-secret"}` + "\n", "scratch/ses_a/f.txt": "mine\n"})
	s := New(Config{DataDir: data, ScratchDir: filepath.Join(data, "scratch")})
	for _, tc := range []struct {
		tool  string
		input map[string]any
	}{
		{"read", map[string]any{"path": "data/connections.json"}},
		{"read", map[string]any{"path": filepath.Join(data, "connections.json")}},
		{"write", map[string]any{"path": "data/new", "content": "x"}},
		{"edit", map[string]any{"path": "data/connections.json", "old_string": "sk", "new_string": "x"}},
		{"glob", map[string]any{"pattern": "*", "path": "data"}},
		{"grep", map[string]any{"pattern": "apiKey", "path": "data"}},
	} {
		res := run(t, s, root, tc.tool, tc.input)
		if !res.IsError || !strings.Contains(res.Text, "kernel's data directory") || strings.Contains(res.Text, "sk-secret") {
			t.Errorf("%s %v: %+v", tc.tool, tc.input, res)
		}
	}
	if res := run(t, s, root, "grep", map[string]any{"pattern": "apiKey"}); strings.Contains(res.Text, "connections.json") || !strings.Contains(res.Text, "notes.txt") {
		t.Errorf("grep over the project: %s", res.Text)
	}
	if res := run(t, s, root, "glob", map[string]any{"pattern": "**/*.json"}); strings.Contains(res.Text, "connections.json") {
		t.Errorf("glob over the project: %s", res.Text)
	}
	// Unconfined here (no Sandbox): the change is made, but never reported
	// with the file's bytes.
	if res := run(t, s, root, "bash", map[string]any{"command": "echo changed >> data/connections.json"}); len(res.FileChanges) != 0 || res.IsError {
		t.Errorf("bash: %+v", res)
	}
	scratch := filepath.Join(data, "scratch", "ses_a")
	if res := run(t, s, scratch, "read", map[string]any{"path": "f.txt"}); res.IsError {
		t.Errorf("scratch read: %s", res.Text)
	}
	if res := run(t, s, scratch, "read", map[string]any{"path": "../../connections.json"}); !res.IsError || strings.Contains(res.Text, "sk-secret") {
		t.Errorf("scratch escape: %s", res.Text)
	}
	token := filepath.Join(realTemp(t), "token")
	files(t, filepath.Dir(token), map[string]string{"token": "tok-secret"})
	withToken := New(Config{DataDir: data, Hidden: []string{token}})
	if res := run(t, withToken, filepath.Dir(token), "read", map[string]any{"path": "token"}); !res.IsError || strings.Contains(res.Text, "tok-secret") {
		t.Errorf("hidden token file: %s", res.Text)
	}
	for _, bad := range []string{data, filepath.Join(data, "scratch")} {
		if res := run(t, s, bad, "read", map[string]any{"path": "connections.json"}); !res.IsError || !strings.Contains(res.Text, "inside the kernel's data directory") {
			t.Errorf("scope %s: %s", bad, res.Text)
		}
	}
}
