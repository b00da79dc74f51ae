package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"
	"github.com/foya-dev/foya/graph"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// The close codes of graphql-transport-ws (PROTOCOL.md of enisdenjo/graphql-ws).
const (
	closeBadRequest          = 4400 // a message of a type or format the protocol does not define
	closeUnauthorized        = 4401 // subscribe before connection_ack
	closeInitTimeout         = 4408 // no connection_init within the init timeout
	closeSubscriberExists    = 4409 // subscribe with the id of a running operation
	closeTooManyInitRequests = 4429 // a second connection_init
)

const (
	subprotocolTransportWS = "graphql-transport-ws"
	// DefaultWSPingInterval is how often the kernel sends a graphql-transport-ws
	// `ping` message (foya serve --ws-ping-interval).
	DefaultWSPingInterval = 15 * time.Second
	// DefaultWSInitTimeout is connectionInitWaitTimeout: a socket that sends
	// no connection_init within it is closed with 4408.
	DefaultWSInitTimeout = 10 * time.Second
	// wsMissedPongs is how many pings may go unanswered (no `pong` message)
	// before the socket is closed as dead with 1001.
	wsMissedPongs = 2
	// wsWriteTimeout bounds one message write to a client that reads too slowly.
	wsWriteTimeout = 30 * time.Second
)

// transportWS serves the graphql-transport-ws subprotocol exactly as its
// protocol document says (see docs/sse.md, "WebSocket"): ping/pong at any
// time, connection_init once within initTimeout (4408, 4429), subscribe only
// after the ack (4401) and with an id no running operation has (4409),
// `error` for operations refused before execution (parse, validation,
// variables), `next`…`complete` otherwise, 4400 for anything else. The
// legacy `graphql-ws` subprotocol stays with gqlgen's transport.
type transportWS struct {
	pingInterval time.Duration
	initTimeout  time.Duration
	readLimit    int64
	// initFunc authenticates connection_init (Auth.wsInit); a refusal closes
	// the socket with 4403 and "UNAUTHENTICATED: <why>".
	initFunc transport.WebsocketInitFunc
}

var _ graphql.Transport = transportWS{}

func (t transportWS) Supports(r *http.Request) bool {
	if !isUpgrade(r) {
		return false
	}
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(p), subprotocolTransportWS) {
				return true
			}
		}
	}
	return false
}

func (t transportWS) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	// browserGuard has already checked the Origin of every /graphql request.
	// wsHandshake: the 101 response and the socket's buffers (wshandshake.go).
	conn, err := websocket.Accept(&wsHandshake{ResponseWriter: w}, r, &websocket.AcceptOptions{Subprotocols: []string{subprotocolTransportWS}, InsecureSkipVerify: true})
	if err != nil {
		return // Accept has answered the request
	}
	if t.readLimit > 0 {
		conn.SetReadLimit(t.readLimit)
	}
	if t.pingInterval <= 0 {
		t.pingInterval = DefaultWSPingInterval
	}
	if t.initTimeout <= 0 {
		t.initTimeout = DefaultWSInitTimeout
	}
	c := &wsConn{t: t, conn: conn, exec: exec, ctx: r.Context(), headers: r.Header, ops: map[string]*wsOp{}, done: make(chan struct{})}
	c.serve()
}

type wsConn struct {
	t       transportWS
	conn    *websocket.Conn
	exec    graphql.GraphExecutor
	ctx     context.Context // the request's, then connection_init's
	headers http.Header

	initSeen bool
	acked    bool
	payload  transport.InitPayload

	mu     sync.Mutex
	ops    map[string]*wsOp // running operations by id
	closed bool
	wg     sync.WaitGroup

	done     chan struct{} // closed when the loop takes no more frames
	doneOnce sync.Once
}

func (c *wsConn) stopFrames() { c.doneOnce.Do(func() { close(c.done) }) }

type wsFrame struct {
	typ  websocket.MessageType
	data []byte
}

// wsInMessage is a client message; payload and id are checked per type.
type wsInMessage struct {
	Type    string          `json:"type"`
	ID      *string         `json:"id"`
	Payload json.RawMessage `json:"payload"`
}

