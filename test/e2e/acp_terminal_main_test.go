//go:build linux

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// Kernel terminals mirrored in an ACP client's terminals (docs/acp.md,
// docs/terminals.md): the test client advertises terminal: true and runs
// what terminal/create gives it as a real process; foya terminals follow
// is tested alone too.

// clientTerms is an ACP client's terminal/* methods, running real
// processes.
type clientTerms struct {
	mu       sync.Mutex
	next     int
	terms    map[string]*clientTerm
	creates  []json.RawMessage // terminal/create params, in order
	released []string
	refuse   bool // terminal/create answers an error
}

type clientTerm struct {
	cmd  *exec.Cmd
	out  lockedBuffer
	done chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (c *clientTerms) serve(method string, raw json.RawMessage) (any, error) {
	var p struct {
		TerminalID string   `json:"terminalId"`
		Command    string   `json:"command"`
		Args       []string `json:"args"`
		Cwd        string   `json:"cwd"`
		Env        []struct{ Name, Value string }
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	if method == "terminal/create" {
		return c.create(raw, p.Command, p.Args, p.Cwd)
	}
	c.mu.Lock()
	tm := c.terms[p.TerminalID]
	c.mu.Unlock()
	if tm == nil {
		return nil, fmt.Errorf("no terminal %q", p.TerminalID)
	}
	switch method {
	case "terminal/wait_for_exit":
		<-tm.done
		return exitStatus(tm.cmd.ProcessState), nil
	case "terminal/output":
		res := map[string]any{"output": tm.out.String(), "truncated": false}
		select {
		case <-tm.done:
			res["exitStatus"] = exitStatus(tm.cmd.ProcessState)
		default:
		}
		return res, nil
	case "terminal/kill", "terminal/release":
		tm.cmd.Process.Kill()
		<-tm.done
		if method == "terminal/release" {
			c.mu.Lock()
			c.released = append(c.released, p.TerminalID)
			c.mu.Unlock()
		}
		return map[string]any{}, nil
	}
	return nil, fmt.Errorf("unexpected method %s", method)
}

func (c *clientTerms) create(raw json.RawMessage, command string, args []string, cwd string) (any, error) {
	c.mu.Lock()
	c.creates = append(c.creates, raw)
	refuse := c.refuse
	c.next++
	id := fmt.Sprintf("ct-%d", c.next)
	c.mu.Unlock()
	if refuse {
		return nil, errors.New("this client does not run commands")
	}
	tm := &clientTerm{cmd: exec.Command(command, args...), done: make(chan struct{})}
	tm.cmd.Dir = cwd
	tm.cmd.Env = append(os.Environ(), "XDG_DATA_HOME=/nonexistent") // the token is not found but through the args
	tm.cmd.Stdout, tm.cmd.Stderr = &tm.out, &tm.out
	if err := tm.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		tm.cmd.Wait()
		close(tm.done)
	}()
	c.mu.Lock()
	if c.terms == nil {
		c.terms = map[string]*clientTerm{}
	}
	c.terms[id] = tm
	c.mu.Unlock()
	return map[string]any{"terminalId": id}, nil
}

func (c *clientTerms) term(id string) *clientTerm {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.terms[id]
}

func (c *clientTerms) stopAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, tm := range c.terms {
		tm.cmd.Process.Kill()
		<-tm.done
	}
}

func exitStatus(ps *os.ProcessState) map[string]any {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return map[string]any{"exitCode": nil, "signal": ws.Signal().String()}
	}
	return map[string]any{"exitCode": ps.ExitCode(), "signal": nil}
}

// terminalContentID is the client terminal id a tool call update embeds
// ({type: "terminal"}), "" when none.
func terminalContentID(u map[string]any) string {
	cs, _ := u["content"].([]any)
	for _, c := range cs {
		if cm, _ := c.(map[string]any); cm["type"] == "terminal" {
			id, _ := cm["terminalId"].(string)
			return id
		}
	}
	return ""
}

