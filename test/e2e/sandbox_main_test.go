//go:build linux

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// The tests of this file check the tool sandbox (docs/sandbox.md) through
// the real kernel binary, its real tools plugin process and real Landlock.

// outsideTmp is a fresh directory outside /tmp, which confined commands may
// write: a sibling of a project placed there must stay unwritable.
func outsideTmp(t *testing.T) string {
	t.Helper()
	for _, base := range []string{"/var/tmp", "."} {
		dir, err := os.MkdirTemp(base, "foya-sandbox-test-")
		if err != nil {
			continue
		}
		abs, _ := filepath.Abs(dir)
		real, _ := filepath.EvalSymlinks(abs)
		t.Cleanup(func() { os.RemoveAll(real) })
		return real
	}
	t.Fatal("no writable directory outside /tmp")
	return ""
}

// sandboxState returns the tools plugin's sandbox and detail.
func (k *kernelProc) sandboxState(t *testing.T) (string, string) {
	t.Helper()
	r := k.listPlugins(t)
	for _, p := range r.Plugins {
		if p.Name == "tools" && p.Sandbox != nil && p.SandboxDetail != nil {
			return *p.Sandbox, *p.SandboxDetail
		}
	}
	t.Fatalf("no tools plugin with a sandbox state: %+v", r.Plugins)
	return "", ""
}

// requireLandlock skips the test, saying so, on a machine without Landlock.
func (k *kernelProc) requireLandlock(t *testing.T) (namespaces bool) {
	t.Helper()
	state, detail := k.sandboxState(t)
	if state != "landlock" {
		t.Skipf("Landlock is not available on this machine, so the sandbox cannot be tested: %s", detail)
	}
	return strings.Contains(detail, "user namespaces:")
}

