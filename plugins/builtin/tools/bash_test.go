package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/plugins/sdk"
)

// groupAlive lists the live (non-zombie) processes in process group pgid.
func groupAlive(t *testing.T, pgid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:]) // state ppid pgrp ...
		if len(f) < 3 || f[0] == "Z" || f[2] != strconv.Itoa(pgid) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// waitGroupGone fails unless every process of pgid is gone within a second.
func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		alive := groupAlive(t, pgid)
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v of group %d survived", alive, pgid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var pidLine = regexp.MustCompile(`pid=(\d+)`)

func pgidFrom(t *testing.T, text string) int {
	t.Helper()
	m := pidLine.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no pid in %q", text)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

func TestBash(t *testing.T) {
	scope := realTemp(t)
	s := New(Config{MaxOutputBytes: 1000})
	cases := []struct {
		name    string
		input   map[string]any
		want    []string
		isError bool
	}{
		{"output and exit code", map[string]any{"command": "echo hello; echo oops >&2"}, []string{"hello\noops\n[exit code: 0]"}, false},
		{"non-zero exit", map[string]any{"command": "echo bad; exit 3"}, []string{"bad\n[exit code: 3]"}, true},
		{"runs in the scope", map[string]any{"command": "pwd"}, []string{scope + "\n"}, false},
		{"no output", map[string]any{"command": "true"}, []string{"(no output)\n[exit code: 0]"}, false},
		{"output cap keeps head and tail", map[string]any{"command": "head -c 5000 /dev/zero | tr '\\0' a; echo; echo END"},
			[]string{strings.Repeat("a", 500) + "\n[... 4005 of 5005 bytes of output cut ...]\n", "a\nEND\n[exit code: 0]"}, false},
		{"no stdin", map[string]any{"command": "cat; echo done"}, []string{"done"}, false},
		{"empty command", map[string]any{"command": " "}, []string{"command is empty"}, true},
		{"huge timeout is capped", map[string]any{"command": "echo ok", "timeout": 1e300}, []string{"ok\n[exit code: 0]"}, false},
		{"negative timeout", map[string]any{"command": "echo ok", "timeout": -1}, []string{"timeout must not be negative"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, s, scope, "bash", tc.input)
			if res.IsError != tc.isError {
				t.Fatalf("got %+v", res)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("missing %q in\n%s", w, res.Text)
				}
			}
		})
	}
}

func TestBashEnvironmentHasNoKernelSecrets(t *testing.T) {
	t.Setenv("FOYA_SECRET_TEST", "hunter2")
	res := run(t, New(Config{}), t.TempDir(), "bash", map[string]any{"command": "env"})
	if res.IsError || strings.Contains(res.Text, "FOYA_SECRET_TEST") || strings.Contains(res.Text, "hunter2") {
		t.Fatalf("secret leaked or failed: %s", res.Text)
	}
	for _, k := range []string{"PATH=", "HOME=", "LANG=", "TERM=dumb", "TMPDIR="} {
		if !strings.Contains(res.Text, k) {
			t.Errorf("env lacks %s:\n%s", k, res.Text)
		}
	}
}

func TestBashTimeoutKillsProcessGroup(t *testing.T) {
	s := New(Config{})
	start := time.Now()
	res := run(t, s, t.TempDir(), "bash", map[string]any{"command": "echo pid=$$; sleep 100 & sleep 100", "timeout": 0.5})
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("took %v", elapsed)
	}
	if !res.IsError || !strings.Contains(res.Text, "[command timed out after 500ms; it and every process it started were killed]") {
		t.Fatalf("got %+v", res)
	}
	waitGroupGone(t, pgidFrom(t, res.Text))
}

func TestBashRequestTimeout(t *testing.T) {
	r := req(t, t.TempDir(), "bash", map[string]any{"command": "echo pid=$$; sleep 100 & sleep 100"})
	r.Timeout = 500 * time.Millisecond
	res, err := New(Config{}).Call(ctxT(t), r)
	if err != nil || !res.IsError || !strings.Contains(res.Text, "timed out after 500ms") {
		t.Fatalf("got %+v %v", res, err)
	}
	waitGroupGone(t, pgidFrom(t, res.Text))
}

func TestBashBackgroundProcessesDoNotOutliveTheCommand(t *testing.T) {
	start := time.Now()
	res := run(t, New(Config{}), t.TempDir(), "bash", map[string]any{"command": "echo pid=$$; sleep 100 & echo started"})
	if elapsed := time.Since(start); elapsed > drainWait {
		t.Fatalf("took %v: a background process held the output open", elapsed)
	}
	if res.IsError || !strings.Contains(res.Text, "started\n[exit code: 0]") {
		t.Fatalf("got %+v", res)
	}
	waitGroupGone(t, pgidFrom(t, res.Text))
}

