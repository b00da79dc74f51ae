//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/foya-dev/foya/plugins/builtin/tools"
	"github.com/foya-dev/foya/plugins/sdk"
)

// BenchmarkBashSandbox measures one bash tool call through the built-in
// tool set, confined (the real foya binary as sandbox helper: Landlock,
// and user/mount/PID namespaces where available) and not, for `true` and
// for `ls -lR` of a 2,000-file tree next to the (empty) scope directory, so
// that the tool's change detection snapshot costs next to nothing.
//
//	go test -run '^$' -bench BashSandbox -benchtime 200x .
func BenchmarkBashSandbox(b *testing.B) {
	root := b.TempDir()
	data := filepath.Join(root, "data")
	tree := filepath.Join(root, "tree")
	work := filepath.Join(root, "work")
	os.MkdirAll(work, 0o755)
	for i := range 2000 {
		p := filepath.Join(tree, fmt.Sprintf("d%02d", i/100), fmt.Sprintf("f%04d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	os.MkdirAll(data, 0o700)
	for _, mode := range []string{"unconfined", "confined"} {
		cfg := tools.Config{DataDir: data, ScratchDir: filepath.Join(data, "scratch"), TempRoot: filepath.Join(root, "tmp")}
		if mode == "confined" {
			cfg.Sandbox = &tools.SandboxConfig{Executable: foyaBin}
		}
		set := tools.New(cfg)
		info, _ := set.Describe(context.Background())
		if mode == "confined" && info.Sandbox != "landlock" {
			b.Skipf("no Landlock here: %s", info.SandboxDetail)
		}
		for _, c := range []struct{ name, cmd string }{{"true", "true"}, {"ls2000", "ls -lR ../tree"}} {
			b.Run(c.name+"/"+mode, func(b *testing.B) {
				in, _ := json.Marshal(map[string]any{"command": c.cmd})
				req := sdk.ToolCallRequest{SessionID: "ses_bench", ToolCallID: "call", Name: "bash", Input: in, ScopeDir: work}
				for b.Loop() {
					res, err := set.Call(context.Background(), req)
					if err != nil || res.IsError {
						b.Fatalf("%v %+v", err, res)
					}
				}
			})
		}
	}
}