type wsOutMessage struct {
	Type    string `json:"type"`
	ID      string `json:"id,omitempty"`
	Payload any    `json:"payload,omitempty"`
}

// serve runs the connection until the socket is closed and the protocol
// loop has ended. The loop (run) gets a goroutine of its own and the
// request's goroutine reads the socket: the loop's work — operations
// parsed and validated in it — grows a stack that shrinks again while it
// waits, whereas the request's goroutine is deep in the HTTP handlers (its
// stack cannot shrink below the size they need), so only the shallow read
// runs on it. The request (its context, the middleware around it) lasts
// until both have ended, as when the loop ran on it. A panic of the loop
// is raised again here, where gqlgen's handler recovers it as before.
func (c *wsConn) serve() {
	frames := make(chan wsFrame)
	readErr := make(chan error, 1)
	ended := make(chan struct{})
	var panicked *wsPanic
	go func() {
		defer close(ended)
		defer func() {
			if v := recover(); v != nil {
				panicked = &wsPanic{v: v, stack: debug.Stack()}
				c.close(websocket.StatusInternalError, "internal error; see the kernel log")
			}
		}()
		c.run(frames, readErr)
	}()
	c.readFrames(frames, readErr)
	<-ended
	if panicked != nil {
		panic(panicked)
	}
}

// wsPanic is a panic of the connection's loop, raised again on the
// request's goroutine with the stack where it happened.
type wsPanic struct {
	v     any
	stack []byte
}

func (p *wsPanic) String() string {
	return fmt.Sprintf("%v\n\n[the WebSocket loop's stack]\n%s", p.v, p.stack)
}

// run is the connection's protocol loop: frames and read errors come from
// readFrames.
func (c *wsConn) run(frames <-chan wsFrame, readErr <-chan error) {
	reqCtx := c.ctx
	defer c.stopFrames()
	initTimer := time.NewTimer(c.t.initTimeout)
	defer initTimer.Stop()
	ping := time.NewTicker(c.t.pingInterval)
	defer ping.Stop()
	unanswered := 0
	defer c.cancelAll()
	for {
		select {
		case <-reqCtx.Done():
			if errors.Is(context.Cause(reqCtx), errTokenRotated) {
				c.close(closeForbidden, "UNAUTHENTICATED: the token was rotated")
			} else {
				c.close(websocket.StatusGoingAway, "the kernel is shutting down")
			}
			return
		case <-readErr:
			c.close(websocket.StatusNormalClosure, "")
			return
		case <-initTimer.C:
			if !c.initSeen {
				c.close(closeInitTimeout, "Connection initialisation timeout")
				return
			}
		case <-ping.C:
			if unanswered >= wsMissedPongs {
				c.close(websocket.StatusGoingAway, fmt.Sprintf("no pong for %d pings: the client is gone", unanswered))
				return
			}
			unanswered++
			c.write(wsOutMessage{Type: "ping"})
		case f := <-frames:
			if !c.handle(f, &unanswered) {
				return
			}
		}
	}
}

// readFrames reads the socket until it fails, handing each frame to the
// loop while it takes them. It goes on reading after the loop has stopped
// taking frames, so that a close handshake the kernel starts can read the
// peer's reply; every way the loop ends closes the socket, which ends the
// reading.
func (c *wsConn) readFrames(frames chan<- wsFrame, readErr chan<- error) {
	for {
		typ, data, err := c.conn.Read(context.Background())
		if err != nil {
			readErr <- err
			return
		}
		select {
		case frames <- wsFrame{typ, data}:
		case <-c.done:
		}
	}
}

