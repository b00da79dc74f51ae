package httpwire

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/plugins/sdk"
)

type ev struct{ name, data string }

func TestReadEvents(t *testing.T) {
	stream := ": comment\r\nevent: a\r\ndata: one\r\ndata:two\r\n\r\n" +
		"data: {\"x\":1}\n\n" +
		"event: empty\n\n" +
		"event: last\ndata: cut"
	var got []ev
	err := ReadEvents(context.Background(), strings.NewReader(stream), func() bool { return false }, func(name string, data []byte) error {
		got = append(got, ev{name, string(data)})
		return nil
	})
	want := []ev{{"a", "one\ntwo"}, {"", `{"x":1}`}, {"last", "cut"}}
	if err != nil || len(got) != len(want) {
		t.Fatalf("err %v events %q", err, got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestReadEventsStopsWhenDone(t *testing.T) {
	n := 0
	err := ReadEvents(context.Background(), strings.NewReader("data: 1\n\ndata: 2\n\n"), func() bool { return n == 1 }, func(string, []byte) error {
		n++
		return nil
	})
	if err != nil || n != 1 {
		t.Fatalf("err %v, %d events handled", err, n)
	}
	stop := errors.New("stop")
	err = ReadEvents(context.Background(), strings.NewReader("data: 1\n\ndata: 2\n\n"), func() bool { return false }, func(string, []byte) error { return stop })
	if err != stop {
		t.Fatalf("err %v, want the handler's", err)
	}
}

type failReader struct{}

func (failReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestReadEventsReadFailure(t *testing.T) {
	err := ReadEvents(context.Background(), failReader{}, func() bool { return false }, func(string, []byte) error { return nil })
	var e *sdk.Error
	if !errors.As(err, &e) || e.Category != sdk.CategoryNetwork {
		t.Fatalf("err %v, want a network error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ReadEvents(ctx, failReader{}, func() bool { return false }, func(string, []byte) error { return nil }); err != context.Canceled {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

func TestRetryAfter(t *testing.T) {
	if d := RetryAfter(nil); d != 0 {
		t.Errorf("nil header: %v", d)
	}
	if d := RetryAfter(http.Header{"Retry-After": {"1.5"}}); d != 1500*time.Millisecond {
		t.Errorf("seconds: %v", d)
	}
	if d := RetryAfter(http.Header{"Retry-After": {time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)}}); d < 59*time.Minute || d > time.Hour {
		t.Errorf("date: %v", d)
	}
	if d := RetryAfter(http.Header{"Retry-After": {"soon"}}); d != 0 {
		t.Errorf("garbage: %v", d)
	}
	h := http.Header{"Retry-After": {"3"}}
	if d := RetryAfterMS(h); d != 3*time.Second {
		t.Errorf("ms absent: %v", d)
	}
	h.Set("retry-after-ms", "250")
	if d := RetryAfterMS(h); d != 250*time.Millisecond {
		t.Errorf("ms: %v", d)
	}
	if d := RetryAfter(h); d != 3*time.Second {
		t.Errorf("RetryAfter reads retry-after-ms: %v", d)
	}
}

func TestBodyMessageAndScrub(t *testing.T) {
	if m := BodyMessage(502, nil); m != "Bad Gateway" {
		t.Errorf("empty body: %q", m)
	}
	if m := BodyMessage(400, []byte(" "+strings.Repeat("x", 400)+" ")); m != strings.Repeat("x", 300) {
		t.Errorf("long body: %d bytes", len(m))
	}
	if s := Scrub("key sk-1 leaked sk-1", "sk-1"); s != "key [redacted] leaked [redacted]" {
		t.Errorf("scrub: %q", s)
	}
	if s := Scrub("as is", ""); s != "as is" {
		t.Errorf("empty key: %q", s)
	}
}

func TestDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := make([]byte, 100)
		n, _ := r.Body.Read(body)
		if r.Header.Get("X-Key") != "sk-secret" || r.Header.Get("Content-Type") != "application/json" || string(body[:n]) != "{\"q\":\"<b>\"}\n" {
			http.Error(w, "bad request with sk-secret in it", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	classify := func(status int, h http.Header, body []byte) *sdk.Error {
		return &sdk.Error{Category: sdk.ErrorCategory("s" + strconv.Itoa(status)), Message: BodyMessage(status, body)}
	}
	r := Request{Method: http.MethodPost, URL: srv.URL + "/x", Path: "/x", Body: map[string]string{"q": "<b>"}, Header: http.Header{"X-Key": {"sk-secret"}}, Secret: "sk-secret"}
	_, err := Do(context.Background(), Client(nil), r, classify)
	var e *sdk.Error
	if !errors.As(err, &e) || e.Category != "s429" {
		t.Fatalf("err %v, want the classified 429", err)
	}
	r.Body = map[string]string{"q": "other"}
	_, err = Do(context.Background(), Client(nil), r, classify)
	if !errors.As(err, &e) || e.Category != "s400" || strings.Contains(e.Message, "sk-secret") || !strings.Contains(e.Message, "[redacted]") {
		t.Fatalf("err %v, want a scrubbed 400", err)
	}
	r.URL = "http://127.0.0.1:1/sk-secret"
	_, err = Do(context.Background(), Client(nil), r, classify)
	if !errors.As(err, &e) || e.Category != sdk.CategoryNetwork || strings.Contains(e.Message, "sk-secret") {
		t.Fatalf("err %v, want a scrubbed network error", err)
	}
}

// A line or an event's data over MaxEventBytes fails the stream with a
// server error instead of growing without bound; smaller ones pass whole.
func TestReadEventsBoundsOneEvent(t *testing.T) {
	big := strings.Repeat("a", MaxEventBytes-16)
	var got int
	err := ReadEvents(context.Background(), strings.NewReader("data: "+big+"\n\n"), func() bool { return false }, func(_ string, data []byte) error {
		got = len(data)
		return nil
	})
	if err != nil || got != len(big) {
		t.Fatalf("an event under the bound: %d bytes, %v", got, err)
	}
	for name, stream := range map[string]string{
		"one endless line":       "data: " + strings.Repeat("a", MaxEventBytes+1),
		"many data lines":        strings.Repeat("data: "+strings.Repeat("b", 1<<20)+"\n", 17) + "\n",
		"a line after the bound": "data: x\n" + strings.Repeat("c", MaxEventBytes+10) + "\n\n",
	} {
		err := ReadEvents(context.Background(), strings.NewReader(stream), func() bool { return false }, func(string, []byte) error { return nil })
		var se *sdk.Error
		if !errors.As(err, &se) || se.Category != sdk.CategoryServer || !strings.Contains(se.Message, "16 MiB") {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// FuzzReadEvents: whatever a server sends, ReadEvents never panics, hands
// out no event larger than MaxEventBytes, and fails only with a classified
// error.
func FuzzReadEvents(f *testing.F) {
	f.Add([]byte("event: message_start\ndata: {\"type\":\"message_start\"}\n\n"))
	f.Add([]byte("data: a\ndata: b\n\n: comment\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: no end"))
	f.Add([]byte("\r\n\r\ndata:\r\n\r\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		err := ReadEvents(context.Background(), strings.NewReader(string(body)), func() bool { return false }, func(_ string, data []byte) error {
			if len(data) > MaxEventBytes {
				t.Fatalf("an event of %d bytes", len(data))
			}
			return nil
		})
		var se *sdk.Error
		if err != nil && !errors.As(err, &se) {
			t.Fatalf("unclassified error %v", err)
		}
	})
}