// acpTerminalSession opens an ACP session (BYPASS) whose client offers
// terminals, and makes the model start command in a terminal; it returns
// the session id and the terminal's tool call id.
func acpTerminalSession(t *testing.T, p *acpPeer, k *kernelProc, fake *openaitest.Server, proj, command string) (string, string, int) {
	t.Helper()
	p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"terminal": true},
		"clientInfo": map[string]any{"name": "go-test", "version": "1"}}, nil)
	var ns struct{ SessionID string }
	p.call("session/new", map[string]any{"cwd": proj, "mcpServers": []any{}}, &ns)
	k.updateSession(t, ns.SessionID, client.UpdateSessionInput{ApprovalMode: ptr(client.ApprovalModeBypass)})
	fake.Enqueue(toolCall("a1", "terminal_start", map[string]any{"command": command}),
		openaitest.TextStream("gpt-t", "started"), openaitest.Completion("gpt-t", "Terminal", "stop", 5, 2))
	mk := p.mark()
	p.call("session/prompt", map[string]any{"sessionId": ns.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "run it"}}}, nil)
	started := p.waitFor(mk, "the terminal's tool call", func(u map[string]any) bool {
		id, _ := u["toolCallId"].(string)
		return u["sessionUpdate"] == "tool_call" && strings.HasPrefix(id, "terminal:term_")
	})
	return ns.SessionID, started["toolCallId"].(string), mk
}

// A client that offers terminals gets each kernel terminal mirrored in one
// of its terminals: terminal/create runs foya terminals follow (no token in
// its args or environment), the tool call embeds that terminal, the
// mirrored output is the kernel terminal's, and when the kernel terminal is
// killed the follower exits (137), the tool call fails and the client
// terminal is released.
func TestACPClientTerminalMirrorsKernelTerminal(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	data := t.TempDir()
	k := startKernel(t, data)
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	proj := filepath.Join(t.TempDir(), "proj")
	mkdirs(t, proj)
	ct := &clientTerms{}
	t.Cleanup(ct.stopAll)
	p := startACP(t, "--addr", k.addr, "--data-dir", data)
	p.mu.Lock()
	p.serve = ct.serve
	p.mu.Unlock()
	sid, callID, mk := acpTerminalSession(t, p, k, fake, proj, "echo ready; sleep 30")
	tid := strings.TrimPrefix(callID, "terminal:")

	embed := p.waitFor(mk, "the client terminal in the tool call", func(u map[string]any) bool {
		return u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == callID && terminalContentID(u) != ""
	})
	cid := terminalContentID(embed)
	ct.mu.Lock()
	creates := append([]json.RawMessage(nil), ct.creates...)
	ct.mu.Unlock()
	var create struct {
		SessionID, Command, Cwd string
		Args                    []string
		OutputByteLimit         int
	}
	if len(creates) != 1 || json.Unmarshal(creates[0], &create) != nil {
		t.Fatalf("terminal/create requests: %s", creates)
	}
	exe, _ := filepath.EvalSymlinks(foyaBin)
	if create.SessionID != sid || create.Command != exe || create.Cwd != proj || create.OutputByteLimit != 1<<20 ||
		strings.Join(create.Args[:4], " ") != "terminals follow "+sid+" "+tid {
		t.Fatalf("terminal/create: %s (foya is %s)", creates[0], exe)
	}
	if k.token == "" || bytes.Contains(creates[0], []byte(k.token)) {
		t.Fatalf("terminal/create carries the kernel's token (or the kernel has none): %s", creates[0])
	}

	tm := ct.term(cid)
	for deadline := time.Now().Add(30 * time.Second); tm.out.String() != "ready\n"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the client terminal shows %q; agent stderr:\n%s", tm.out.String(), p.stderrText())
		}
	}
	out, err := client.TerminalOutput(context.Background(), k.client(), sid, tid, nil)
	if err != nil || out.TerminalOutput.Text != tm.out.String() {
		t.Fatalf("kernel output %+v %v, client terminal %q", out, err, tm.out.String())
	}
	select {
	case <-tm.done:
		t.Fatalf("the follower exited while the terminal runs: %q", tm.out.String())
	default:
	}

	if _, err := client.KillTerminal(context.Background(), k.client(), sid, tid); err != nil {
		t.Fatal(err)
	}
	done := p.waitFor(mk, "the terminal's end", func(u map[string]any) bool {
		return u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == callID && u["status"] == "failed"
	})
	<-tm.done
	if code := tm.cmd.ProcessState.ExitCode(); code != 137 {
		t.Errorf("the follower exited with %d, want 137; output %q", code, tm.out.String())
	}
	raw, _ := json.Marshal(done["content"])
	if terminalContentID(done) != cid || !strings.Contains(string(raw), "terminal killed") {
		t.Errorf("the terminal's final content: %s", raw)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ct.mu.Lock()
		released := strings.Join(ct.released, ",")
		ct.mu.Unlock()
		if released == cid {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("client terminals released: %q, want %q", released, cid)
		}
	}
}

