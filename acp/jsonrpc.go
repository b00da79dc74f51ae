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
	codeNotFound       = -32002 // ACP: resource not found
)

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
}

func newConn(w io.Writer, log *slog.Logger, h handlerFunc) *conn {
	return &conn{w: w, log: log, handle: h, pending: map[int64]chan inbound{}}
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
	case m.Method != "" && hasID:
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.handle(ctx, m.Method, m.Params)
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
		id, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			return
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	default:
		c.write(outError{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: codeInvalidRequest, Message: "invalid request: no method and no id"}})
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

// errConnClosed: the client went away before answering.
var errConnClosed = errors.New("the client closed the connection")

// call sends a request to the client and decodes its result into out.
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
		delete(c.pending, id)
		c.mu.Unlock()
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
