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

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

func (k *kernelProc) chatSession(t testing.TB, baseURL string) string {
	t.Helper()
	c := k.createConnection(t, client.ConnectionInput{Name: ptr("fake"), BaseUrl: ptr(baseURL), ApiKey: ptr("sk-x"), Models: []client.ModelInput{{Id: "gpt-t"}}})
	return k.createSession(t, client.CreateSessionInput{ConnectionId: ptr(c), Title: ptr("t"), ApprovalMode: ptr(client.ApprovalModeBypass)})
}

func (k *kernelProc) waitEvent(t *testing.T, sid, typ string) { k.waitEvents(t, sid, typ, 1) }

// waitEvents waits until the session's log holds n events of type typ.
func (k *kernelProc) waitEvents(t *testing.T, sid, typ string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ev := k.eventLog(t, sid)
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
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	sid := k.chatSession(t, fake.BaseURL())
	fake.Enqueue(openaitest.TextStream("gpt-t", "Hello ", "from ", "the plugin"))
	k.sendMessage(t, sid, "hi")
	k.waitEvent(t, sid, "turn_finished")
	s := k.getSession(t, sid)
	if len(s.Session.Messages) != 2 || s.Session.Messages[1].Text != "Hello from the plugin" {
		t.Fatalf("session %+v", s.Session)
	}
}

// Killing the kernel mid-turn loses nothing that was complete, leaves no
// half message and no plugin process; after a restart the session is idle.
func TestKillMidTurnAndRestart(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	data := t.TempDir()
	k := startKernel(t, data)
	sid := k.chatSession(t, fake.BaseURL())
	fake.Enqueue(openaitest.TextStream("gpt-t", "First answer."))
	k.sendMessage(t, sid, "one")
	k.waitEvent(t, sid, "turn_finished")
	fake.Enqueue(openaitest.Response{Hang: true, Events: []string{
		openaitest.Chunk("gpt-t", map[string]any{"role": "assistant", "content": "half a sent"}, ""),
	}})
	k.sendMessage(t, sid, "two")
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
	s := k2.getSession(t, sid)
	if s.Session.Phase != "IDLE" {
		t.Fatalf("phase after restart %s", s.Session.Phase)
	}
	var texts []string
	for _, m := range s.Session.Messages {
		texts = append(texts, string(m.Role)+":"+m.Text)
	}
	if got := strings.Join(texts, "|"); got != "USER:one|ASSISTANT:First answer.|USER:two" {
		t.Fatalf("history after restart: %s", got)
	}
	// The session works again.
	fake.Enqueue(openaitest.TextStream("gpt-t", "Back."))
	k2.sendMessage(t, sid, "three")
	k2.waitEvents(t, sid, "turn_finished", 3)
	evs := k2.eventLog(t, sid)
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
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	proj := t.TempDir()
	p := k.createProject(t, proj)
	sid := k.chatSession(t, fake.BaseURL())
	k.updateSession(t, sid, client.UpdateSessionInput{ProjectId: ptr(p.Id)})
	bash := func(id, cmd string) openaitest.Response {
		args, _ := json.Marshal(map[string]any{"command": cmd})
		return openaitest.Response{Events: []string{
			openaitest.Chunk("gpt-t", map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": id, "type": "function", "function": map[string]any{"name": "bash", "arguments": string(args)}}}}, ""),
			openaitest.Chunk("gpt-t", map[string]any{}, "tool_calls"),
		}}
	}
	fake.Enqueue(bash("c1", "sleep 30"), bash("c2", "echo back > back.txt"), openaitest.TextStream("gpt-t", "recovered"))
	k.sendMessage(t, sid, "run it")
	k.waitEvent(t, sid, "tool_started")
	var tools int
	deadline := time.Now().Add(10 * time.Second)
	for tools == 0 && time.Now().Before(deadline) {
		for _, pid := range childPIDs(k.cmd.Process.Pid) {
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			if isToolsPlugin(cmdline) {
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
	s := k.getSession(t, sid)
	ms := s.Session.Messages
	if len(ms) != 6 || !ms[2].IsError || ms[4].IsError || ms[5].Text != "recovered" {
		t.Fatalf("messages %+v", ms)
	}
	if b, err := os.ReadFile(proj + "/back.txt"); err != nil || string(b) != "back\n" {
		t.Fatalf("the restarted plugin did not run the next call: %q %v", b, err)
	}
}

func TestRebuildProjectionsCommand(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	k := startKernel(t, data)
	for range 3 {
		k.createSession(t, client.CreateSessionInput{Title: ptr("x")})
	}
	k.stop(t)
	out, err := exec.Command(foyaBin, "rebuild-projections", "--data-dir", data).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "rebuilt projections from 3 events") {
		t.Fatalf("rebuild: %s %v", out, err)
	}
	k2 := startKernel(t, data)
	var s struct{ Sessions []struct{ Title string } }
	decodeAs(t, k2.listSessions(t, false), &s)
	if len(s.Sessions) != 3 || s.Sessions[0].Title != "x" {
		t.Fatalf("sessions after rebuild %+v", s.Sessions)
	}
}
