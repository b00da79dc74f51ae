package host_test

import (
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/plugins/host"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// idleManager runs the openai and tools built-ins with IdleStopAfter, and
// the third-party echo plugin.
func idleManager(t *testing.T, idle time.Duration) (*host.Manager, *syncBuffer) {
	t.Helper()
	return newTestManager(t, host.Config{IdleStopAfter: idle, Builtins: []host.Builtin{{Name: "openai"}, {Name: "tools"}}}, nil)
}

// waitPID polls the plugins listing until cond holds for the plugin's pid;
// the deadline only bounds a failing test.
func waitPID(t *testing.T, m *host.Manager, name string, cond func(pid int) bool, what string, logs *syncBuffer) host.PluginInfo {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		info := pluginInfo(t, m, name)
		if cond(info.PID) {
			return info
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s never happened (%+v)\n%s", name, what, info, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func stoppedPID(pid int) bool { return pid == 0 }
func runningPID(pid int) bool { return pid != 0 }

// TestIdleBuiltinsStopAndRestartOnCall: with IdleStopAfter, built-in
// plugins without a call in progress stop (listed healthy, no pid, process
// gone), the tool list is still answered without starting the tool plugin,
// the next call starts each plugin again transparently, and a third-party
// plugin keeps running.
func TestIdleBuiltinsStopAndRestartOnCall(t *testing.T) {
	m, logs := idleManager(t, 300*time.Millisecond)
	srv := openaitest.New(t)
	ep := core.Endpoint{BaseURL: srv.BaseURL()}
	oa, err := m.Provider("openai")
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(openaitest.TextStream("m", "first"))
	if got := streamText(t, oa, ep, userMsg("hi")); got != "first" {
		t.Fatalf("first stream %q", got)
	}
	echoPID := pluginInfo(t, m, "echo").PID
	for _, name := range []string{"openai", "tools"} {
		pid := pluginInfo(t, m, name).PID
		info := waitPID(t, m, name, stoppedPID, "idle stop", logs)
		if !info.Healthy || info.Error != "" {
			t.Fatalf("%s stopped for idleness: %+v", name, info)
		}
		if pid != 0 && alive(pid) {
			time.Sleep(2 * time.Second) // reaping
			if alive(pid) {
				t.Fatalf("%s: idle process %d still alive", name, pid)
			}
		}
	}
	if info := pluginInfo(t, m, "echo"); info.PID != echoPID || info.PID == 0 {
		t.Fatalf("third-party plugin stopped: %+v (pid was %d)", info, echoPID)
	}

	runner := m.ToolRunners()["tools"]
	tools, err := runner.Tools(ctxT(t))
	if err != nil || len(tools) != 6 {
		t.Fatalf("tool list while stopped: %d tools, %v", len(tools), err)
	}
	if pid := pluginInfo(t, m, "tools").PID; pid != 0 {
		t.Fatalf("listing tools started the tool plugin (pid %d)", pid)
	}
	res, err := runner.Call(ctxT(t), core.ToolCallRequest{Name: "bash", ScopeDir: t.TempDir(), Input: []byte(`{"command":"printf back"}`)})
	if err != nil || res.IsError || !strings.Contains(res.Text, "back") {
		t.Fatalf("tool call after idle stop: %+v %v", res, err)
	}
	srv.Enqueue(openaitest.TextStream("m", "again"))
	if got := streamText(t, oa, ep, userMsg("hi")); got != "again" {
		t.Fatalf("stream after idle stop %q", got)
	}
	if !strings.Contains(logs.String(), "plugin idle; stopped until its next call") {
		t.Fatalf("no idle-stop log line:\n%s", logs.String())
	}
}

// TestIdleStopNeverInterruptsACall: a stream and a tool call that last many
// times IdleStopAfter run to the end in the same process.
func TestIdleStopNeverInterruptsACall(t *testing.T) {
	m, logs := idleManager(t, 100*time.Millisecond)
	srv := openaitest.New(t)
	ep := core.Endpoint{BaseURL: srv.BaseURL()}
	oa, err := m.Provider("openai")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		plugin string
		run    func(t *testing.T)
	}{
		{"stream", "openai", func(t *testing.T) {
			r := openaitest.TextStream("m", "slow ", "but ", "whole")
			r.Delay = 400 * time.Millisecond
			srv.Enqueue(r)
			if got := streamText(t, oa, ep, userMsg("hi")); got != "slow but whole" {
				t.Fatalf("text %q", got)
			}
		}},
		{"tool call", "tools", func(t *testing.T) {
			r := m.ToolRunners()["tools"]
			if r == nil {
				t.Fatalf("no tool runner for the tools plugin\n%s", logs.String())
			}
			res, err := r.Call(ctxT(t), core.ToolCallRequest{Name: "bash", ScopeDir: t.TempDir(), Input: []byte(`{"command":"sleep 1.5; printf done"}`)})
			if err != nil || res.IsError || !strings.Contains(res.Text, "done") {
				t.Fatalf("tool call %+v %v", res, err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Watch the plugin's pid while the call runs: it may start
			// (the plugin may be stopped already), never stop or change.
			stop := make(chan struct{})
			seen := make(chan []int)
			go func() {
				var pids []int
				for {
					for _, p := range m.Plugins() {
						if p.Name == tc.plugin && (len(pids) == 0 || pids[len(pids)-1] != p.PID) {
							pids = append(pids, p.PID)
						}
					}
					select {
					case <-stop:
						seen <- pids
						return
					case <-time.After(5 * time.Millisecond):
					}
				}
			}()
			tc.run(t)
			close(stop)
			pids := <-seen
			if pids[0] == 0 {
				pids = pids[1:]
			}
			if len(pids) != 1 {
				t.Fatalf("plugin pids during the call %v, want one process throughout\n%s", pids, logs.String())
			}
			waitPID(t, m, tc.plugin, stoppedPID, "idle stop after the call", logs)
		})
	}
}

// TestProviderLookupWarmsStoppedPlugin: looking a provider up (as the
// kernel does when it accepts a turn) starts its stopped plugin without a
// call; with no call it stops again.
func TestProviderLookupWarmsStoppedPlugin(t *testing.T) {
	m, logs := idleManager(t, 300*time.Millisecond)
	waitPID(t, m, "openai", stoppedPID, "idle stop", logs)
	if _, err := m.Provider("openai"); err != nil {
		t.Fatal(err)
	}
	waitPID(t, m, "openai", runningPID, "warm start", logs)
	waitPID(t, m, "openai", stoppedPID, "idle stop after the warm start", logs)
}
