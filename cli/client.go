package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// gqlClient is the CLI's client of the kernel's GraphQL API: POST /graphql
// for queries and mutations, graphql-transport-ws for subscriptions.
type gqlClient struct {
	addr  string // host:port
	tls   bool   // https and wss
	token string // bearer token; empty: none sent
	http  *http.Client
}

// newGQLClient is a client of the kernel at addr: host:port, or
// http://host:port or https://host:port (then WebSockets use wss).
func newGQLClient(addr, token string) *gqlClient {
	c := &gqlClient{addr: addr, token: token, http: &http.Client{}}
	if rest, ok := strings.CutPrefix(addr, "https://"); ok {
		c.addr, c.tls = strings.TrimSuffix(rest, "/"), true
	} else if rest, ok := strings.CutPrefix(addr, "http://"); ok {
		c.addr = strings.TrimSuffix(rest, "/")
	}
	return c
}

// host is the kernel's host name or IP, without port.
func (c *gqlClient) host() string {
	if h, _, err := net.SplitHostPort(c.addr); err == nil {
		return h
	}
	return c.addr
}

func (c *gqlClient) endpoint() string {
	if c.tls {
		return "https://" + c.addr + "/graphql"
	}
	return "http://" + c.addr + "/graphql"
}

func (c *gqlClient) wsEndpoint() string {
	if c.tls {
		return "wss://" + c.addr + "/graphql"
	}
	return "ws://" + c.addr + "/graphql"
}

// initPayload is the connection_init payload: the token, if any.
func (c *gqlClient) initPayload() json.RawMessage {
	if c.token == "" {
		return json.RawMessage(`{}`)
	}
	b, _ := json.Marshal(map[string]string{"authorization": "Bearer " + c.token})
	return b
}

// gqlError is an error the kernel returned in a GraphQL response. It prints
// as "<message> (<code>)".
type gqlError struct {
	Message string
	Code    string
}

func (e *gqlError) Error() string {
	if e.Code == "" {
		return e.Message
	}
	return fmt.Sprintf("%s (%s)", e.Message, e.Code)
}

type wireError struct {
	Message    string `json:"message"`
	Extensions struct {
		Code string `json:"code"`
	} `json:"extensions"`
}

func toGQLError(errs []wireError) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Message
	}
	return &gqlError{Message: strings.Join(msgs, "; "), Code: errs[0].Extensions.Code}
}

// do runs a query or mutation and decodes its data into out (when not nil).
func (c *gqlClient) do(ctx context.Context, query string, vars map[string]any, out any) error {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("kernel at %s: %w", c.addr, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("read response from %s: %w", c.addr, err)
	}
	var r struct {
		Data   json.RawMessage `json:"data"`
		Errors []wireError     `json:"errors"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("kernel at %s answered %s, not GraphQL: %.120q", c.addr, resp.Status, raw)
	}
	if err := toGQLError(r.Errors); err != nil {
		return err
	}
	if out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			return fmt.Errorf("decode response: %w", err)
		}
	}
	return nil
}

// subscription is one graphql-transport-ws subscription on its own
// WebSocket. Events receives each "next" payload's data; it is closed when
// the stream ends, after which Err says why (nil on a normal completion).
type subscription struct {
	Events <-chan json.RawMessage
	conn   *websocket.Conn
	err    error
	done   chan struct{}
}

type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// subscribe opens a WebSocket, completes the connection_init handshake and
// starts the subscription. Cancel ctx or call Close to end it.
func (c *gqlClient) subscribe(ctx context.Context, query string, vars map[string]any) (*subscription, error) {
	dialCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(dialCtx, c.wsEndpoint(), &websocket.DialOptions{
		Subprotocols: []string{"graphql-transport-ws"},
		HTTPClient:   c.http,
	})
	if err != nil {
		return nil, fmt.Errorf("open websocket to %s: %w", c.addr, err)
	}
	conn.SetReadLimit(64 << 20)
	if err := wsjson.Write(dialCtx, conn, wsMessage{Type: "connection_init", Payload: c.initPayload()}); err != nil {
		conn.CloseNow()
		return nil, fmt.Errorf("websocket init: %w", err)
	}
	for {
		var m wsMessage
		if err := wsjson.Read(dialCtx, conn, &m); err != nil {
			conn.CloseNow()
			if websocket.CloseStatus(err) == 4403 {
				return nil, &gqlError{Message: "the kernel refused the token: " + closeReason(err), Code: "UNAUTHENTICATED"}
			}
			return nil, fmt.Errorf("websocket init: %w", err)
		}
		if m.Type == "connection_ack" {
			break
		}
		if m.Type == "ping" {
			if err := wsjson.Write(dialCtx, conn, wsMessage{Type: "pong"}); err != nil {
				conn.CloseNow()
				return nil, fmt.Errorf("websocket init: %w", err)
			}
		}
	}
	payload, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		conn.CloseNow()
		return nil, fmt.Errorf("encode subscription: %w", err)
	}
	if err := wsjson.Write(dialCtx, conn, wsMessage{ID: "1", Type: "subscribe", Payload: payload}); err != nil {
		conn.CloseNow()
		return nil, fmt.Errorf("subscribe: %w", err)
	}
	events := make(chan json.RawMessage, 256)
	s := &subscription{Events: events, conn: conn, done: make(chan struct{})}
	go s.read(ctx, events)
	return s, nil
}

func (s *subscription) read(ctx context.Context, events chan<- json.RawMessage) {
	defer close(s.done)
	defer close(events)
	for {
		var m wsMessage
		if err := wsjson.Read(ctx, s.conn, &m); err != nil {
			if ctx.Err() == nil {
				s.err = fmt.Errorf("subscription: %w", err)
			}
			return
		}
		switch m.Type {
		case "next":
			var r struct {
				Data   json.RawMessage `json:"data"`
				Errors []wireError     `json:"errors"`
			}
			if err := json.Unmarshal(m.Payload, &r); err != nil {
				s.err = fmt.Errorf("decode subscription event: %w", err)
				return
			}
			if err := toGQLError(r.Errors); err != nil {
				s.err = err
				return
			}
			select {
			case events <- r.Data:
			case <-ctx.Done():
				return
			}
		case "error":
			var errs []wireError
			if err := json.Unmarshal(m.Payload, &errs); err != nil || len(errs) == 0 {
				s.err = errors.New("subscription rejected by the kernel")
				return
			}
			s.err = toGQLError(errs)
			return
		case "complete":
			return
		case "ping":
			if err := wsjson.Write(ctx, s.conn, wsMessage{Type: "pong"}); err != nil {
				s.err = fmt.Errorf("subscription: %w", err)
				return
			}
		}
	}
}

// Err is why the stream ended; valid once Events is closed.
func (s *subscription) Err() error {
	<-s.done
	return s.err
}

// Close ends the subscription.
func (s *subscription) Close() {
	s.conn.Close(websocket.StatusNormalClosure, "done")
}

// closeReason is the reason of a WebSocket close error.
func closeReason(err error) string {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return err.Error()
}
