package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
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

	// The tool command reports its own nice value (field 19 of stat).
	args, _ := json.Marshal(map[string]any{"command": "printf on-demand; echo \" nice=$(cut -d' ' -f19 /proc/self/stat)\""})
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
	// Plugins, and the commands the tools plugin starts, run five nice
	// levels below the kernel (--child-nice's default), every thread.
	want := min(niceOf(t, pid, pid)+5, 19)
	if !strings.Contains(ms[4].Text, fmt.Sprintf("nice=%d", want)) {
		t.Fatalf("the tool command reports %q, want nice=%d", ms[4].Text, want)
	}
	for _, kid := range childPIDs(pid) {
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", kid))
		for _, task := range tasks {
			tid, _ := strconv.Atoi(task.Name())
			if n := niceOf(t, kid, tid); n != want {
				t.Fatalf("thread %d of plugin process %d (%s) at nice %d, want %d", tid, kid, pluginCmdlines([]int{kid}), n, want)
			}
		}
		if len(tasks) < 2 {
			t.Fatalf("plugin process %d has %d threads", kid, len(tasks))
		}
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

// niceOf is the nice value of thread tid of process pid (field 19 of its
// stat).
func niceOf(t *testing.T, pid, tid int) int {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/stat", pid, tid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // from field 3, the state
	n, err := strconv.Atoi(fields[19-3])
	if err != nil {
		t.Fatalf("stat of %d/%d: %q", pid, tid, s)
	}
	return n
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

// Third-party plugins start on demand too (issue 37): the first `foya
// serve` starts the plugin once to describe itself and caches what it
// said; the next one on the same data directory starts no plugin process
// until the first turn on its provider kind; a changed executable is
// described again at the next start.
func TestThirdPartyPluginStartsOnDemand(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	dir := filepath.Join(data, "plugins")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "foya-echo")
	installBuilt(t, "echo", exe)
	runsEcho := func(k *kernelProc) bool {
		return slices.ContainsFunc(pluginCmdlines(childPIDs(k.cmd.Process.Pid)), func(c string) bool { return strings.Contains(c, "foya-echo") })
	}
	type pluginRow struct {
		Name, ProviderKind, Version string
		Healthy                     bool
		Pid                         *int
	}
	echoRow := func(k *kernelProc) pluginRow {
		var pl struct{ Plugins []pluginRow }
		k.gql(t, `{ plugins { name providerKind version healthy pid } }`, nil, &pl)
		for _, p := range pl.Plugins {
			if p.Name == "foya-echo" {
				return p
			}
		}
		t.Fatalf("echo not listed: %+v", pl.Plugins)
		return pluginRow{}
	}

	// First boot: echo describes itself (its process is a child) and its
	// description is cached.
	k := startKernel(t, data)
	if !runsEcho(k) {
		t.Fatalf("first boot did not start echo to describe it: %q\n%s", pluginCmdlines(childPIDs(k.cmd.Process.Pid)), k.Logs())
	}
	if raw, err := os.ReadFile(filepath.Join(dir, ".descriptions.json")); err != nil || !strings.Contains(string(raw), exe) {
		t.Fatalf("description cache: %s, %v", raw, err)
	}
	k.stop(t)

	// Second boot: no plugin process, echo listed from its cached
	// description, started by the first turn on an echo connection.
	k = startKernel(t, data)
	pid := k.cmd.Process.Pid
	for range 10 {
		if kids := childPIDs(pid); len(kids) > 0 {
			t.Fatalf("plugin processes after the second boot: %v", pluginCmdlines(kids))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if p := echoRow(k); !p.Healthy || p.Pid != nil || p.ProviderKind != "echo" || p.Version != "0.1.0" {
		t.Fatalf("echo before any call: %+v", p)
	}
	if kids := childPIDs(pid); len(kids) > 0 {
		t.Fatalf("plugins query started %v", pluginCmdlines(kids))
	}
	c := k.createConnection(t, client.ConnectionInput{Name: ptr("echo"), ProviderKind: ptr("echo"), BaseUrl: ptr("http://127.0.0.1:1/v1"), Models: []client.ModelInput{{Id: "echo-1"}}})
	sid := k.createSession(t, client.CreateSessionInput{ConnectionId: ptr(c), Title: ptr("t"), ApprovalMode: ptr(client.ApprovalModeBypass)})
	k.sendMessage(t, sid, "echo me back")
	k.waitEvents(t, sid, "turn_finished", 1)
	if ms := k.getSession(t, sid).Session.Messages; len(ms) != 2 || ms[1].Text != "echo me back" {
		t.Fatalf("messages %+v\n%s", ms, k.Logs())
	}
	if !runsEcho(k) {
		t.Fatalf("the first turn did not start echo: %q", pluginCmdlines(childPIDs(pid)))
	}
	if p := echoRow(k); p.Pid == nil {
		t.Fatalf("echo after a turn: %+v", p)
	}
	k.stop(t)

	// A changed executable is described again at the next boot.
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(exe, later, later); err != nil {
		t.Fatal(err)
	}
	k = startKernel(t, data)
	if !runsEcho(k) {
		t.Fatalf("changed executable not described at boot: %q\n%s", pluginCmdlines(childPIDs(k.cmd.Process.Pid)), k.Logs())
	}
}
