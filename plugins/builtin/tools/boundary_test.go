package tools_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/plugins/builtin/tools"
	"github.com/foya-dev/foya/plugins/host/hosttest"
	"github.com/foya-dev/foya/plugins/sdk"
)

// TestThroughPluginBoundary drives the tool set over real gRPC through the
// core.ToolRunner adapter the kernel uses.
func TestThroughPluginBoundary(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	scope := t.TempDir()
	if err := os.WriteFile(filepath.Join(scope, "f.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, r := hosttest.NewInProcess(t, sdk.ServeConfig{Tools: tools.New(tools.Config{})})

	infos, err := r.Tools(ctx)
	if err != nil || len(infos) != 6 {
		t.Fatalf("tools %+v %v", infos, err)
	}
	call := func(name string, in any) core.ToolResult {
		t.Helper()
		b, _ := json.Marshal(in)
		res, err := r.Call(ctx, core.ToolCallRequest{SessionID: "ses_1", ToolCallID: "call_1", Name: name, Input: b, ScopeDir: scope, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

	res := call("edit", map[string]any{"path": "f.txt", "old_string": "two", "new_string": "2"})
	want := core.ToolFileChange{Path: "f.txt", Action: core.FileModify, Before: []byte("one\ntwo\n"), After: []byte("one\n2\n"), BeforeSHA256: sum("one\ntwo\n"), AfterSHA256: sum("one\n2\n")}
	if res.IsError || len(res.FileChanges) != 1 {
		t.Fatalf("edit %+v", res)
	}
	if c := res.FileChanges[0]; c.Path != want.Path || c.Action != want.Action || !bytes.Equal(c.Before, want.Before) || !bytes.Equal(c.After, want.After) || c.BeforeSHA256 != want.BeforeSHA256 || c.AfterSHA256 != want.AfterSHA256 || c.TooLarge {
		t.Fatalf("change %+v want %+v", c, want)
	}
	if res.Diff != "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n" {
		t.Fatalf("diff %q", res.Diff)
	}

	res = call("bash", map[string]any{"command": "rm f.txt; printf 'GIF89a\\x01\\x00' > p.gif"})
	if res.IsError || len(res.FileChanges) != 2 || res.FileChanges[0].Action != core.FileDelete || res.FileChanges[1].Action != core.FileCreate {
		t.Fatalf("bash %+v", res)
	}
	res = call("read", map[string]any{"path": "p.gif"})
	if a := res.Attachment; res.IsError || a == nil || a.MediaType != "image/gif" || string(a.Data) != "GIF89a\x01\x00" {
		t.Fatalf("read %+v", res)
	}

	res = call("bash", map[string]any{"command": "printf 'bad \\xff utf8'; echo pid=$$ >&2"})
	if res.IsError || !strings.Contains(res.Text, "bad \uFFFD utf8") {
		t.Fatalf("invalid UTF-8 must not break the boundary: %+v", res)
	}
	if res := call("read", map[string]any{"path": "../x"}); !res.IsError || !strings.Contains(res.Text, "outside the scope") {
		t.Fatalf("escape %+v", res)
	}
}
