package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// Built-in plugins start on demand (issue 37): `foya serve` starts no
// plugin process; the first turn on an OpenAI-compatible connection starts
// exactly the openai plugin; its first tool call starts the tool plugin;
// the other providers never start. Run with the plugins' own executables
// beside foya (as installed) and with the fallback that re-executes foya.
func TestPluginsStartOnDemand(t *testing.T) {
	for _, mode := range []string{"own-executables", "reexec"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "reexec" {
				t.Setenv("FOYA_PLUGIN_REEXEC", "1")
			}
			testPluginsStartOnDemand(t, mode == "reexec")
		})
	}
}

func testPluginsStartOnDemand(t *testing.T, reexec bool) {
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	pid := k.cmd.Process.Pid
	// Nothing starts in the first seconds either (no park-after-start).
	for range 20 {
		if kids := childPIDs(pid); len(kids) > 0 {
			t.Fatalf("plugin processes after boot: %v", pluginCmdlines(kids))
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Listing plugins (without the sandbox fields) starts none; each is
	// healthy, described, without a pid.
	var pl struct {
		Plugins []struct {
			Name, Version, Path string
			Capabilities, Tools []string
			Healthy             bool
			Pid                 *int
		}
	}
	k.gql(t, `{ plugins { name version path capabilities tools healthy pid } }`, nil, &pl)
	if len(pl.Plugins) != 4 {
		t.Fatalf("plugins %+v", pl.Plugins)
	}
	for _, p := range pl.Plugins {
		if !p.Healthy || p.Pid != nil || p.Version == "" || (p.Name != "tools" && len(p.Capabilities) == 0) || (p.Name == "tools" && len(p.Tools) != 6) {
			t.Fatalf("before any call: %+v", p)
		}
		wantOwn := !reexec
		if own := filepath.Base(p.Path) == "foya-plugin-"+p.Name; own != wantOwn {
			t.Fatalf("plugin %s runs from %s (own executable expected: %v)", p.Name, p.Path, wantOwn)
		}
	}
	if kids := childPIDs(pid); len(kids) > 0 {
		t.Fatalf("plugins query started %v", pluginCmdlines(kids))
	}

	sid := k.chatSession(t, fake.BaseURL())
	fake.Enqueue(openaitest.TextStream("gpt-t", "hello"))
	k.sendMessage(t, sid, "hi")
	k.waitEvents(t, sid, "turn_finished", 1)
	if got := pluginCmdlines(childPIDs(pid)); len(got) != 1 || !servesPlugin(got[0], "openai") {
		t.Fatalf("after one turn the kernel runs %q, want the openai plugin alone", got)
	}

	args, _ := json.Marshal(map[string]any{"command": "printf on-demand"})
	fake.Enqueue(openaitest.Response{Events: []string{
		openaitest.Chunk("gpt-t", map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "c1", "type": "function", "function": map[string]any{"name": "bash", "arguments": string(args)}}}}, ""),
		openaitest.Chunk("gpt-t", map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream("gpt-t", "done"))
	k.sendMessage(t, sid, "run it")
	k.waitEvents(t, sid, "turn_finished", 2)
	ms := k.getSession(t, sid).Session.Messages
	if len(ms) != 6 || ms[4].IsError || !strings.Contains(ms[4].Text, "on-demand") {
		t.Fatalf("messages %+v\n%s", ms, k.Logs())
	}
	got := pluginCmdlines(childPIDs(pid))
	if len(got) != 2 || !slices.ContainsFunc(got, func(c string) bool { return servesPlugin(c, "openai") }) ||
		!slices.ContainsFunc(got, func(c string) bool { return servesPlugin(c, "tools") }) {
		t.Fatalf("after a tool call the kernel runs %q, want the openai and tools plugins", got)
	}
	for _, p := range k.listPlugins(t).Plugins {
		if running := p.Pid != nil; running != (p.Name == "openai" || p.Name == "tools") {
			t.Fatalf("plugin %s pid %v", p.Name, p.Pid)
		}
	}
}

// pluginCmdlines are the command lines of pids, arguments space-separated.
func pluginCmdlines(pids []int) []string {
	var out []string
	for _, p := range pids {
		raw, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
		out = append(out, strings.TrimSpace(strings.ReplaceAll(string(raw), "\x00", " ")))
	}
	return out
}

// servesPlugin reports whether cmdline runs the built-in plugin name, as
// its own executable or as `foya plugin name` (directly or under the
// sandbox helper that masks the tool plugin's view).
func servesPlugin(cmdline, name string) bool {
	return strings.Contains(cmdline, "foya-plugin-"+name) || strings.HasSuffix(cmdline, " plugin "+name)
}
