//go:build linux

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// The tests of this file drive background terminals (docs/terminals.md)
// through the real kernel binary: the fake model starts and reads them,
// the typed client looks at and kills them, and /proc shows which
// processes are left.

var terminalIDRe = regexp.MustCompile(`terminal (term_\S+) started`)

// startTerminal makes the fake model start command with terminal_start in
// one turn and returns the terminal id.
func (k *kernelProc) startTerminal(t *testing.T, fake *openaitest.Server, sid, command string) string {
	t.Helper()
	ms := k.runTools(t, fake, sid, toolCall("ts-"+time.Now().Format("150405.000000"), "terminal_start", map[string]any{"command": command}))
	m := terminalIDRe.FindStringSubmatch(ms[0].Text)
	if ms[0].IsError || m == nil {
		t.Fatalf("terminal_start: %+v\n%s", ms[0], k.Logs())
	}
	return m[1]
}

func (k *kernelProc) terminals(t *testing.T, sid string) []client.TerminalFields {
	t.Helper()
	r, err := client.SessionTerminals(context.Background(), k.client(), sid)
	if err != nil {
		t.Fatal(err)
	}
	var out []client.TerminalFields
	for _, tm := range r.Session.Terminals {
		out = append(out, tm.TerminalFields)
	}
	return out
}