// handle answers one client message; false when the connection is closed.
// A pong resets unanswered, the count of pings without one.
func (c *wsConn) handle(f wsFrame, unanswered *int) bool {
	m, reason := parseWSMessage(f)
	if reason != "" {
		c.close(closeBadRequest, reason)
		return false
	}
	switch m.Type {
	case "ping":
		out := wsOutMessage{Type: "pong"}
		if len(m.Payload) > 0 && string(m.Payload) != "null" {
			out.Payload = m.Payload
		}
		c.write(out)
	case "pong":
		*unanswered = 0
	case "connection_init":
		if c.initSeen {
			c.close(closeTooManyInitRequests, "Too many initialisation requests")
			return false
		}
		c.initSeen = true
		return c.init(m.Payload)
	case "subscribe":
		if !c.acked {
			c.close(closeUnauthorized, "Unauthorized")
			return false
		}
		return c.subscribe(*m.ID, m.Payload)
	case "complete":
		c.complete(*m.ID)
	}
	return true
}

// complete ends the client's operation id, if it still runs.
func (c *wsConn) complete(id string) {
	c.mu.Lock()
	op := c.ops[id]
	delete(c.ops, id)
	c.mu.Unlock()
	if subs, _ := c.ctx.Value(connSubsKey{}).(*connSubscriptions); subs != nil {
		subs.completed(id)
	}
	if op != nil {
		op.cancel()
	}
}

// parseWSMessage checks a client message's type and format; reason is the
// 4400 close reason when it is not one the protocol defines.
func parseWSMessage(f wsFrame) (m wsInMessage, reason string) {
	if f.typ != websocket.MessageText {
		return m, "Invalid message received: expected a JSON text message"
	}
	if !bytes.HasPrefix(bytes.TrimSpace(f.data), []byte("{")) || json.Unmarshal(f.data, &m) != nil {
		return m, "Invalid message received: not a JSON object with a string type"
	}
	isObjectOrNull := func(raw json.RawMessage) bool {
		s := bytes.TrimSpace(raw)
		return len(s) == 0 || string(s) == "null" || s[0] == '{'
	}
	switch m.Type {
	case "connection_init", "ping", "pong":
		if !isObjectOrNull(m.Payload) {
			return m, fmt.Sprintf("Invalid message received: the payload of %q must be an object", m.Type)
		}
	case "subscribe", "complete":
		if m.ID == nil || *m.ID == "" {
			return m, fmt.Sprintf("Invalid message received: %q needs a non-empty string id", m.Type)
		}
		if m.Type == "subscribe" {
			s := bytes.TrimSpace(m.Payload)
			if len(s) == 0 || s[0] != '{' {
				return m, `Invalid message received: the payload of "subscribe" must be an object with a query`
			}
		}
	case "":
		return m, "Invalid message received: no type"
	default:
		return m, "Invalid message received: unexpected type " + graph.ClipText(m.Type, 32)
	}
	return m, ""
}

// init authenticates connection_init and acknowledges it; false when the
// socket was closed.
func (c *wsConn) init(raw json.RawMessage) bool {
	if len(raw) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		if e := json.Unmarshal(raw, &c.payload); e != nil {
			c.close(closeBadRequest, "Invalid message received: the connection_init payload is not an object")
			return false
		}
	}
	var ack *transport.InitPayload
	if c.t.initFunc != nil {
		ctx, p, e := c.t.initFunc(c.ctx, c.payload)
		if e != nil {
			c.close(closeForbidden, closeReason("UNAUTHENTICATED: "+e.Error()))
			return false
		}
		if ctx != nil {
			c.ctx = ctx
		}
		ack = p
	}
	c.acked = true
	if ack != nil {
		c.write(wsOutMessage{Type: "connection_ack", Payload: *ack})
	} else {
		c.write(wsOutMessage{Type: "connection_ack"})
	}
	return true
}

