// Package httpwire holds the HTTP and Server-Sent Events plumbing the
// built-in provider plugins share: client defaults, one JSON request with
// classified errors, secret scrubbing, Retry-After parsing and an event
// stream reader. Like the providers themselves it imports only plugins/sdk
// and the standard library.
package httpwire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/foya-dev/foya/plugins/sdk"
)

// Client returns c, or a client without an overall timeout when c is nil
// (streams are long; cancellation comes from ctx), with its own Transport.
func Client(c *http.Client) *http.Client {
	if c == nil {
		return &http.Client{Transport: Transport()}
	}
	return c
}

// Transport is the HTTP transport of a built-in provider: net/http's
// default, keeping more connections to the endpoint open for the next
// request (the default keeps 2 idle per host, so concurrent sessions would
// dial, and for HTTPS handshake, again before their first token), with a
// smaller write buffer per connection: it holds the request line and
// headers, the body goes on to the connection past it, and every
// HTTP/1.1 connection keeps it for as long as it is open (net/http's
// default is 4 KiB).
func Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	t.WriteBufferSize = 1 << 10
	return t
}

// Logger returns l, or a logger that discards everything when l is nil.
func Logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// Request is one JSON call to a provider's API.
type Request struct {
	Method string
	// URL is the full address; Path names the call in error messages.
	URL, Path string
	// Body is sent as JSON without HTML escaping (what goes back, such as
	// thinking text or tool input, stays byte for byte as the service sent
	// it); nil sends no body.
	Body any
	// Header is added to the request.
	Header http.Header
	// Secret (the API key) is scrubbed from error messages.
	Secret string
}

// Classifier turns a non-2xx response (status, header, at most 64 KiB of
// body) into a categorized error.
type Classifier func(status int, header http.Header, body []byte) *sdk.Error

// Do sends r and returns the response when the status is 2xx; otherwise a
// classified error, or ctx's error when the call was cancelled.
func Do(ctx context.Context, client *http.Client, r Request, classify Classifier) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(r.Body); err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		body = buf.Bytes()
	}
	req, rb, err := NewRequest(ctx, r.Method, r.URL, body)
	if err != nil {
		return nil, &sdk.Error{Category: sdk.CategoryBadRequest, Message: "build request: " + err.Error()}
	}
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.Header {
		req.Header[k] = v
	}
	if tp := sdk.Traceparent(ctx); tp != "" {
		req.Header.Set(sdk.TraceparentKey, tp) // the kernel's trace goes on to the provider
	}
	resp, err := client.Do(req)
	rb.Release() // a stream does not hold its request while it is read
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &sdk.Error{Category: sdk.CategoryNetwork, Message: r.Method + " " + r.Path + ": " + Scrub(err.Error(), r.Secret)}
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		e := classify(resp.StatusCode, resp.Header, b)
		e.Message = Scrub(e.Message, r.Secret)
		return nil, e
	}
	return resp, nil
}

// Scrub replaces every occurrence of key in s.
func Scrub(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

// BodyMessage is the message of an error response whose body carries no
// error object with a message: the body text (at most 300 bytes) or the
// status text.
func BodyMessage(status int, body []byte) string {
	msg := strings.TrimSpace(string(body))
	if len(msg) > 300 {
		msg = msg[:300]
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return msg
}

// RetryAfter reads Retry-After (seconds or an HTTP date); h may be nil.
func RetryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// RetryAfterMS reads OpenAI's retry-after-ms, else Retry-After.
func RetryAfterMS(h http.Header) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("retry-after-ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	return RetryAfter(h)
}

// MaxEventBytes bounds one line and one event's data of a stream: a
// larger one fails the stream (a server error), so a reply that never ends
// a line cannot grow the plugin without bound. Legitimate events are far
// smaller (a delta, a completed item).
const MaxEventBytes = 16 << 20

// ReadEvents reads a Server-Sent Events stream until done reports true or
// the body ends, calling handle with each event's name ("" when it has no
// event: line) and data (data: lines joined by newlines; an event without
// data is skipped). The data slice is only valid during the call. An event
// cut off by the end of the body is still handled. A read failure is a
// network error, or ctx's error when ctx ended.
func ReadEvents(ctx context.Context, body io.Reader, done func() bool, handle func(event string, data []byte) error) error {
	rd := NewLineReader(body, InitialReadBuffer, MaxReadBuffer)
	var (
		event string
		data  bytes.Buffer
	)
	dispatch := func() error {
		defer func() { event = ""; data.Reset() }()
		if data.Len() == 0 {
			return nil
		}
		return handle(event, data.Bytes())
	}
	var buf []byte
	for !done() {
		line, err := rd.ReadLine(buf[:0], MaxEventBytes)
		buf = line[:0]
		if errors.Is(err, ErrLineTooLong) || data.Len()+len(line) > MaxEventBytes {
			return &sdk.Error{Category: sdk.CategoryServer, Message: fmt.Sprintf("a stream event is larger than %d MiB, the limit of one event", MaxEventBytes>>20)}
		}
		if len(line) > 0 {
			l := strings.TrimRight(string(line), "\r\n")
			switch {
			case l == "":
				if herr := dispatch(); herr != nil {
					return herr
				}
			case strings.HasPrefix(l, "event:"):
				event = strings.TrimSpace(strings.TrimPrefix(l, "event:"))
			case strings.HasPrefix(l, "data:"):
				if data.Len() > 0 {
					data.WriteByte('\n')
				}
				data.WriteString(strings.TrimPrefix(strings.TrimPrefix(l, "data:"), " "))
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !errors.Is(err, io.EOF) {
				return &sdk.Error{Category: sdk.CategoryNetwork, Message: "read stream: " + err.Error()}
			}
			return dispatch()
		}
	}
	return nil
}

// The read buffer of a stream (LineReader): it starts at InitialReadBuffer
// — a few lines of a stream that sends a chunk at a time (100–400 bytes
// each) — and grows, while the service sends faster than the plugin reads
// (a read fills it), up to MaxReadBuffer.
const (
	InitialReadBuffer = 1 << 10
	MaxReadBuffer     = 64 << 10
)

// ClassifyBody classifies an error response whose body is {"error": E}:
// object classifies the error object (nil when the body has none) and,
// when the object has no message (message returns ""), the body text or
// the status text becomes the message.
func ClassifyBody[E any](status int, header http.Header, body []byte, object func(int, http.Header, *E) *sdk.Error, message func(*E) string) *sdk.Error {
	var env struct {
		Error *E `json:"error"`
	}
	_ = json.Unmarshal(body, &env)
	e := object(status, header, env.Error)
	if env.Error == nil || message(env.Error) == "" {
		e.Message = BodyMessage(status, body)
	}
	return e
}