// waitTerminal waits until the terminal's status is want and returns it.
func (k *kernelProc) waitTerminal(t *testing.T, sid, id string, want client.TerminalStatus) client.TerminalFields {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, tm := range k.terminals(t, sid) {
			if tm.Id == id && tm.Status == want {
				return tm
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("terminal %s never %s: %+v", id, want, k.terminals(t, sid))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTerminals(t *testing.T) {
	t.Parallel()
	base := outsideTmp(t)
	data := filepath.Join(base, "data")
	fake := openaitest.New(t)
	k := startKernel(t, data)
	ctx := context.Background()
	c := k.client()

	t.Run("a terminal outlives its turn, the next turn reads it, killTerminal ends it", func(t *testing.T) {
		proj := filepath.Join(base, "proj")
		mkdirs(t, proj)
		sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
		id := k.startTerminal(t, fake, sid, "sh -c 'echo ready; sleep 30'")

		ms := k.runTools(t, fake, sid, toolCall("tr", "terminal_read", map[string]any{"id": id, "waitMs": 10000}))
		if ms[0].IsError || !strings.Contains(ms[0].Text, "ready") || !strings.Contains(ms[0].Text, "running") {
			t.Fatalf("terminal_read in the next turn: %+v", ms[0])
		}
		ts := k.terminals(t, sid)
		if len(ts) != 1 || ts[0].Id != id || ts[0].Status != client.TerminalStatusRunning || ts[0].Cwd != proj || ts[0].ExitCode != nil {
			t.Fatalf("Session.terminals: %+v", ts)
		}
		out, err := client.TerminalOutput(ctx, c, sid, id, nil)
		if err != nil || out.TerminalOutput.Text != "ready\n" || out.TerminalOutput.NextOffset != 6 {
			t.Fatalf("terminalOutput: %+v %v", out, err)
		}
		if len(processesIn(proj)) == 0 {
			t.Fatal("no process of the terminal runs in the project")
		}
		killed, err := client.KillTerminal(ctx, c, sid, id)
		if err != nil || killed.KillTerminal.Status != client.TerminalStatusKilled || killed.KillTerminal.EndedAt == nil {
			t.Fatalf("killTerminal: %+v %v", killed, err)
		}
		waitNoProcessesIn(t, proj)
		k.waitEvents(t, sid, "terminal_exited", 1)
		ev := k.eventLog(t, sid)
		var types []string
		for _, e := range ev.Events {
			if strings.HasPrefix(e.Type, "terminal_") {
				types = append(types, e.Type)
			}
			if e.Type == "terminal_exited" {
				// The output kept at the end is an artifact.
				var p struct{ OutputSha256 string }
				json.Unmarshal(e.Payload, &p)
				sum := sha256.Sum256([]byte("ready\n"))
				if p.OutputSha256 != hex.EncodeToString(sum[:]) {
					t.Errorf("terminal_exited outputSha256 %q", p.OutputSha256)
				}
				if len(p.OutputSha256) == 64 && !exists(filepath.Join(data, "artifacts", "sha256", p.OutputSha256[:2], p.OutputSha256[2:])) {
					t.Errorf("no artifact %s in the store", p.OutputSha256)
				}
			}
		}
		if strings.Join(types, ",") != "terminal_started,terminal_exited" {
			t.Errorf("terminal events: %v", types)
		}
	})

	t.Run("deleting a session leaves no terminal process", func(t *testing.T) {
		proj := filepath.Join(base, "proj-delete")
		mkdirs(t, proj)
		sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
		id := k.startTerminal(t, fake, sid, "sh -c 'echo ready; sleep 30'")
		k.waitTerminal(t, sid, id, client.TerminalStatusRunning)
		waitProcessesIn(t, proj)
		k.deleteSession(t, sid)
		waitNoProcessesIn(t, proj)
	})

	t.Run("output past the buffer is dropped and counted", func(t *testing.T) {
		proj := filepath.Join(base, "proj-big")
		mkdirs(t, proj)
		sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
		const total = 3 << 20
		id := k.startTerminal(t, fake, sid, "head -c 3145728 /dev/zero | tr '\\0' a")
		tm := k.waitTerminal(t, sid, id, client.TerminalStatusExited)
		if tm.OutputBytes != total || tm.DroppedBytes != total-1<<20 || tm.ExitCode == nil || *tm.ExitCode != 0 {
			t.Fatalf("terminal after 3 MiB: %+v", tm)
		}
		out, err := client.TerminalOutput(ctx, c, sid, id, ptr(0))
		if err != nil {
			t.Fatal(err)
		}
		o := out.TerminalOutput
		if o.DroppedBytes != total-1<<20 || o.Offset != total-1<<20 || o.NextOffset != total || len(o.Text) != 1<<20 || o.More {
			t.Fatalf("terminalOutput from 0: dropped %d offset %d next %d len %d more %v", o.DroppedBytes, o.Offset, o.NextOffset, len(o.Text), o.More)
		}
		ms := k.runTools(t, fake, sid, toolCall("tr-big", "terminal_read", map[string]any{"id": id}))
		if !strings.Contains(ms[0].Text, "2097152 bytes of older output were dropped") || !strings.Contains(ms[0].Text, "more output follows") {
			t.Errorf("terminal_read of a big output: %.200s … %.300s", ms[0].Text, ms[0].Text[max(0, len(ms[0].Text)-300):])
		}
	})

	t.Run("writeTerminal feeds its input; stopTurn with killTerminals ends it", func(t *testing.T) {
		proj := filepath.Join(base, "proj-input")
		mkdirs(t, proj)
		sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
		id := k.startTerminal(t, fake, sid, `while read -r l; do echo "got $l"; done`)
		if _, err := client.WriteTerminal(ctx, c, sid, id, "hello\n"); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			out, err := client.TerminalOutput(ctx, c, sid, id, nil)
			if err != nil {
				t.Fatal(err)
			}
			if out.TerminalOutput.Text == "got hello\n" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no echo of the input: %+v", out.TerminalOutput)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if _, err := client.StopTurnKillTerminals(ctx, c, sid); err != nil {
			t.Fatal(err)
		}
		k.waitTerminal(t, sid, id, client.TerminalStatusKilled)
		waitNoProcessesIn(t, proj)
		_, err := client.WriteTerminal(ctx, c, sid, id, "late\n")
		if code, _ := wantError(t, err); code != "CONFLICT" {
			t.Errorf("writeTerminal to a killed terminal: %v", err)
		}
		_, err = client.TerminalOutput(ctx, c, sid, "term_nope", nil)
		if code, _ := wantError(t, err); code != "NOT_FOUND" {
			t.Errorf("terminalOutput of an unknown terminal: %v", err)
		}
	})

	t.Run("terminal_start is a command for the approval policy", func(t *testing.T) {
		proj := filepath.Join(base, "proj-ask")
		mkdirs(t, proj)
		sid := k.session(t, fake.BaseURL(), proj, "ASK")
		fake.Enqueue(toolCall("ask1", "terminal_start", map[string]any{"command": "sleep 30"}), openaitest.TextStream("gpt-t", "ok"))
		k.sendMessage(t, sid, "start it")
		rid := pendingApproval(t, k, sid, "terminal_start")
		var action string
		for _, e := range k.eventLog(t, sid).Events {
			var p struct{ RequestID, Action, Summary string }
			json.Unmarshal(e.Payload, &p)
			if e.Type == "approval_requested" && p.RequestID == rid {
				action = p.Action + " / " + p.Summary
			}
		}
		if action != "command / run: sleep 30" {
			t.Errorf("approval of terminal_start: %q", action)
		}
		k.resolveApproval(t, sid, rid, client.ApprovalDecisionDenied)
		k.waitEvents(t, sid, "turn_finished", 1)
		if ts := k.terminals(t, sid); len(ts) != 0 || len(processesIn(proj)) != 0 {
			t.Fatalf("a denied terminal_start started %+v %v", ts, processesIn(proj))
		}
		explore := k.session(t, fake.BaseURL(), proj, "EXPLORE")
		ms := k.runTools(t, fake, explore, toolCall("ex1", "terminal_start", map[string]any{"command": "sleep 30"}))
		if !ms[0].IsError || len(k.terminals(t, explore)) != 0 {
			t.Fatalf("terminal_start in EXPLORE: %+v", ms[0])
		}
	})

	t.Run("at most 8 running per session", func(t *testing.T) {
		proj := filepath.Join(base, "proj-limit")
		mkdirs(t, proj)
		sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
		var calls []openaitest.Response
		for i := range 9 {
			calls = append(calls, toolCall("tl"+string(rune('a'+i)), "terminal_start", map[string]any{"command": "sleep 30"}))
		}
		ms := k.runTools(t, fake, sid, calls...)
		for i, m := range ms[:8] {
			if m.IsError {
				t.Fatalf("terminal %d: %s", i, m.Text)
			}
		}
		if !ms[8].IsError || !strings.Contains(ms[8].Text, "already runs 8 terminals") {
			t.Errorf("the 9th terminal: %+v", ms[8])
		}
		if _, err := client.StopTurnKillTerminals(ctx, c, sid); err != nil {
			t.Fatal(err)
		}
		waitNoProcessesIn(t, proj)
	})
}

// waitProcessesIn waits until some process works in dir.
func waitProcessesIn(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(processesIn(dir)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no process runs in %s", dir)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A kill -9 of the kernel leaves no terminal process: the sandbox helper
// dies with the kernel (Pdeathsig) and its PID namespace takes the rest.
func TestTerminalsDieWithKilledKernel(t *testing.T) {
	t.Parallel()
	base := outsideTmp(t)
	data, proj := filepath.Join(base, "data"), filepath.Join(base, "proj")
	mkdirs(t, proj)
	fake := openaitest.New(t)
	k := startKernel(t, data)
	sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
	id := k.startTerminal(t, fake, sid, "sh -c 'echo ready; sleep 30' & sleep 40")
	k.waitTerminal(t, sid, id, client.TerminalStatusRunning)
	waitProcessesIn(t, proj)
	if err := k.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-k.done
	waitNoProcessesIn(t, proj)
}

// foya exec prints a line when a terminal starts and when it ends.
func TestExecPrintsTerminals(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	fake.Enqueue(toolCall("x1", "terminal_start", map[string]any{"command": "sh -c 'echo ready; sleep 30'"}),
		openaitest.TextStream("gpt-t", "started"), openaitest.TextStream("gpt-t", "Server"))
	r := o.run(t, "", "exec", "--addr", k.addr, "--model", "fake/gpt-t", "--approval-mode", "bypass", "start a server")
	sid := regexp.MustCompile(`session (ses_\S+)`).FindStringSubmatch(r.stderr)
	tid := regexp.MustCompile(`terminal (term_\S+) started: sh -c 'echo ready; sleep 30' \(in /`).FindStringSubmatch(r.stderr)
	if r.code != 0 || sid == nil || tid == nil {
		t.Fatalf("exec: exit %d\nstderr: %s", r.code, r.stderr)
	}
	waitTitles(t, fake, 1)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		tms := k.terminals(t, sid[1]) // "ready\n" is out before the kill
		if len(tms) == 1 && tms[0].OutputBytes == 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no output from the terminal: %+v", tms)
		}
	}
	fake.Enqueue(toolCall("x2", "terminal_kill", map[string]any{"id": tid[1]}), openaitest.TextStream("gpt-t", "stopped"))
	r = o.mustRun(t, "", "exec", "--addr", k.addr, "--session", sid[1], "stop it")
	if !strings.Contains(r.stderr, "terminal "+tid[1]+" killed: sh -c 'echo ready; sleep 30', 6 bytes of output") {
		t.Fatalf("exec stderr: %s", r.stderr)
	}
	o.checkNoKey(t)
}

// ACP shows a kernel terminal as a tool call of kind execute whose content
// is the output while it runs, completed when it ends.
func TestACPTerminalToolCall(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	proj := filepath.Join(t.TempDir(), "proj")
	mkdirs(t, proj)
	p := startACP(t, "--addr", k.addr)
	p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"terminal": false}, "clientInfo": map[string]any{"name": "go-test", "version": "1"}}, nil)
	var ns struct{ SessionID string }
	p.call("session/new", map[string]any{"cwd": proj, "mcpServers": []any{}}, &ns)
	k.updateSession(t, ns.SessionID, client.UpdateSessionInput{ApprovalMode: ptr(client.ApprovalModeBypass)})
	fake.Enqueue(toolCall("a1", "terminal_start", map[string]any{"command": "echo one; sleep 0.5; echo two"}),
		openaitest.TextStream("gpt-t", "started"), openaitest.Completion("gpt-t", "Terminal", "stop", 5, 2))
	mk := p.mark()
	var pr struct{ StopReason string }
	p.call("session/prompt", map[string]any{"sessionId": ns.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "run it"}}}, &pr)
	started := p.waitFor(mk, "the terminal's tool call", func(u map[string]any) bool {
		id, _ := u["toolCallId"].(string)
		return u["sessionUpdate"] == "tool_call" && strings.HasPrefix(id, "terminal:term_") && u["kind"] == "execute"
	})
	id := started["toolCallId"].(string)
	done := p.waitFor(mk, "the terminal's end", func(u map[string]any) bool {
		return u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == id && u["status"] == "completed"
	})
	raw, _ := json.Marshal(done["content"])
	if !strings.Contains(string(raw), `one\ntwo\n`) || !strings.Contains(string(raw), "exited with code 0") {
		t.Fatalf("the terminal's final content: %s", raw)
	}
}

