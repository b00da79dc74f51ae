package edge

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/foya-dev/foya/core/telemetry"
)

// countingWS lets subscriptionCap count a WebSocket connection's
// subscriptions in the order of its messages: it notes the id of each
// subscribe message before gqlgen handles it, and frees the slots of a
// subscription when the client's complete (graphql-ws: stop) is read, before
// the next message is.
type countingWS struct {
	inner transport.WebsocketImplementation
}

func (i countingWS) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	c, err := i.inner.Accept(w, r, opts)
	if err != nil {
		return nil, err
	}
	wsOpen.Add(1)
	c = &openConn{WebsocketConn: c}
	subs, _ := r.Context().Value(connSubsKey{}).(*connSubscriptions)
	if subs == nil {
		return c, nil
	}
	return &countingConn{WebsocketConn: c, subs: subs}, nil
}

// wsOpen counts the kernel's open WebSocket connections (the gauge
// foya.websocket.connections).
var wsOpen atomic.Int64

func init() {
	telemetry.Observe(telemetry.WSConnections, func() float64 { return float64(wsOpen.Load()) })
}

// openConn takes itself off wsOpen when closed.
type openConn struct {
	transport.WebsocketConn
	once sync.Once
}

func (c *openConn) Close() error {
	c.once.Do(func() { wsOpen.Add(-1) })
	return c.WebsocketConn.Close()
}

type countingConn struct {
	transport.WebsocketConn
	subs *connSubscriptions
}

// wsEnvelope is what countingConn reads of a client message.
type wsEnvelope struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

func (c *countingConn) NextReader() (int, io.Reader, error) {
	typ, r, err := c.WebsocketConn.NextReader()
	if err != nil || r == nil {
		return typ, r, err
	}
	rs, ok := r.(io.ReadSeeker)
	if !ok {
		b, err := io.ReadAll(r)
		if err != nil {
			return typ, nil, err
		}
		rs = bytes.NewReader(b)
	}
	var env wsEnvelope
	if json.NewDecoder(rs).Decode(&env) == nil {
		switch env.Type {
		case "subscribe", "start":
			c.subs.subscribing(env.ID)
		case "complete", "stop":
			c.subs.completed(env.ID)
		}
	}
	if _, err := rs.Seek(0, io.SeekStart); err != nil {
		return typ, nil, err
	}
	return typ, rs, nil
}

func (c *countingConn) SetReadLimit(n int64) {
	if l, ok := c.WebsocketConn.(transport.WebsocketReadLimiter); ok {
		l.SetReadLimit(n)
	}
}

func (c *countingConn) SetReadDeadline(t time.Time) error {
	if d, ok := c.WebsocketConn.(transport.WebsocketReadDeadliner); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}