// subscribe starts the operation id; false when the socket was closed.
func (c *wsConn) subscribe(id string, raw json.RawMessage) bool {
	c.mu.Lock()
	if _, dup := c.ops[id]; dup {
		c.mu.Unlock()
		c.close(closeSubscriberExists, closeReason("Subscriber for "+id+" already exists"))
		return false
	}
	ctx, cancel := context.WithCancel(c.ctx)
	op := &wsOp{cancel: cancel}
	c.ops[id] = op
	c.mu.Unlock()

	start := graphql.Now()
	params := &graphql.RawParams{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if e := dec.Decode(params); e != nil || params.Query == "" && params.Extensions == nil {
		c.close(closeBadRequest, `Invalid message received: the payload of "subscribe" must be an object with a string query`)
		return false
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	params.Headers = c.headers
	ctx = graphql.StartOperationTrace(ctx)
	// The operation context is made here, in the read loop, so that the
	// subscription cap takes its slots in the order subscribes arrive
	// (subcap.go); a client's complete frees them in the read loop too.
	if subs, _ := ctx.Value(connSubsKey{}).(*connSubscriptions); subs != nil {
		subs.subscribing(id)
	}
	oc, errs := c.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		// Refused before execution (parse, validation, variables,
		// cost): one `error` message, no `complete`.
		resp := c.exec.DispatchError(graphql.WithOperationContext(ctx, oc), errs)
		c.send(op, true, wsOutMessage{Type: "error", ID: id, Payload: resp.Errors})
		cancel()
		return true
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer cancel()
		octx := graphql.WithOperationContext(ctx, oc)
		defer func() {
			if r := recover(); r != nil {
				e := oc.Recover(octx, r)
				var ge *gqlerror.Error
				if !errors.As(e, &ge) {
					ge = &gqlerror.Error{Message: "internal error; see the kernel log", Extensions: map[string]any{"code": "INTERNAL"}}
				}
				c.send(op, true, wsOutMessage{Type: "error", ID: id, Payload: gqlerror.List{ge}})
			}
		}()
		responses, rctx := c.exec.DispatchOperation(octx, oc)
		for {
			resp := responses(rctx)
			if resp == nil {
				break
			}
			if !c.send(op, false, wsOutMessage{Type: "next", ID: id, Payload: resp}) {
				return
			}
		}
		if c.ctx.Err() == nil { // else the socket is closing (shutdown, rotated token): no normal end
			c.send(op, true, wsOutMessage{Type: "complete", ID: id})
		}
	}()
	return true
}

// wsOp is one running operation; its id may be taken again by a new one
// once the client completed it, so messages are matched by identity.
type wsOp struct{ cancel context.CancelFunc }

// send writes a message of op while op still runs under its id (the client
// has not completed it, the socket is open), and with last frees the id;
// false when nothing more may be sent for op.
func (c *wsConn) send(op *wsOp, last bool, m wsOutMessage) bool {
	b := marshalWS(m)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.ops[m.ID] != op {
		return false
	}
	if last {
		delete(c.ops, m.ID)
	}
	c.writeLocked(b)
	return !c.closed
}

func marshalWS(m wsOutMessage) []byte {
	b, e := json.Marshal(m)
	if e != nil {
		b, _ = json.Marshal(wsOutMessage{Type: m.Type, ID: m.ID})
	}
	return b
}

func (c *wsConn) write(m wsOutMessage) {
	b := marshalWS(m)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writeLocked(b)
}

func (c *wsConn) writeLocked(b []byte) {
	if c.closed {
		return
	}
	wctx, cancel := context.WithTimeout(context.Background(), wsWriteTimeout)
	defer cancel()
	if c.conn.Write(wctx, websocket.MessageText, b) != nil {
		c.closed = true
		c.conn.CloseNow()
	}
}

func (c *wsConn) close(code websocket.StatusCode, reason string) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.mu.Unlock()
	c.stopFrames()
	c.cancelAll()
	_ = c.conn.Close(code, reason)
}

func (c *wsConn) cancelAll() {
	c.mu.Lock()
	ops := c.ops
	c.ops = map[string]*wsOp{}
	c.mu.Unlock()
	for _, op := range ops {
		op.cancel()
	}
}

// closeReason bounds a close reason to the 123 bytes a close frame carries.
func closeReason(s string) string {
	if len(s) <= 123 {
		return s
	}
	s = s[:120]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// wsInitFunc is a's connection_init check (nil: none).
func (a *Auth) wsInitFunc() transport.WebsocketInitFunc {
	if a == nil {
		return nil
	}
	return a.wsInit
}