// Foya web lists a session's terminals with live output and a kill button
// (test/web/terminals.mjs); the kill leaves no process.
func TestWebTerminals(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skipping the headless Chromium web client check")
	}
	webCheckSetup(t)
	base := outsideTmp(t)
	proj := filepath.Join(base, "proj")
	mkdirs(t, proj)
	fake := openaitest.New(t)
	k := startKernel(t, filepath.Join(base, "data"))
	sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
	id := k.startTerminal(t, fake, sid, `echo ready; while read -r l; do echo "got $l"; done`)
	runWebScript(t, 2*time.Minute, "terminals.mjs", k, "SESSION="+sid, "TERMINAL="+id)
	waitNoProcessesIn(t, proj)
}

// A terminal of a session with a git worktree runs in the worktree, and
// deleting the session ends it before the worktree is removed.
func TestTerminalInWorktree(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	repo := gitRepo(t)
	proj := k.createProject(t, repo).Id
	conn := k.createConnection(t, client.ConnectionInput{Name: ptr("fake"), BaseUrl: ptr(fake.BaseURL()), ApiKey: ptr("sk-x"), Models: []client.ModelInput{{Id: "gpt-t"}}})
	sid, wt := k.worktreeSession(t, conn, proj, client.WorktreeInput{})
	id := k.startTerminal(t, fake, sid, `echo "pwd=$PWD"; sleep 30`)
	tm := k.waitTerminal(t, sid, id, client.TerminalStatusRunning)
	if tm.Cwd != wt.Path {
		t.Fatalf("terminal cwd %s, want the worktree %s", tm.Cwd, wt.Path)
	}
	ms := k.runTools(t, fake, sid, toolCall("wr", "terminal_read", map[string]any{"id": id, "waitMs": 10000}))
	if !strings.Contains(ms[0].Text, "pwd="+wt.Path) {
		t.Fatalf("terminal_read: %s", ms[0].Text)
	}
	waitProcessesIn(t, wt.Path)
	k.deleteSession(t, sid)
	waitNoProcessesIn(t, wt.Path)
	if exists(wt.Path) {
		t.Errorf("the worktree %s is still there", wt.Path)
	}
}