func TestBashCancelKillsProcessGroup(t *testing.T) {
	scope := t.TempDir()
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	type out struct {
		res sdk.ToolResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := New(Config{}).Call(ctx, req(t, scope, "bash", map[string]any{"command": "echo $$ > pid.tmp; sleep 100 & sleep 100"}))
		done <- out{res, err}
	}()
	var pgid int
	for deadline := time.Now().Add(10 * time.Second); ; {
		if b, err := os.ReadFile(filepath.Join(scope, "pid.tmp")); err == nil && strings.HasSuffix(string(b), "\n") {
			pgid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("command did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// bash wrote its pid before forking the two sleeps: wait for them.
	for deadline := time.Now().Add(10 * time.Second); len(groupAlive(t, pgid)) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("expected bash and its children in group %d", pgid)
		}
	}
	cancel()
	select {
	case o := <-done:
		if !errors.Is(o.err, context.Canceled) {
			t.Fatalf("got %+v %v", o.res, o.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled call did not return")
	}
	waitGroupGone(t, pgid)
}

func TestBashFileChanges(t *testing.T) {
	scope := realTemp(t)
	files(t, scope, map[string]string{
		"a.txt":             "one\n",
		"b.txt":             "bye\n",
		"same.txt":          "untouched\n",
		".git/HEAD":         "ref: main\n",
		"sub/c.txt":         "c\n",
		"node_modules/m.js": "x",
	})
	s := New(Config{})
	res := run(t, s, scope, "bash", map[string]any{"command": "echo two >> a.txt; rm b.txt; echo new > sub/new.txt; echo x > .git/HEAD; touch same.txt; rm node_modules/m.js"})
	if res.IsError || res.Note != "" {
		t.Fatalf("got %+v", res)
	}
	want := []sdk.FileChange{
		{Path: "a.txt", Action: sdk.FileModify, Before: []byte("one\n"), After: []byte("one\ntwo\n"), BeforeSHA256: sha("one\n"), AfterSHA256: sha("one\ntwo\n")},
		{Path: "b.txt", Action: sdk.FileDelete, Before: []byte("bye\n"), BeforeSHA256: sha("bye\n")},
		{Path: "sub/new.txt", Action: sdk.FileCreate, After: []byte("new\n"), AfterSHA256: sha("new\n")},
	}
	if len(res.FileChanges) != len(want) {
		t.Fatalf("changes %+v", res.FileChanges)
	}
	for i := range want {
		if !equalChange(res.FileChanges[i], want[i]) {
			t.Errorf("change %d: got %+v want %+v", i, res.FileChanges[i], want[i])
		}
	}
	const diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n one\n+two\n" +
		"--- a/b.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n" +
		"--- /dev/null\n+++ b/sub/new.txt\n@@ -0,0 +1 @@\n+new\n"
	if res.Diff != diff {
		t.Fatalf("diff\n%s\nwant\n%s", res.Diff, diff)
	}
}

func TestBashChangeDetectionLimits(t *testing.T) {
	scope := realTemp(t)
	files(t, scope, map[string]string{"1": "", "2": "", "3": "", "4": ""})
	res := run(t, New(Config{SnapshotMaxFiles: 3}), scope, "bash", map[string]any{"command": "echo x > 1"})
	if res.IsError || len(res.FileChanges) != 0 || res.Note != "file change detection skipped: more than 3 files" {
		t.Fatalf("got %+v", res)
	}
	res = run(t, New(Config{SnapshotMaxFiles: 5}), scope, "bash", map[string]any{"command": "touch 5 6"})
	if res.IsError || len(res.FileChanges) != 0 || res.Note != "file change detection skipped: more than 5 files after the command" {
		t.Fatalf("got %+v", res)
	}
	files(t, scope, map[string]string{"big": strings.Repeat("b", 3<<20)})
	res = run(t, New(Config{SnapshotMaxBytes: 2 << 20}), scope, "bash", map[string]any{"command": "true"})
	if res.Note != "file change detection skipped: more than 2 MiB of files" {
		t.Fatalf("got %+v", res)
	}
}

func TestBashLargeFileChangeOmitsBytes(t *testing.T) {
	scope := realTemp(t)
	files(t, scope, map[string]string{"big": strings.Repeat("b", 2048)})
	res := run(t, New(Config{MaxFileBytes: 1024}), scope, "bash", map[string]any{"command": "echo more >> big"})
	if len(res.FileChanges) != 1 {
		t.Fatalf("got %+v", res)
	}
	c := res.FileChanges[0]
	after := strings.Repeat("b", 2048) + "more\n"
	if !c.TooLarge || c.Before != nil || c.After != nil || c.BeforeSHA256 != sha(strings.Repeat("b", 2048)) || c.AfterSHA256 != sha(after) {
		t.Fatalf("got %+v", c)
	}
}
