package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
)

// JSON-RPC 2.0 error codes used by ACP.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
	codeAuthRequired   = -32000 // ACP: authentication required
	codeNotFound       = -32002 // ACP: resource not found
	codeCancelled      = -32800 // ACP: request cancelled ($/cancel_request)
)

// cancelRequestMethod is the protocol-level notification that cancels a
// request in flight, in either direction.
const cancelRequestMethod = "$/cancel_request"

// rpcError is a JSON-RPC error object; handlers return it to choose the code.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (JSON-RPC %d)", e.Message, e.Code) }

func invalidParams(format string, args ...any) *rpcError {
	return &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// inbound is any message read from the peer.
type inbound struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type outRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      *int64 `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

type outResult struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

type outError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *rpcError       `json:"error"`
}

// handlerFunc answers a request (the result is marshalled) or handles a
// notification (the result is ignored).
type handlerFunc func(ctx context.Context, method string, params json.RawMessage) (any, error)

// conn is a JSON-RPC 2.0 connection over newline-delimited JSON (the ACP
// stdio transport): requests are handled concurrently; writes are serialised.
type conn struct {
	w      io.Writer
	wmu    sync.Mutex
	log    *slog.Logger
	handle handlerFunc

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan inbound
	closed  bool
	// incoming cancels the handlers of the client's requests in flight,
	// by raw JSON id, for $/cancel_request.
	incoming map[string]context.CancelFunc
}

func newConn(w io.Writer, log *slog.Logger, h handlerFunc) *conn {
	return &conn{w: w, log: log, handle: h, pending: map[int64]chan inbound{}, incoming: map[string]context.CancelFunc{}}
}

// serve reads messages until r ends or ctx is cancelled; in-flight handlers
// see ctx cancelled then.
func (c *conn) serve(ctx context.Context, r io.Reader) error {
	ctx, cancel := context.WithCancel(ctx)
	br := bufio.NewReaderSize(r, 1<<20)
	var wg sync.WaitGroup
	defer func() {
		// The client is gone: in-flight handlers end with ctx.
		c.closePending()
		cancel()
		wg.Wait()
	}()
	for {
		line, err := br.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			c.dispatch(ctx, line, &wg)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read stdin: %w", err)
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

func (c *conn) dispatch(ctx context.Context, line []byte, wg *sync.WaitGroup) {
	var m inbound
	if err := json.Unmarshal(line, &m); err != nil {
		c.write(outError{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: codeParseError, Message: "parse error: " + err.Error()}})
		return
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	switch {
	case m.Method == cancelRequestMethod:
		c.cancelIncoming(m.Params)
	case m.Method != "" && hasID:
		// Registered before the next line is read: a $/cancel_request
		// right behind the request finds it.
		rctx, cancel := context.WithCancelCause(ctx)
		key := string(m.ID)
		c.mu.Lock()
		c.incoming[key] = func() { cancel(errRequestCancelled) }
		c.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				c.mu.Lock()
				delete(c.incoming, key)
				c.mu.Unlock()
				cancel(nil)
			}()
			c.answer(rctx, m)
		}()
	case m.Method != "":
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.handle(ctx, m.Method, m.Params); err != nil {
				c.log.Warn("acp notification failed", "method", m.Method, "err", err)
			}
		}()
	case hasID:
		c.response(m)
	default:
		c.write(outError{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: codeInvalidRequest, Message: "invalid request: no method and no id"}})
	}
}

// cancelIncoming handles the client's $/cancel_request: the handler of
// the request it names ends (the request answers -32800). A notification
// cannot be answered: a bad one is logged.
func (c *conn) cancelIncoming(params json.RawMessage) {
	var p cancelRequestParams
	if err := json.Unmarshal(params, &p); err != nil || len(p.RequestID) == 0 {
		c.log.Warn("acp: a $/cancel_request without a request id", "params", string(params), "err", err)
		return
	}
	c.mu.Lock()
	cancel := c.incoming[string(p.RequestID)]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// answer handles the client's request m and writes its answer; rctx ends
// with errRequestCancelled when the client cancels the request.
func (c *conn) answer(rctx context.Context, m inbound) {
	var after []func()
	defer func() {
		for _, f := range after {
			f()
		}
	}()
	res, err := c.handle(context.WithValue(rctx, afterAnswerKey{}, &after), m.Method, m.Params)
	if errors.Is(context.Cause(rctx), errRequestCancelled) {
		c.write(outError{JSONRPC: "2.0", ID: m.ID, Error: &rpcError{Code: codeCancelled, Message: "Request cancelled"}})
		return
	}
	if err != nil {
		var re *rpcError
		if !errors.As(err, &re) {
			re = &rpcError{Code: codeInternalError, Message: err.Error()}
		}
		c.log.Debug("acp request failed", "method", m.Method, "err", err)
		c.write(outError{JSONRPC: "2.0", ID: m.ID, Error: re})
		return
	}
	if res == nil {
		res = struct{}{}
	}
	c.write(outResult{JSONRPC: "2.0", ID: m.ID, Result: res})
}

type afterAnswerKey struct{}

// afterAnswer runs f once the answer to the request ctx belongs to is
// written (session updates about a new session must follow the answer that
// tells the client its id); at once when ctx belongs to no request.
func afterAnswer(ctx context.Context, f func()) {
	if q, ok := ctx.Value(afterAnswerKey{}).(*[]func()); ok {
		*q = append(*q, f)
		return
	}
	f()
}

// response hands the client's answer m to the call waiting for it; an
// answer to no call of ours (a withdrawn one, a foreign id) is dropped.
func (c *conn) response(m inbound) {
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	if err != nil {
		c.log.Debug("acp: an answer to an id the agent never used", "id", string(m.ID))
		return
	}
	c.mu.Lock()
	ch := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}

func (c *conn) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		c.log.Error("acp: encode message", "err", err)
		return
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	b = append(b, '\n')
	if _, err := c.w.Write(b); err != nil {
		c.log.Debug("acp: write", "err", err)
	}
}

// notify sends a notification.
func (c *conn) notify(method string, params any) {
	c.write(outRequest{JSONRPC: "2.0", Method: method, Params: params})
}

// errRequestCancelled: the client sent $/cancel_request for the request.
var errRequestCancelled = errors.New("request cancelled by the client")

// errConnClosed: the client went away before answering.
var errConnClosed = errors.New("the client closed the connection")

// call sends a request to the client and decodes its result into out.
// When ctx ends first the request is withdrawn with $/cancel_request (the
// client's late answer is then ignored) and ctx's error is returned.
func (c *conn) call(ctx context.Context, method string, params, out any) error {
	ch := make(chan inbound, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errConnClosed
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	c.write(outRequest{JSONRPC: "2.0", ID: &id, Method: method, Params: params})
	select {
	case m, ok := <-ch:
		if !ok {
			return errConnClosed
		}
		if m.Error != nil {
			return m.Error
		}
		if out != nil {
			if err := json.Unmarshal(m.Result, out); err != nil {
				return fmt.Errorf("decode %s result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		_, waiting := c.pending[id]
		delete(c.pending, id)
		closed := c.closed
		c.mu.Unlock()
		if waiting && !closed {
			c.notify(cancelRequestMethod, cancelRequest{RequestID: id})
		}
		return ctx.Err()
	}
}

func (c *conn) closePending() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
}
