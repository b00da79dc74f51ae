package engine_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/engine"
)

type fakeRunner struct {
	tools []core.ToolInfo
	name  string
}

func (f fakeRunner) Tools(context.Context) ([]core.ToolInfo, error) { return f.tools, nil }
func (f fakeRunner) Call(_ context.Context, req core.ToolCallRequest) (core.ToolResult, error) {
	return core.ToolResult{Text: f.name + ":" + req.Name}, nil
}

func TestToolHubRefusesClashes(t *testing.T) {
	var logs bytes.Buffer
	hub := engine.NewToolHub(map[string]core.ToolRunner{
		"a": fakeRunner{name: "a", tools: []core.ToolInfo{{Name: "grep"}, {Name: "task"}}},
		"b": fakeRunner{name: "b", tools: []core.ToolInfo{{Name: "grep"}, {Name: "fetch"}}},
	}, slog.New(slog.NewTextHandler(&logs, nil)))
	ctx := context.Background()
	for range 3 {
		tools, err := hub.Tools(ctx)
		if err != nil || len(tools) != 2 || tools[0].Name != "grep" || tools[1].Name != "fetch" {
			t.Fatalf("tools %+v %v", tools, err)
		}
	}
	res, err := hub.Call(ctx, core.ToolCallRequest{Name: "grep"})
	if err != nil || res.Text != "a:grep" {
		t.Fatalf("grep went to %q %v", res.Text, err)
	}
	if _, err := hub.Call(ctx, core.ToolCallRequest{Name: "nope"}); err == nil {
		t.Fatal("unknown tool routed")
	}
	out := logs.String()
	if strings.Count(out, "offered by two plugins") != 1 || strings.Count(out, "reserved by the kernel") != 1 {
		t.Fatalf("clash log lines:\n%s", out)
	}
}
