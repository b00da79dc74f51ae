package edge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The 101 response transportWS writes itself (wsHandshake), read off a raw
// TCP connection whose client sends its first message in the same write as
// the handshake: the message net/http has already buffered is answered.
func TestWSHandshakeResponseAndEarlyMessage(t *testing.T) {
	k := newTestKernel(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(k.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	req := "GET /graphql HTTP/1.1\r\nHost: " + strings.TrimPrefix(k.srv.URL, "http://") + "\r\n" +
		"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n"
	if _, err := conn.Write(append([]byte(req), clientFrame(`{"type":"connection_init"}`)...)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %s", resp.Status)
	}
	for k, want := range map[string]string{
		"Upgrade":                "websocket",
		"Connection":             "Upgrade",
		"Sec-Websocket-Accept":   "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", // RFC 6455, 1.3
		"Sec-Websocket-Protocol": "graphql-transport-ws",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if _, err := http.ParseTime(resp.Header.Get("Date")); err != nil {
		t.Errorf("Date %q: %v", resp.Header.Get("Date"), err)
	}
	if got := readServerText(t, br); !strings.Contains(got, `"connection_ack"`) {
		t.Fatalf("first message %s, want connection_ack", got)
	}
}

// Messages larger than the socket's read and write buffers, both ways.
func TestWSMessagesLargerThanBuffers(t *testing.T) {
	k := newTestKernel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := dialRaw(t, ctx, k.srv.URL)
	w.init(ctx)
	// ~6 KiB in (a comment pads the query), several KiB out (every type
	// of the schema).
	query := "# " + strings.Repeat("x", 6<<10) + "\n{ __schema { types { name fields { name } } } }"
	payload, _ := json.Marshal(map[string]any{"query": query})
	w.sendRaw(ctx, `{"id":"1","type":"subscribe","payload":`+string(payload)+`}`)
	m := w.expect(ctx, "next")
	if len(m.Payload) < 8<<10 || !strings.Contains(string(m.Payload), `"Subscription"`) {
		t.Fatalf("next of %d bytes: %.200s", len(m.Payload), m.Payload)
	}
	w.expect(ctx, "complete")
}

// clientFrame is a masked, final text frame of a client (RFC 6455, 5.2).
func clientFrame(s string) []byte {
	mask := [4]byte{1, 2, 3, 4}
	f := []byte{0x81, 0x80 | byte(len(s))} // len(s) < 126
	f = append(f, mask[:]...)
	for i := range len(s) {
		f = append(f, s[i]^mask[i%4])
	}
	return f
}

// readServerText reads one unmasked text frame of up to 125 bytes.
func readServerText(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	var h [2]byte
	if _, err := br.Read(h[:1]); err != nil {
		t.Fatal(err)
	}
	if _, err := br.Read(h[1:]); err != nil {
		t.Fatal(err)
	}
	if h[0] != 0x81 || h[1] > 125 {
		t.Fatalf("frame header % x, want a short final text frame", h)
	}
	p := make([]byte, h[1])
	for n := 0; n < len(p); {
		m, err := br.Read(p[n:])
		if err != nil {
			t.Fatal(err)
		}
		n += m
	}
	return string(p)
}
