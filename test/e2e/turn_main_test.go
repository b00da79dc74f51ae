package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

func (k *kernelProc) chatSession(t testing.TB, baseURL string) string {
	t.Helper()
	var c struct{ CreateConnection struct{ ID string } }
	k.gql(t, `mutation($u: String) { createConnection(input: {name: "fake", baseUrl: $u, apiKey: "sk-x", models: [{id: "gpt-t"}]}) { id } }`, map[string]any{"u": baseURL}, &c)
	var s struct{ CreateSession struct{ ID string } }
	k.gql(t, `mutation($c: ID) { createSession(input: {connectionId: $c, title: "t", approvalMode: BYPASS}) { id } }`, map[string]any{"c": c.CreateConnection.ID}, &s)
	return s.CreateSession.ID
}

func (k *kernelProc) waitEvent(t *testing.T, sid, typ string) { k.waitEvents(t, sid, typ, 1) }

// waitEvents waits until the session's log holds n events of type typ.
func (k *kernelProc) waitEvents(t *testing.T, sid, typ string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var ev struct{ Events []struct{ Type string } }
		k.gql(t, `query($s: ID!) { events(sessionId: $s, limit: 5000) { type } }`, map[string]any{"s": sid}, &ev)
		got := 0
		for _, e := range ev.Events {
			if e.Type == typ {
				got++
			}
		}
		if got >= n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("fewer than %d %s events:\n%s", n, typ, k.Logs())
}

// A real client drives a streamed turn through the kernel binary and its
// out-of-process provider plugin.
func TestTurnThroughRealPlugin(t *testing.T) {
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	sid := k.chatSession(t, fake.BaseURL())
	fake.Enqueue(openaitest.TextStream("gpt-t", "Hello ", "from ", "the plugin"))
	var r struct{ SendMessage struct{ TurnStarted bool } }
	k.gql(t, `mutation($s: ID!) { sendMessage(sessionId: $s, input: {text: "hi"}) { turnStarted } }`, map[string]any{"s": sid}, &r)
	k.waitEvent(t, sid, "turn_finished")
	var s struct {
		Session struct {
			Phase    string
			Messages []struct{ Role, Text string }
		}
	}
	k.gql(t, `query($s: ID!) { session(id: $s) { phase messages { role text } } }`, map[string]any{"s": sid}, &s)
	if len(s.Session.Messages) != 2 || s.Session.Messages[1].Text != "Hello from the plugin" {
		t.Fatalf("session %+v", s.Session)
	}
}

// Killing the kernel mid-turn loses nothing that was complete, leaves no
// half message and no plugin process; after a restart the session is idle.
func TestKillMidTurnAndRestart(t *testing.T) {
	fake := openaitest.New(t)
	data := t.TempDir()
	k := startKernel(t, data)
	sid := k.chatSession(t, fake.BaseURL())
	fake.Enqueue(openaitest.TextStream("gpt-t", "First answer."))
	k.gql(t, `mutation($s: ID!) { sendMessage(sessionId: $s, input: {text: "one"}) { turnStarted } }`, map[string]any{"s": sid}, nil)
	k.waitEvent(t, sid, "turn_finished")
	fake.Enqueue(openaitest.Response{Hang: true, Events: []string{
		openaitest.Chunk("gpt-t", map[string]any{"role": "assistant", "content": "half a sent"}, ""),
	}})
	k.gql(t, `mutation($s: ID!) { sendMessage(sessionId: $s, input: {text: "two"}) { turnStarted } }`, map[string]any{"s": sid}, nil)
	// Wait until the provider is streaming, then kill -9.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for len(fake.Requests()) < 2 && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	children := childPIDs(k.cmd.Process.Pid)
	if len(children) == 0 {
		t.Fatal("no plugin child process found")
	}
	k.cmd.Process.Signal(syscall.SIGKILL)
	<-k.done
	// Plugins die with the kernel (Pdeathsig).
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range children {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("plugin process %d survived the kernel", pid)
		}
	}

	k2 := startKernel(t, data)
	var s struct {
		Session struct {
			Phase    string
			Messages []struct{ Role, Text string }
		}
	}
	k2.gql(t, `query($s: ID!) { session(id: $s) { phase messages { role text } } }`, map[string]any{"s": sid}, &s)
	if s.Session.Phase != "IDLE" {
		t.Fatalf("phase after restart %s", s.Session.Phase)
	}
	var texts []string
	for _, m := range s.Session.Messages {
		texts = append(texts, m.Role+":"+m.Text)
	}
	if got := strings.Join(texts, "|"); got != "USER:one|ASSISTANT:First answer.|USER:two" {
		t.Fatalf("history after restart: %s", got)
	}
	// The session works again.
	fake.Enqueue(openaitest.TextStream("gpt-t", "Back."))
	k2.gql(t, `mutation($s: ID!) { sendMessage(sessionId: $s, input: {text: "three"}) { turnStarted } }`, map[string]any{"s": sid}, nil)
	k2.waitEvents(t, sid, "turn_finished", 3)
	var evs struct{ Events []struct{ Type string } }
	k2.gql(t, `query($s: ID!) { events(sessionId: $s, limit: 5000) { type } }`, map[string]any{"s": sid}, &evs)
	raw, _ := json.Marshal(evs)
	// The interrupted turn got its end at restart: every turn_started has a turn_finished.
	if strings.Count(string(raw), "turn_started") != strings.Count(string(raw), "turn_finished") {
		t.Fatalf("events %s", raw)
	}
}

