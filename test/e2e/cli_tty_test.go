package e2e

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foya-dev/foya/providers/openai/openaitest"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/internal/testenv"
)

// On a terminal, foya exec asks before a write in ASK mode and acts on the
// answer. The terminal is a real pty, made by util-linux script(1).
func TestExecAsksForApprovalOnATerminal(t *testing.T) {
	t.Parallel()
	terminalApproval(t, "Allow write a.txt", "Wrote it.", writeCall("c1"), openaitest.TextStream("gpt-t", "Wrote it."))
}

// A sub-agent's approval reaches foya exec through the parent session.
func TestExecAsksForSubAgentApprovalOnATerminal(t *testing.T) {
	t.Parallel()
	task := openaitest.Response{Events: []string{
		openaitest.Chunk("gpt-t", map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "c0", "type": "function",
			"function": map[string]any{"name": "task", "arguments": `{"prompt":"write a.txt"}`}}}}, ""),
		openaitest.Chunk("gpt-t", map[string]any{}, "tool_calls"),
	}}
	terminalApproval(t, "(sub-agent ses_", "The sub-agent wrote it.", task, writeCall("c1"),
		openaitest.TextStream("gpt-t", "Wrote it."), openaitest.TextStream("gpt-t", "The sub-agent wrote it."))
}

func writeCall(id string) openaitest.Response {
	return openaitest.Response{Events: []string{
		openaitest.Chunk("gpt-t", map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": id, "type": "function",
			"function": map[string]any{"name": "write", "arguments": `{"path":"a.txt","content":"hi\n"}`}}}}, ""),
		openaitest.Chunk("gpt-t", map[string]any{}, "tool_calls"),
	}}
}

// terminalApproval runs foya exec in ASK mode on a real pty, waits for the
// approval prompt (which must contain prompt), answers y and checks that
// a.txt was written and want was printed.
func terminalApproval(t *testing.T, prompt, want string, responses ...openaitest.Response) {
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		testenv.Optional(t, "script(1) is not installed: skipping the terminal approval check (it comes with util-linux)")
	}
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	k.createConnection(t, client.ConnectionInput{Name: ptr("fake"), BaseUrl: ptr(fake.BaseURL()), Models: []client.ModelInput{{Id: "gpt-t"}}})
	proj := t.TempDir()
	fake.Enqueue(responses...)

	cmdline := strings.Join([]string{foyaBin, "exec", "--addr", k.addr, "--project", proj, "--approval-mode", "ask", "'write a.txt'"}, " ")
	cmd := exec.Command(scriptBin, "-qfec", cmdline, "/dev/null")
	cmd.Env = append(append(os.Environ(), "TERM=dumb"), tokenEnv([]string{"--addr", k.addr}, nil)...)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen bytes.Buffer
	prompted := make(chan struct{})
	go func() {
		r := bufio.NewReader(out)
		once := sync.Once{}
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			mu.Lock()
			seen.Write(buf[:n])
			if strings.Contains(seen.String(), "[a]lways for session") && strings.Contains(seen.String(), prompt) {
				once.Do(func() { close(prompted) })
			}
			mu.Unlock()
			if err != nil {
				if err != io.EOF {
					t.Log(err)
				}
				return
			}
		}
	}()
	select {
	case <-prompted:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("no approval prompt:\n%s", seen.String())
	}
	io.WriteString(stdin, "y\n")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Fatalf("exec: %v\n%s", err, seen.String())
		}
		if !strings.Contains(seen.String(), want) {
			t.Fatalf("output:\n%s", seen.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("exec did not finish after the approval")
	}
	if b, err := os.ReadFile(filepath.Join(proj, "a.txt")); err != nil || string(b) != "hi\n" {
		t.Fatalf("a.txt: %q %v", b, err)
	}
}