// A client that refuses terminal/create sees the output as text content;
// so does one whose foya acp has the kernel's token only in $FOYA_TOKEN
// (which the client's terminal may not have): no terminal/create then.
func TestACPClientTerminalRefusedFallsBackToText(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	data := t.TempDir()
	k := startKernel(t, data)
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	for _, tc := range []struct {
		name    string
		args    []string
		creates int
	}{
		{"refused", []string{"--addr", k.addr, "--data-dir", data}, 1},
		{"token only in FOYA_TOKEN", []string{"--addr", k.addr}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proj := filepath.Join(t.TempDir(), "proj")
			mkdirs(t, proj)
			ct := &clientTerms{refuse: true}
			p := startACP(t, tc.args...)
			p.mu.Lock()
			p.serve = ct.serve
			p.mu.Unlock()
			_, callID, mk := acpTerminalSession(t, p, k, fake, proj, "echo one; sleep 0.5; echo two")
			done := p.waitFor(mk, "the terminal's end", func(u map[string]any) bool {
				return u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == callID && u["status"] == "completed"
			})
			raw, _ := json.Marshal(done["content"])
			if !strings.Contains(string(raw), `one\ntwo\n`) || terminalContentID(done) != "" {
				t.Fatalf("the terminal's final content: %s", raw)
			}
			ct.mu.Lock()
			defer ct.mu.Unlock()
			if len(ct.creates) != tc.creates {
				t.Fatalf("terminal/create requests: %d, want %d", len(ct.creates), tc.creates)
			}
		})
	}
}

// foya terminals follow prints a terminal's output from its start, then
// what comes, and exits with its exit code (137 when it is killed);
// foya terminals list lists the session's terminals.
func TestTerminalsFollowCLI(t *testing.T) {
	t.Parallel()
	base := outsideTmp(t)
	proj := filepath.Join(base, "proj")
	mkdirs(t, proj)
	fake := openaitest.New(t)
	k := startKernel(t, filepath.Join(base, "data"))
	var o outputs
	sid := k.session(t, fake.BaseURL(), proj, "BYPASS")

	t.Run("exit code", func(t *testing.T) {
		id := k.startTerminal(t, fake, sid, "echo one; sleep 0.3; echo two; exit 3")
		r := o.run(t, "", "terminals", "follow", sid, id, "--addr", k.addr)
		if r.code != 3 || r.stdout != "one\ntwo\n" {
			t.Fatalf("follow: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		// Once it ended: the whole output at once, same code.
		r = o.run(t, "", "terminals", "follow", "--addr", k.addr, sid, id)
		if r.code != 3 || r.stdout != "one\ntwo\n" {
			t.Fatalf("follow of an ended terminal: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("killed", func(t *testing.T) {
		id := k.startTerminal(t, fake, sid, "echo ready; sleep 0.2; echo more; sleep 30")
		args := []string{"terminals", "follow", sid, id, "--addr", k.addr}
		cmd := exec.Command(foyaBin, args...)
		cmd.Env = append(append(os.Environ(), "XDG_DATA_HOME="+t.TempDir()), tokenEnv(args, nil)...)
		var out, errb lockedBuffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		t.Cleanup(func() { cmd.Process.Kill(); <-exited })
		for deadline := time.Now().Add(30 * time.Second); out.String() != "ready\nmore\n"; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("follow printed %q; stderr %q", out.String(), errb.String())
			}
		}
		r := o.mustRun(t, "", "terminals", "list", sid, "--addr", k.addr)
		if !strings.Contains(r.stdout, id+"  running") {
			t.Errorf("terminals list:\n%s", r.stdout)
		}
		if _, err := client.KillTerminal(context.Background(), k.client(), sid, id); err != nil {
			t.Fatal(err)
		}
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			t.Fatalf("follow did not exit when the terminal was killed; stderr %q", errb.String())
		}
		if code := cmd.ProcessState.ExitCode(); code != 137 || out.String() != "ready\nmore\n" {
			t.Fatalf("follow: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
		}
		r = o.mustRun(t, "", "terminals", "list", sid, "--addr", k.addr, "--json")
		var tms []client.TerminalFields
		if err := json.Unmarshal([]byte(r.stdout), &tms); err != nil || len(tms) != 2 {
			t.Fatalf("terminals list --json: %s %v", r.stdout, err)
		}
	})

	t.Run("unknown terminal", func(t *testing.T) {
		r := o.run(t, "", "terminals", "follow", sid, "term_nope", "--addr", k.addr)
		if r.code != 1 || !strings.Contains(r.stderr, "NOT_FOUND") {
			t.Fatalf("follow of an unknown terminal: exit %d, stderr %q", r.code, r.stderr)
		}
	})
}