func toolCall(id, name string, input any) openaitest.Response {
	args, _ := json.Marshal(input)
	return openaitest.Response{Events: []string{
		openaitest.Chunk("gpt-t", map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": id, "type": "function", "function": map[string]any{"name": name, "arguments": string(args)}}}}, ""),
		openaitest.Chunk("gpt-t", map[string]any{}, "tool_calls"),
	}}
}

// toolMsg is one message of a session, as runTools returns the tool results.
type toolMsg = client.SessionDetailSessionMessagesMessage

// session creates a session on a fake connection, bound to the project of
// dir when dir is not empty.
func (k *kernelProc) session(t *testing.T, baseURL, dir, mode string) string {
	t.Helper()
	// Connection names are unique: one "fake" per kernel, reused.
	connID := ""
	for _, cn := range k.listConnections(t) {
		if cn.Name == "fake" {
			connID = cn.Id
		}
	}
	if connID == "" {
		connID = k.createConnection(t, client.ConnectionInput{Name: ptr("fake"), BaseUrl: ptr(baseURL), ApiKey: ptr("sk-conn-secret"), Models: []client.ModelInput{{Id: "gpt-t"}}})
	}
	in := client.CreateSessionInput{ConnectionId: ptr(connID), Title: ptr("t"), ApprovalMode: ptr(client.ApprovalMode(mode))}
	if dir != "" {
		for _, p := range k.listProjects(t) {
			if p.Path == dir {
				in.ProjectId = ptr(p.Id)
			}
		}
		if in.ProjectId == nil {
			in.ProjectId = ptr(k.createProject(t, dir).Id)
		}
	}
	return k.createSession(t, in)
}

// runTools makes the fake model call the tools in order within one turn
// and returns the tool messages.
func (k *kernelProc) runTools(t *testing.T, fake *openaitest.Server, sid string, calls ...openaitest.Response) []toolMsg {
	t.Helper()
	fake.Enqueue(append(calls, openaitest.TextStream("gpt-t", "done"))...)
	before := k.eventLog(t, sid)
	n := 0
	for _, e := range before.Events {
		if e.Type == "turn_finished" {
			n++
		}
	}
	k.sendMessage(t, sid, "go")
	k.waitEvents(t, sid, "turn_finished", n+1)
	s := k.sessionDetail(t, sid)
	var out []toolMsg
	for _, m := range s.Session.Messages {
		if m.Role == "TOOL" {
			out = append(out, m)
		}
	}
	return out[len(out)-len(calls):]
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// processesIn lists the processes whose working directory is dir or lies
// beneath it.
func processesIn(dir string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd")
		if err != nil || (cwd != dir && !strings.HasPrefix(cwd, dir+"/")) {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return out
}

// waitNoProcessesIn waits until no process works in dir: then none is left
// that could still write there.
func waitNoProcessesIn(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if len(processesIn(dir)) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("processes survive in %s: %v", dir, processesIn(dir))
}

// isToolsPlugin reports whether a process's command line is the tools
// plugin's: its own executable, or foya run again as "foya plugin tools".
func isToolsPlugin(cmdline []byte) bool {
	return strings.Contains(string(cmdline), "plugin\x00tools") || strings.Contains(string(cmdline), "foya-plugin-tools")
}

func (k *kernelProc) toolsPluginPID(t *testing.T) int {
	t.Helper()
	for _, pid := range childPIDs(k.cmd.Process.Pid) {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if isToolsPlugin(cmdline) {
			return pid
		}
	}
	t.Fatal("no tools plugin process")
	return 0
}

// startSecretKernel starts a kernel whose environment holds the secrets no
// tool process may see.
func startSecretKernel(t *testing.T, data string, extra ...string) *kernelProc {
	t.Helper()
	t.Setenv("FOYA_TOKEN", "foya-token-secret")
	t.Setenv("OPENAI_API_KEY", "sk-env-secret")
	t.Setenv("GITHUB_TOKEN", "ghp-env-secret")
	return startKernel(t, data, extra...)
}

func TestSandboxedTools(t *testing.T) {
	base := outsideTmp(t)
	data := filepath.Join(base, "data")
	proj := filepath.Join(base, "proj")
	sibling := filepath.Join(base, "sibling")
	for _, d := range []string{proj, sibling} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fake := openaitest.New(t)
	k := startSecretKernel(t, data, "--allow-key-env", "GITHUB_TOKEN")
	namespaces := k.requireLandlock(t)
	if err := os.WriteFile(filepath.Join(data, "auth-token"), []byte("auth-token-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	secrets := []string{"sk-conn-secret", "foya-token-secret", "sk-env-secret", "ghp-env-secret", "auth-token-secret"}
	noSecret := func(t *testing.T, text string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("a tool saw secret %q:\n%s", s, text)
			}
		}
	}

	t.Run("bash writes only to the writable roots", func(t *testing.T) {
		sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
		script := fmt.Sprintf(`echo p > %[1]s/in-project && echo wrote-project
echo s > %[2]s/outside; echo d > %[3]s/planted
echo t > "$TMPDIR/in-tmpdir" && echo "tmpdir=$TMPDIR"
f=$(mktemp /tmp/foya-sandbox-XXXXXX) && echo wrote-tmp && rm "$f"
env; cat /proc/%[4]d/environ; cat %[3]s/connections.json %[3]s/auth-token; ls -a %[3]s`, proj, sibling, data, k.cmd.Process.Pid)
		ms := k.runTools(t, fake, sid, toolCall("c1", "bash", map[string]any{"command": script}))
		out := ms[0].Text
		t.Logf("bash output:\n%s", out)
		noSecret(t, out)
		for _, want := range []string{"wrote-project", "wrote-tmp", "tmpdir="} {
			if !strings.Contains(out, want) {
				t.Errorf("missing %q in:\n%s", want, out)
			}
		}
		if !exists(filepath.Join(proj, "in-project")) || exists(filepath.Join(sibling, "outside")) || exists(filepath.Join(data, "planted")) {
			t.Fatalf("writes: project %v, sibling %v, data dir %v\n%s", exists(filepath.Join(proj, "in-project")), exists(filepath.Join(sibling, "outside")), exists(filepath.Join(data, "planted")), out)
		}
		tmpdir := strings.Fields(out[strings.Index(out, "tmpdir=")+len("tmpdir="):])[0]
		if !exists(filepath.Join(tmpdir, "in-tmpdir")) || strings.HasPrefix(tmpdir, data) || !strings.Contains(tmpdir, sid) {
			t.Errorf("per-session TMPDIR %q", tmpdir)
		}
		if namespaces && strings.Contains(out, "foya.db") {
			t.Errorf("the data directory is listed:\n%s", out)
		}
	})

	t.Run("path tools refuse the data directory inside the project", func(t *testing.T) {
		sid := k.session(t, fake.BaseURL(), base, "ASK") // the project contains the data directory
		ms := k.runTools(t, fake, sid,
			toolCall("r1", "read", map[string]any{"path": "data/connections.json"}),
			toolCall("r2", "read", map[string]any{"path": filepath.Join(data, "auth-token")}),
			toolCall("g1", "glob", map[string]any{"pattern": "**/*"}),
			toolCall("g2", "grep", map[string]any{"pattern": "secret"}),
			toolCall("g3", "grep", map[string]any{"pattern": "secret", "path": "data"}),
			toolCall("w1", "write", map[string]any{"path": "data/planted", "content": "x"}),
		)
		for _, m := range ms {
			t.Logf("%s: %.300s", m.ToolName, m.Text)
			noSecret(t, m.Text)
		}
		for _, i := range []int{0, 1, 4, 5} {
			if !ms[i].IsError || !strings.Contains(ms[i].Text, "data directory") {
				t.Errorf("%s not refused: %+v", ms[i].ToolName, ms[i])
			}
		}
		if strings.Contains(ms[2].Text, "connections.json") || strings.Contains(ms[2].Text, "foya.db") || !strings.Contains(ms[2].Text, "in-project") {
			t.Errorf("glob: %s", ms[2].Text)
		}
		if exists(filepath.Join(data, "planted")) {
			t.Error("write into the data directory")
		}
		// The refused write was never put to a person.
		ev := k.eventLog(t, sid)
		for _, e := range ev.Events {
			if e.Type == "approval_requested" {
				t.Error("an approval was asked for a write the scope check refuses")
			}
		}
	})

	t.Run("bash in a scratch session cannot read the keys", func(t *testing.T) {
		sid := k.session(t, fake.BaseURL(), "", "BYPASS")
		ms := k.runTools(t, fake, sid, toolCall("c1", "bash", map[string]any{
			"command": `pwd; grep apiKey ../../connections.json; cat ../../connections.json ../../auth-token; ls ../..; echo mine > mine.txt && cat mine.txt`,
		}))
		out := ms[0].Text
		t.Logf("bash output:\n%s", out)
		if !namespaces {
			t.Skipf("no user namespaces: bash can read the data directory here (documented):\n%s", out)
		}
		noSecret(t, out)
		if !strings.Contains(out, "mine\n") || !strings.Contains(out, filepath.Join(data, "scratch", sid)) {
			t.Errorf("scratch session output:\n%s", out)
		}
	})

	t.Run("background processes end with the call", func(t *testing.T) {
		sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
		ms := k.runTools(t, fake, sid, toolCall("c1", "bash", map[string]any{"command": "(sleep 2; touch orphan-bg) & echo started"}))
		t.Logf("bash output:\n%s", ms[0].Text)
		if !strings.Contains(ms[0].Text, "background process") || !strings.Contains(ms[0].Text, "sleep") {
			t.Errorf("leftover not reported:\n%s", ms[0].Text)
		}
		waitNoProcessesIn(t, proj)
		if exists(filepath.Join(proj, "orphan-bg")) {
			t.Error("a background process outlived its call")
		}
	})

	t.Run("env references and the backup file", func(t *testing.T) {
		for _, name := range []string{"PATH", "HOME", "AWS_SECRET_ACCESS_KEY"} {
			_, err := client.CreateConnection(context.Background(), k.client(), client.ConnectionInput{Name: ptr("x"), BaseUrl: ptr("https://evil.example/v1"), ApiKey: ptr("env:" + name)})
			code, msg := wantError(t, err)
			if code != "BAD_INPUT" || !strings.Contains(msg, "_API_KEY$") || !strings.Contains(msg, "--allow-key-env") {
				t.Errorf("env:%s: %s %s", name, code, msg)
			}
		}
		k.createConnection(t, client.ConnectionInput{Name: ptr("gh"), BaseUrl: ptr("https://evil.example/v1"), ApiKey: ptr("env:GITHUB_TOKEN")})
		d := k.createConnection(t, client.ConnectionInput{Name: ptr("doomed"), BaseUrl: ptr("https://x.example/v1"), ApiKey: ptr("sk-doomed-key")})
		k.updateConnection(t, d, client.ConnectionInput{ApiKey: ptr("sk-replacement-key")})
		k.deleteConnection(t, d)
		for _, f := range []string{"connections.json", "connections.json.bak"} {
			b, err := os.ReadFile(filepath.Join(data, f))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte("sk-doomed-key")) || bytes.Contains(b, []byte("sk-replacement-key")) {
				t.Errorf("%s keeps a deleted or replaced key:\n%s", f, b)
			}
		}
	})

	t.Run("kill -9 of the tools plugin leaves no orphan", func(t *testing.T) {
		dir := filepath.Join(base, "proj-plugin-kill")
		os.MkdirAll(dir, 0o755)
		sid := k.session(t, fake.BaseURL(), dir, "BYPASS")
		fake.Enqueue(toolCall("c1", "bash", map[string]any{"command": "(sleep 2; touch orphan) & sleep 60"}), openaitest.TextStream("gpt-t", "after"))
		k.sendMessage(t, sid, "go")
		waitFor(t, func() bool { return len(processesIn(dir)) >= 2 })
		syscall.Kill(k.toolsPluginPID(t), syscall.SIGKILL)
		waitNoProcessesIn(t, dir)
		k.waitEvent(t, sid, "turn_finished")
		if exists(filepath.Join(dir, "orphan")) {
			t.Error("orphan written after the plugin died")
		}
	})

	t.Run("kill -9 of the kernel leaves no orphan", func(t *testing.T) {
		dir := filepath.Join(base, "proj-kernel-kill")
		os.MkdirAll(dir, 0o755)
		sid := k.session(t, fake.BaseURL(), dir, "BYPASS")
		fake.Enqueue(toolCall("c1", "bash", map[string]any{"command": "(sleep 2; touch orphan) & sleep 60"}))
		k.sendMessage(t, sid, "go")
		waitFor(t, func() bool { return len(processesIn(dir)) >= 2 })
		k.cmd.Process.Kill()
		<-k.done
		waitNoProcessesIn(t, dir)
		if exists(filepath.Join(dir, "orphan")) {
			t.Error("orphan written after the kernel died")
		}
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 20s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// --tool-network=off denies TCP to tool commands; the default allows it.
func TestSandboxNetworkOff(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	cmd := fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d && head -1 <&3 && echo connected`, port)
	for _, tc := range []struct {
		flag    string
		connect bool
	}{{"on", true}, {"off", false}} {
		t.Run(tc.flag, func(t *testing.T) {
			fake := openaitest.New(t)
			k := startKernel(t, t.TempDir(), "--tool-network="+tc.flag)
			k.requireLandlock(t)
			if _, detail := k.sandboxState(t); tc.flag == "off" && !strings.Contains(detail, "network off") {
				t.Errorf("detail %q", detail)
			}
			sid := k.session(t, fake.BaseURL(), t.TempDir(), "BYPASS")
			ms := k.runTools(t, fake, sid, toolCall("c1", "bash", map[string]any{"command": cmd}))
			if got := strings.Contains(ms[0].Text, "connected"); got != tc.connect {
				t.Errorf("network %s: connected = %v:\n%s", tc.flag, got, ms[0].Text)
			}
		})
	}
}
