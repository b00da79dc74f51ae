package httpwire

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
)

// LineReader reads the lines of a stream through a buffer that starts
// small and doubles, up to a maximum, each time one read fills it. Every
// stream in progress holds one while it waits for the network: a stream
// that receives a chunk at a time (the usual case) keeps the small buffer,
// one that receives bursts (a fast local model) reads them whole, as with
// a buffer of the maximum size.
type LineReader struct {
	rd   io.Reader
	buf  []byte
	r, w int
	max  int
	full bool // the last read filled buf
	err  error
}

// NewLineReader returns a LineReader of rd whose buffer starts at initial
// bytes and grows up to max.
func NewLineReader(rd io.Reader, initial, max int) *LineReader {
	return &LineReader{rd: rd, buf: make([]byte, initial), max: max}
}

// LineBuffered reports whether a whole line is buffered: the next ReadLine
// returns without reading.
func (l *LineReader) LineBuffered() bool { return bytes.IndexByte(l.buf[l.r:l.w], '\n') >= 0 }

// ErrLineTooLong is ReadLine's error for a line longer than its limit.
var ErrLineTooLong = errors.New("line too long")

// ReadLine appends the next line, with its '\n', to dst. At the end of
// the input it returns the last line (without '\n', possibly empty) and the
// read error (io.EOF at a clean end). A line longer than limit bytes is
// ErrLineTooLong.
func (l *LineReader) ReadLine(dst []byte, limit int) ([]byte, error) {
	for empty := 0; ; {
		if i := bytes.IndexByte(l.buf[l.r:l.w], '\n'); i >= 0 {
			dst = append(dst, l.buf[l.r:l.r+i+1]...)
			l.r += i + 1
			return dst, nil
		}
		if len(dst)+l.w-l.r > limit {
			return dst, ErrLineTooLong
		}
		dst = append(dst, l.buf[l.r:l.w]...)
		l.r, l.w = 0, 0
		if l.err != nil {
			err := l.err
			l.err = nil
			return dst, err
		}
		if l.full && len(l.buf) < l.max {
			l.buf = make([]byte, min(2*len(l.buf), l.max))
		}
		n, err := l.rd.Read(l.buf)
		l.w, l.err, l.full = n, err, n == len(l.buf)
		if n == 0 && err == nil {
			if empty++; empty >= 100 {
				return dst, io.ErrNoProgress
			}
		}
	}
}

// RequestBody is the body of a request that lets go of its bytes once the
// request is answered: net/http keeps the request (its body and the
// function that rewinds it for a retry) for as long as the response is
// read, so a stream would otherwise hold the whole request it sent, with
// its history and images, until it ends.
type RequestBody struct {
	mu sync.Mutex
	b  []byte
}

// NewRequest returns a request of method to url with b as its body, and the
// RequestBody to Release once the response arrived.
func NewRequest(ctx context.Context, method, url string, b []byte) (*http.Request, *RequestBody, error) {
	rb := &RequestBody{b: b}
	if len(b) == 0 {
		req, err := http.NewRequestWithContext(ctx, method, url, nil)
		return req, rb, err
	}
	body, _ := rb.open()
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, nil, err
	}
	// What http.NewRequest sets for a *bytes.Reader, without keeping b
	// (its GetBody holds a copy of the reader).
	req.ContentLength = int64(len(b))
	req.GetBody = rb.open
	return req, rb, nil
}

// Release drops the bytes: the transport can no longer rewind the body
// (it only does so before the response arrives).
func (rb *RequestBody) Release() {
	rb.mu.Lock()
	rb.b = nil
	rb.mu.Unlock()
}

// open returns a reader of the bytes, for net/http's GetBody.
func (rb *RequestBody) open() (io.ReadCloser, error) {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	if rb.b == nil {
		return nil, errors.New("request body already released")
	}
	return &bodyReader{r: bytes.NewReader(rb.b)}, nil
}

// bodyReader reads a request body and drops it when closed (net/http
// closes the body once written).
type bodyReader struct {
	mu sync.Mutex
	r  *bytes.Reader
}

func (b *bodyReader) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.r == nil {
		return 0, io.EOF
	}
	return b.r.Read(p)
}

func (b *bodyReader) Close() error {
	b.mu.Lock()
	b.r = nil
	b.mu.Unlock()
	return nil
}