// PreToolUse hooks see terminal_start like bash: one that exits 2 blocks
// the terminal, and the model reads why.
func TestTerminalHooks(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	proj := outsideTmp(t)
	guard := writeHook(t, t.TempDir(), "guard.sh", `
input=$(cat)
case "$input" in
  *'"tool_name":"terminal_start"'*'rm -rf'*) echo "refusing rm -rf in a terminal" >&2; exit 2;;
esac
exit 0
`)
	k.setHooks(t, `{"PreToolUse": [{"matcher": "bash|terminal_.*", "hooks": [{"type": "command", "command": "`+guard+`"}]}]}`)
	fake := openaitest.New(t)
	sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
	if err := os.WriteFile(filepath.Join(proj, "keep.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ms := k.runTools(t, fake, sid,
		toolCall("h1", "terminal_start", map[string]any{"command": "rm -rf keep.txt; sleep 30"}),
		toolCall("h2", "terminal_start", map[string]any{"command": "echo fine"}))
	if !ms[0].IsError || !strings.Contains(ms[0].Text, "refusing rm -rf in a terminal") {
		t.Fatalf("blocked terminal_start: %+v", ms[0])
	}
	if ms[1].IsError || !exists(filepath.Join(proj, "keep.txt")) {
		t.Fatalf("allowed terminal_start %+v, keep.txt there: %v", ms[1], exists(filepath.Join(proj, "keep.txt")))
	}
	if ts := k.terminals(t, sid); len(ts) != 1 || ts[0].Command != "echo fine" {
		t.Fatalf("terminals: %+v", ts)
	}
	started, _, _ := k.hookEvents(t, sid)
	if len(started) != 2 {
		t.Fatalf("hooks started: %v", started)
	}
}

// A clean stop of the kernel kills its terminals and records their end.
func TestTerminalsEndWithKernelStop(t *testing.T) {
	t.Parallel()
	base := outsideTmp(t)
	data, proj := filepath.Join(base, "data"), filepath.Join(base, "proj")
	mkdirs(t, proj)
	fake := openaitest.New(t)
	k := startKernel(t, data)
	sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
	id := k.startTerminal(t, fake, sid, "sleep 30")
	k.waitTerminal(t, sid, id, client.TerminalStatusRunning)
	waitProcessesIn(t, proj)
	k.stop(t)
	waitNoProcessesIn(t, proj)
	k = startKernel(t, data)
	var status string
	for _, e := range k.eventLog(t, sid).Events {
		if e.Type == "terminal_exited" {
			var p struct{ Terminal struct{ ID, Status string } }
			json.Unmarshal(e.Payload, &p)
			status = p.Terminal.ID + " " + p.Terminal.Status
		}
	}
	if status != id+" killed" {
		t.Fatalf("terminal_exited after the stop: %q", status)
	}
	if ts := k.terminals(t, sid); len(ts) != 0 {
		t.Fatalf("terminals after a restart: %+v", ts)
	}
}

// A terminal is not held to bash's per-call CPU budget: with
// --tool-max-cpu 1s a terminal burns 3 s of CPU and goes on (a dev server
// runs all day); --terminal-max-cpu is its own budget. (CPU time, not
// wall time: the loop counts.)
func TestTerminalOutlivesTheCallCPUBudget(t *testing.T) {
	for _, tc := range []struct {
		name   string
		extra  []string
		output int // bytes: "survived\n", or none when the budget ended it
	}{
		{"no terminal budget", []string{"--tool-max-cpu", "1s"}, 9},
		{"terminal budget", []string{"--tool-max-cpu", "1s", "--terminal-max-cpu", "1s"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proj := t.TempDir()
			fake := openaitest.New(t)
			k := startKernel(t, t.TempDir(), tc.extra...)
			sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
			// Seconds of CPU (bash counts to a million in about 4), then a word.
			id := k.startTerminal(t, fake, sid, `i=0; while [ $i -lt 1000000 ]; do i=$((i+1)); done; echo survived`)
			var last client.TerminalFields
			for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
				for _, tm := range k.terminals(t, sid) {
					if tm.Id == id {
						last = tm
					}
				}
				if last.Status != client.TerminalStatusRunning || time.Now().After(deadline) {
					break
				}
			}
			if last.Status != client.TerminalStatusExited || last.OutputBytes != tc.output || (tc.output == 0) != (last.ExitCode != nil && *last.ExitCode != 0) {
				t.Fatalf("terminal ended %s with %d bytes of output (want %d), exit code %v", last.Status, last.OutputBytes, tc.output, last.ExitCode)
			}
		})
	}
}