// childPIDs lists the direct children of pid from /proc.
func childPIDs(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		fields := strings.Fields(s[i+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	return len(f) > 0 && f[0] != "Z"
}

// A tool plugin killed mid-call yields an error tool message, the turn goes
// on, and the plugin is restarted on the next call.
func TestToolPluginKilledMidCall(t *testing.T) {
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	proj := t.TempDir()
	var p struct{ CreateProject struct{ ID string } }
	k.gql(t, `mutation($p: String!) { createProject(input: {path: $p}) { id } }`, map[string]any{"p": proj}, &p)
	sid := k.chatSession(t, fake.BaseURL())
	k.gql(t, `mutation($s: ID!, $p: ID) { updateSession(id: $s, input: {projectId: $p}) { id } }`, map[string]any{"s": sid, "p": p.CreateProject.ID}, nil)
	bash := func(id, cmd string) openaitest.Response {
		args, _ := json.Marshal(map[string]any{"command": cmd})
		return openaitest.Response{Events: []string{
			openaitest.Chunk("gpt-t", map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": id, "type": "function", "function": map[string]any{"name": "bash", "arguments": string(args)}}}}, ""),
			openaitest.Chunk("gpt-t", map[string]any{}, "tool_calls"),
		}}
	}
	fake.Enqueue(bash("c1", "sleep 30"), bash("c2", "echo back > back.txt"), openaitest.TextStream("gpt-t", "recovered"))
	k.gql(t, `mutation($s: ID!) { sendMessage(sessionId: $s, input: {text: "run it"}) { turnStarted } }`, map[string]any{"s": sid}, nil)
	k.waitEvent(t, sid, "tool_started")
	var tools int
	deadline := time.Now().Add(10 * time.Second)
	for tools == 0 && time.Now().Before(deadline) {
		for _, pid := range childPIDs(k.cmd.Process.Pid) {
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			if strings.Contains(string(cmdline), "plugin\x00tools") {
				tools = pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if tools == 0 {
		t.Fatal("no tools plugin process")
	}
	time.Sleep(200 * time.Millisecond) // let bash start
	syscall.Kill(tools, syscall.SIGKILL)
	k.waitEvent(t, sid, "turn_finished")
	var s struct {
		Session struct {
			Messages []struct {
				Role, Text string
				IsError    bool
			}
		}
	}
	k.gql(t, `query($s: ID!) { session(id: $s) { messages { role text isError } } }`, map[string]any{"s": sid}, &s)
	ms := s.Session.Messages
	if len(ms) != 6 || !ms[2].IsError || ms[4].IsError || ms[5].Text != "recovered" {
		t.Fatalf("messages %+v", ms)
	}
	if b, err := os.ReadFile(proj + "/back.txt"); err != nil || string(b) != "back\n" {
		t.Fatalf("the restarted plugin did not run the next call: %q %v", b, err)
	}
}

func TestRebuildProjectionsCommand(t *testing.T) {
	data := t.TempDir()
	k := startKernel(t, data)
	for range 3 {
		k.gql(t, `mutation { createSession(input: {title: "x"}) { id } }`, nil, nil)
	}
	k.stop(t)
	out, err := exec.Command(foyaBin, "rebuild-projections", "--data-dir", data).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "rebuilt projections from 3 events") {
		t.Fatalf("rebuild: %s %v", out, err)
	}
	k2 := startKernel(t, data)
	var s struct{ Sessions []struct{ Title string } }
	k2.gql(t, `{ sessions { title } }`, nil, &s)
	if len(s.Sessions) != 3 || s.Sessions[0].Title != "x" {
		t.Fatalf("sessions after rebuild %+v", s.Sessions)
	}
}
