package edge

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// The buffers of a graphql-transport-ws socket. net/http hands a hijacked
// connection its own 4 KiB reader and writer, held for the socket's life;
// the messages of the protocol are small (a client sends connection_init,
// subscribe, complete and pong; the kernel's `next` messages of deltas are
// a few hundred bytes), and a message larger than a buffer is read or
// written through it in more than one piece, or directly.
const (
	wsReadBuffer  = 1 << 10
	wsWriteBuffer = 2 << 10
)

// wsHandshake is the ResponseWriter websocket.Accept answers an upgrade
// through. Accept's WriteHeader(101) is held and its Hijack writes the 101
// response itself, on the socket's own small buffers, instead of net/http
// writing it while the connection is hijacked: net/http's response writer
// needs ~3 KiB of stack more, on the request's goroutine, which is deep in
// the handlers already and then reads the socket for as long as it is
// open — with it, that goroutine's stack grows to 16 KiB and stays there
// (see wsConn.serve). The response is the one net/http writes: the status
// line, then the header (sorted) with a Date.
type wsHandshake struct {
	http.ResponseWriter
	switching bool // WriteHeader(101) was called
}

func (w *wsHandshake) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *wsHandshake) WriteHeader(status int) {
	if status == http.StatusSwitchingProtocols {
		w.switching = true
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *wsHandshake) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil || !w.switching {
		return conn, brw, err
	}
	// What the client sent after its handshake and net/http already
	// read goes into the new reader's buffer first (Accept resets the
	// reader's source to the socket, keeping what is buffered).
	early, _ := brw.Reader.Peek(brw.Reader.Buffered())
	r := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(early)), conn), max(wsReadBuffer, len(early)))
	if len(early) > 0 {
		if _, err := r.Peek(len(early)); err != nil {
			conn.Close()
			return nil, nil, fmt.Errorf("websocket handshake: %w", err)
		}
	}
	bw := bufio.NewWriterSize(conn, wsWriteBuffer)
	if err := writeSwitching(bw, w.Header()); err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("websocket handshake: %w", err)
	}
	return conn, bufio.NewReadWriter(r, bw), nil
}

// writeSwitching writes the 101 response with header h and flushes it.
func writeSwitching(bw *bufio.Writer, h http.Header) error {
	bw.WriteString("HTTP/1.1 101 Switching Protocols\r\n")
	if _, ok := h["Date"]; !ok {
		bw.WriteString("Date: " + time.Now().UTC().Format(http.TimeFormat) + "\r\n")
	}
	if err := h.Write(bw); err != nil {
		return err
	}
	bw.WriteString("\r\n")
	return bw.Flush()
}
