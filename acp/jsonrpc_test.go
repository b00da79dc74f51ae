package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"
)

// pipePeer is the client end of a conn under test.
type pipePeer struct {
	in  *io.PipeWriter // to the conn
	out *bufio.Reader  // from the conn
}

func newPipeConn(t *testing.T, h handlerFunc) (*conn, *pipePeer) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := newConn(outW, slog.New(slog.DiscardHandler), h)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.serve(ctx, inR) }()
	t.Cleanup(func() { cancel(); inW.Close(); outR.Close(); <-done })
	return c, &pipePeer{in: inW, out: bufio.NewReader(outR)}
}

func (p *pipePeer) send(t *testing.T, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

func (p *pipePeer) read(t *testing.T) map[string]any {
	t.Helper()
	ch := make(chan map[string]any, 1)
	go func() {
		line, err := p.out.ReadBytes('\n')
		var m map[string]any
		if err == nil {
			_ = json.Unmarshal(line, &m)
		}
		ch <- m
	}()
	select {
	case m := <-ch:
		if m == nil {
			t.Fatal("the connection ended")
		}
		return m
	case <-time.After(20 * time.Second):
		t.Fatal("no message")
	}
	return nil
}

// The client's $/cancel_request cancels the handler and answers -32800.
func TestCancelRequestFromClient(t *testing.T) {
	started := make(chan struct{})
	_, p := newPipeConn(t, func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	p.send(t, map[string]any{"jsonrpc": "2.0", "id": "req-7", "method": "slow", "params": map[string]any{}})
	<-started
	p.send(t, map[string]any{"jsonrpc": "2.0", "method": "$/cancel_request", "params": map[string]any{"requestId": "req-7"}})
	m := p.read(t)
	e, _ := m["error"].(map[string]any)
	if m["id"] != "req-7" || e == nil || e["code"] != float64(codeCancelled) {
		t.Fatalf("answer %v", m)
	}
}

// A call whose context ends is withdrawn with $/cancel_request naming its
// id; the client's late answer is ignored.
func TestCallWithdrawn(t *testing.T) {
	c, p := newPipeConn(t, func(context.Context, string, json.RawMessage) (any, error) { return nil, nil })
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.call(ctx, "session/request_permission", map[string]any{}, nil) }()
	req := p.read(t)
	if req["method"] != "session/request_permission" {
		t.Fatalf("request %v", req)
	}
	cancel()
	n := p.read(t) // the pipe is synchronous: read before the call can return
	if err := <-errc; err != context.Canceled {
		t.Fatalf("call: %v", err)
	}
	prm, _ := n["params"].(map[string]any)
	if n["method"] != "$/cancel_request" || n["id"] != nil || prm["requestId"] != req["id"] {
		t.Fatalf("withdrawal %v (request id %v)", n, req["id"])
	}
	// The late answer (the SDK's -32800) is dropped without harm.
	p.send(t, map[string]any{"jsonrpc": "2.0", "id": req["id"], "error": map[string]any{"code": -32800, "message": "Request cancelled"}})
	p.send(t, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "ping"})
	if m := p.read(t); m["id"] != float64(1) {
		t.Fatalf("after the late answer: %v", m)
	}
}
