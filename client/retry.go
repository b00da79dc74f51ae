package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The kernel refuses a request with HTTP 429 coded RATE_LIMITED when the
// client has too many requests in flight or the kernel runs too many
// expensive ones (docs/limits.md); the request did not run. The client
// waits the answer's Retry-After (at most maxRetryWait each time) and
// sends it again, at most rateLimitAttempts times in all.
const (
	rateLimitAttempts = 5
	maxRetryWait      = 5 * time.Second
)

// sendRetrying calls once with body, again with the same bytes while the
// kernel answers 429.
func sendRetrying(ctx context.Context, body io.Reader, once func(io.Reader) ([]byte, string, http.Header, error)) ([]byte, string, error) {
	// A file upload is read from the file again for each attempt; any
	// other body is held to be sent again.
	mf, isFile := body.(*multipartFile)
	var b []byte
	if !isFile {
		var err error
		if b, err = io.ReadAll(body); err != nil {
			return nil, "", fmt.Errorf("read request body: %w", err)
		}
	}
	for attempt := 1; ; attempt++ {
		var next io.Reader = bytes.NewReader(b)
		if isFile {
			next = mf.reopen()
		}
		raw, status, h, err := once(next)
		if err != nil || !strings.HasPrefix(status, "429") || !bytes.Contains(raw, []byte(`"RATE_LIMITED"`)) || attempt == rateLimitAttempts {
			return raw, status, err
		}
		wait := time.Second
		if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil && s >= 0 {
			wait = min(time.Duration(s)*time.Second, maxRetryWait)
		}
		select {
		case <-ctx.Done():
			return raw, status, nil // the refusal, as the answer
		case <-time.After(wait):
		}
	}
}
