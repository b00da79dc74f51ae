package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// acpPeer drives a `foya acp` child process over its stdio as an ACP client.
type acpPeer struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *bytes.Buffer

	mu      sync.Mutex
	nextID  int
	waiting map[int]chan acpMsg
	updates []map[string]any // session/update params.update, in order
	perms   []map[string]any // session/request_permission params
	permIDs []string         // their JSON-RPC ids
	cancels []string         // requestIds of the agent's $/cancel_request
	permit  func(params map[string]any) any
	// serve answers the agent's other requests (terminal/*…): a result, or
	// an error sent as a JSON-RPC error; nil: they are protocol errors.
	serve    func(method string, params json.RawMessage) (any, error)
	changed  chan struct{}
	exited   chan struct{}
	protoErr string
}

type acpMsg struct {
	ID     *json.RawMessage `json:"id"`
	Method string           `json:"method"`
	Params json.RawMessage  `json:"params"`
	Result json.RawMessage  `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	// updates is how many session/update notifications had arrived before
	// this response (the reader goes on reading while a test looks at it).
	updates int
}

func startACP(t *testing.T, args ...string) *acpPeer {
	t.Helper()
	cmd := exec.Command(foyaBin, append([]string{"acp"}, args...)...)
	cmd.Env = append(append(os.Environ(), "XDG_DATA_HOME="+t.TempDir()), tokenEnv(args, nil)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &acpPeer{t: t, cmd: cmd, stdin: stdin, stderr: &bytes.Buffer{}, waiting: map[int]chan acpMsg{},
		changed: make(chan struct{}, 1), exited: make(chan struct{})}
	cmd.Stderr = &lockedWriter{mu: &p.mu, w: p.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go p.read(stdout)
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-p.exited
			t.Errorf("foya acp did not exit when stdin closed")
		}
		cmd.Wait()
	})
	return p
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (p *acpPeer) read(r io.Reader) {
	defer close(p.exited)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			p.handle(line)
		}
		if err != nil {
			return
		}
	}
}

func (p *acpPeer) handle(line []byte) {
	var m acpMsg
	var raw map[string]any
	if err := json.Unmarshal(line, &m); err != nil || json.Unmarshal(line, &raw) != nil || raw["jsonrpc"] != "2.0" {
		p.mu.Lock()
		p.protoErr = fmt.Sprintf("not a JSON-RPC 2.0 line on stdout: %q", line)
		p.mu.Unlock()
		return
	}
	switch {
	case m.Method == "session/update":
		var prm struct {
			SessionID string         `json:"sessionId"`
			Update    map[string]any `json:"update"`
		}
		json.Unmarshal(m.Params, &prm)
		p.mu.Lock()
		p.updates = append(p.updates, prm.Update)
		p.mu.Unlock()
		p.signal()
	case m.Method == "session/request_permission" && m.ID != nil:
		var prm map[string]any
		json.Unmarshal(m.Params, &prm)
		p.mu.Lock()
		p.perms = append(p.perms, prm)
		p.permIDs = append(p.permIDs, string(*m.ID))
		permit := p.permit
		p.mu.Unlock()
		p.signal()
		go func() {
			var res any = map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}
			if permit != nil {
				res = permit(prm)
			}
			p.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
		}()
	case m.Method == "$/cancel_request" && m.ID == nil:
		var prm struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		json.Unmarshal(m.Params, &prm)
		p.mu.Lock()
		p.cancels = append(p.cancels, string(prm.RequestID))
		p.mu.Unlock()
		p.signal()
	case m.Method != "" && m.ID != nil && p.served(m):
	case m.Method != "":
		p.mu.Lock()
		p.protoErr = "unexpected message from the agent: " + string(line)
		p.mu.Unlock()
	default:
		var id int
		if m.ID != nil {
			json.Unmarshal(*m.ID, &id)
		}
		p.mu.Lock()
		ch := p.waiting[id]
		delete(p.waiting, id)
		m.updates = len(p.updates)
		p.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

// served answers request m with p.serve, if set.
func (p *acpPeer) served(m acpMsg) bool {
	p.mu.Lock()
	serve := p.serve
	p.mu.Unlock()
	if serve == nil {
		return false
	}
	go func() {
		res, err := serve(m.Method, m.Params)
		if err != nil {
			p.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32603, "message": err.Error()}})
			return
		}
		p.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
	}()
	return true
}

func (p *acpPeer) signal() {
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

func (p *acpPeer) send(v any) {
	b, _ := json.Marshal(v)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stdin.Write(append(b, '\n'))
}

// start sends a request and returns the channel of its response.
func (p *acpPeer) start(method string, params any) <-chan acpMsg {
	ch := make(chan acpMsg, 1)
	p.mu.Lock()
	p.nextID++
	id := p.nextID
	p.waiting[id] = ch
	p.mu.Unlock()
	p.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return ch
}

func (p *acpPeer) await(ch <-chan acpMsg, what string) acpMsg {
	p.t.Helper()
	select {
	case m := <-ch:
		return m
	case <-p.exited:
		p.t.Fatalf("%s: foya acp exited; stderr:\n%s", what, p.stderrText())
	case <-time.After(60 * time.Second):
		p.t.Fatalf("%s: no answer in 60s; stderr:\n%s", what, p.stderrText())
	}
	return acpMsg{}
}

// call sends a request and decodes its result; a JSON-RPC error fails the test.
func (p *acpPeer) call(method string, params any, out any) {
	p.t.Helper()
	m := p.await(p.start(method, params), method)
	if m.Error != nil {
		p.t.Fatalf("%s: error %d %s", method, m.Error.Code, m.Error.Message)
	}
	if out != nil {
		if err := json.Unmarshal(m.Result, out); err != nil {
			p.t.Fatalf("%s result %s: %v", method, m.Result, err)
		}
	}
}

func (p *acpPeer) stderrText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// waitStderr waits (up to 10 s) until the agent's stderr holds s: stderr
// is a pipe of its own, read apart from the answers on stdout, so a line
// written before an answer may be read after it.
func (p *acpPeer) waitStderr(s string) bool {
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.stderrText(), s) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// mark is the number of updates so far; since returns those after it.
func (p *acpPeer) mark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.updates)
}

func (p *acpPeer) since(n int) []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]map[string]any(nil), p.updates[n:]...)
}

// before returns the updates after mark that arrived before response m.
func (p *acpPeer) before(mark int, m acpMsg) []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]map[string]any(nil), p.updates[mark:m.updates]...)
}

// waitFor waits until an update after mark satisfies ok.
func (p *acpPeer) waitFor(mark int, what string, ok func(u map[string]any) bool) map[string]any {
	p.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		for _, u := range p.since(mark) {
			if ok(u) {
				return u
			}
		}
		select {
		case <-p.changed:
		case <-deadline:
			p.t.Fatalf("no update %s; got %v\nstderr:\n%s", what, p.since(mark), p.stderrText())
		}
	}
}

// chunks concatenates the text of updates of one kind.
func chunks(us []map[string]any, kind string) string {
	var b strings.Builder
	for _, u := range us {
		if u["sessionUpdate"] == kind {
			c, _ := u["content"].(map[string]any)
			s, _ := c["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

func toolUpdates(us []map[string]any, id string) []map[string]any {
	var out []map[string]any
	for _, u := range us {
		if (u["sessionUpdate"] == "tool_call" || u["sessionUpdate"] == "tool_call_update") && u["toolCallId"] == id {
			out = append(out, u)
		}
	}
	return out
}

// finalTool is the last status and the diffs of a tool call's updates.
func finalTool(us []map[string]any, id string) (status string, diffs []map[string]any, kind string) {
	for _, u := range toolUpdates(us, id) {
		if s, ok := u["status"].(string); ok {
			status = s
		}
		if k, ok := u["kind"].(string); ok {
			kind = k
		}
		if cs, ok := u["content"].([]any); ok {
			for _, c := range cs {
				if cm, _ := c.(map[string]any); cm["type"] == "diff" {
					diffs = append(diffs, cm)
				}
			}
		}
	}
	return
}

func toolCallResponse(id, name, args string) openaitest.Response {
	call := map[string]any{"index": 0, "id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}
	return openaitest.Response{Events: []string{
		openaitest.Chunk("gpt-t", map[string]any{"role": "assistant", "tool_calls": []any{call}}, ""),
		openaitest.Chunk("gpt-t", map[string]any{}, "tool_calls"),
	}}
}

func choose(option string) func(map[string]any) any {
	return func(map[string]any) any {
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": option}}
	}
}
