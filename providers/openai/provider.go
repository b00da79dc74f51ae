// Package openai is the built-in OpenAI-compatible language provider
// (PRV-8): Chat Completions streaming with text, reasoning_content, function
// tool calls, usage and image input; non-streaming completion; the model list;
// and native web search through the Responses API when a connection enables
// it. It speaks net/http + encoding/json directly and is served through
// plugins/sdk, as the "openai" built-in plugin of the kernel binary.
//
// Base URL: the connection's base URL is the API root including the version,
// conventionally ending in /v1 (e.g. https://api.openai.com/v1 or
// http://localhost:11434/v1); paths such as /chat/completions and /models are
// appended to it. An empty base URL means https://api.openai.com/v1.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/internal/httpwire"
)

// Kind is the provider kind connections name.
const Kind = "openai"

// Version of this provider.
const Version = "0.1.0"

// DefaultBaseURL is used when a connection leaves the base URL empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// Endpoint options (core.Endpoint.Options) this provider reads.
const (
	// OptionWebSearch = "responses" enables native web search through the
	// Responses API; anything else leaves web search unavailable.
	OptionWebSearch = "web_search"
	// OptionMaxTokensField is "max_tokens" or "max_completion_tokens".
	OptionMaxTokensField = "max_tokens_field"
	// OptionResolveCapabilities = "model_endpoint" makes the capability
	// resolver ask GET {base}/models/{id} (see ResolveCapabilities).
	OptionResolveCapabilities = "resolve_capabilities"
)

// Config configures a Provider.
type Config struct {
	// HTTPClient defaults to a client without an overall timeout (streams
	// are long; cancellation comes from ctx).
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// Provider implements sdk.Provider and its completer, detailed completer,
// model lister, capability resolver and web search capabilities.
type Provider struct {
	http *http.Client
	log  *slog.Logger
}

// New returns a Provider.
func New(cfg Config) *Provider {
	return &Provider{http: httpwire.Client(cfg.HTTPClient), log: httpwire.Logger(cfg.Logger)}
}

// Describe declares the optional capabilities (PRV-7). Web search is
// declared because the provider can do it; connections without the
// web_search option answer it with an "unavailable" error.
func (p *Provider) Describe() sdk.ProviderInfo {
	return sdk.ProviderInfo{Kind: Kind, Version: Version, Capabilities: []sdk.Capability{
		sdk.CapCompleter, sdk.CapDetailedCompleter, sdk.CapModelLister, sdk.CapWebSearch, sdk.CapCapabilityResolver,
		sdk.CapImageGenerator, sdk.CapVideoGenerator,
	}}
}

func baseURL(ep sdk.Endpoint) string {
	if ep.BaseURL == "" {
		return DefaultBaseURL
	}
	return strings.TrimRight(ep.BaseURL, "/")
}

// do sends one request and returns the response when the status is 2xx;
// otherwise a classified error.
func (p *Provider) do(ctx context.Context, ep sdk.Endpoint, method, path string, body any) (*http.Response, error) {
	var b []byte
	contentType := ""
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		contentType = "application/json"
	}
	return p.doRaw(ctx, ep, method, path, b, contentType, nil)
}

// doRaw is do with an encoded body (none when contentType is empty) and
// extra request headers.
func (p *Provider) doRaw(ctx context.Context, ep sdk.Endpoint, method, path string, b []byte, contentType string, header http.Header) (*http.Response, error) {
	req, rb, err := httpwire.NewRequest(ctx, method, baseURL(ep)+path, b)
	if err != nil {
		return nil, &sdk.Error{Category: sdk.CategoryBadRequest, Message: "build request: " + err.Error()}
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if ep.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+ep.APIKey)
	}
	if tp := sdk.Traceparent(ctx); tp != "" {
		req.Header.Set(sdk.TraceparentKey, tp) // the kernel's trace goes on to the provider
	}
	resp, err := p.http.Do(req)
	rb.Release() // a stream does not hold its request while it is read
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, networkError(method+" "+path, err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10)) // the status alone still classifies
		e := classify(resp.StatusCode, resp.Header, b)
		p.log.Warn("openai request failed", "connection_id", ep.ConnectionID, "path", path, "status", resp.StatusCode, "category", string(e.Category))
		return nil, e
	}
	return resp, nil
}

// Stream runs a streamed Chat Completions request. Deltas are forwarded as
// they arrive; tool call fragments keep the endpoint's index. The terminal
// outcome is the returned finish reason, or an error: finish reason
// "length" becomes an output_limit error (after usage), an error object in
// the stream is classified, and a stream that ends before [DONE] is a
// network error after whatever arrived.
func (p *Provider) Stream(ctx context.Context, ep sdk.Endpoint, req sdk.Request, out sdk.StreamSender) (string, error) {
	resp, err := p.do(ctx, ep, http.MethodPost, "/chat/completions", buildChatRequest(ep, req, true))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()

	// Chunks that arrived together are sent to the kernel as one delta;
	// pending text goes out before every read that would wait for the
	// network, so nothing is held back.
	b := &batcher{out: out}
	ds := &deltaState{out: b, log: p.log, model: req.Model}
	var finish string
	done := false
	err = readSSE(resp.Body, b.flush, func(data []byte) error {
		if string(data) == "[DONE]" {
			done = true
			return errStop
		}
		var c chatChunk
		if err := decodeChunk(data, &c); err != nil {
			return httpwire.DecodeError("stream chunk", data, err)
		}
		if e := c.flatError(); e != nil {
			raw, _ := json.Marshal(map[string]*apiError{"error": e})
			return classify(0, nil, raw)
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				// n > 1 was never asked for: only the first choice is
				// the reply.
				ds.once("choice", "a stream chunk has a choice other than the first; it is ignored")
				continue
			}
			if err := ds.forward(ch.Delta); err != nil {
				return err
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				finish = *ch.FinishReason
			}
		}
		if c.Usage != nil {
			if err := b.Usage(c.Usage.toSDK(c.Model)); err != nil {
				return err
			}
		}
		return nil
	})
	if ferr := b.flush(); err == nil && ferr != nil {
		err = ferr
	}
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case err != nil:
		return "", err
	case !done:
		return "", &sdk.Error{Category: sdk.CategoryNetwork, Message: "stream ended before [DONE]"}
	}
	finish = normalizeFinish(finish)
	if ds.next > 0 && finish == sdk.FinishStop {
		finish = sdk.FinishToolCalls // some servers say stop after tool calls
	}
	if ds.refusal.Len() > 0 {
		if err := sdk.SendRefusal(out, ds.refusal.String()); err != nil {
			return "", err
		}
		if finish == sdk.FinishStop || finish == "" {
			finish = sdk.FinishRefusal
		}
	}
	if finish == sdk.FinishLength {
		return "", &sdk.Error{Category: sdk.CategoryOutputLimit, Message: "the model stopped at the output token limit"}
	}
	return finish, nil
}

var errStop = fmt.Errorf("stop")

// maxSSELine bounds one line of a stream.
const maxSSELine = 8 << 20

// sseReadBuffer is the largest read buffer of one stream: what one read
// takes from the network at most, so also the largest burst of chunks
// merged into one message (~100 typical chunk lines). Every stream in
// progress holds one, which starts at httpwire.InitialReadBuffer and grows
// only while reads fill it (httpwire.LineReader); longer lines are
// assembled across reads.
const sseReadBuffer = 16 << 10

// readSSE calls fn with the data of each Server-Sent Event of body. Before
// every read that would block (no complete line is buffered), it calls
// idle, when not nil: what was decoded so far can go out then.
func readSSE(body io.Reader, idle func() error, fn func(data []byte) error) error {
	br := httpwire.NewLineReader(body, httpwire.InitialReadBuffer, sseReadBuffer)
	var data, line []byte
	for {
		if idle != nil && !br.LineBuffered() {
			if err := idle(); err != nil {
				return err
			}
		}
		var err error
		line, err = readLine(br, line[:0])
		if err != nil && (err != io.EOF || len(line) == 0) {
			if err == io.EOF {
				break
			}
			return networkError("read stream", err)
		}
		eof := err == io.EOF
		switch {
		case len(line) == 0:
			if len(data) == 0 {
				continue
			}
			err := fn(data)
			data = data[:0]
			if err == errStop {
				return nil
			}
			if err != nil {
				return err
			}
		case bytes.HasPrefix(line, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		}
		// comments (":"), event:, id: and retry: lines are ignored
		if eof {
			break
		}
	}
	if len(data) > 0 { // last event without its blank line
		if err := fn(data); err != nil && err != errStop {
			return err
		}
	}
	return nil
}

// readLine appends the next line of br to buf, without its line ending.
// At the end of the input it returns the last, unterminated line (if any)
// with io.EOF.
func readLine(br *httpwire.LineReader, buf []byte) ([]byte, error) {
	buf, err := br.ReadLine(buf, maxSSELine)
	if err == httpwire.ErrLineTooLong {
		return nil, fmt.Errorf("a stream line is longer than %d bytes", maxSSELine)
	}
	buf = bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r"))
	return buf, err
}

// batcher is the StreamSender Stream writes through: consecutive text (or
// reasoning) deltas are merged until flush, so a burst of chunks read in
// one go crosses the plugin boundary as one message. Tool call deltas and
// usage go out at once, after what is pending, in order. The reply's first
// text or reasoning goes out alone, at once: the first token does not wait
// for the rest of its read (often dozens of chunks when the endpoint
// streams fast) to be decoded.
type batcher struct {
	out       sdk.StreamSender
	reasoning bool // pending holds reasoning, not text
	pending   []byte
	started   bool // a text or reasoning delta went out
}

func (b *batcher) flush() error {
	if len(b.pending) == 0 {
		return nil
	}
	s := string(b.pending)
	b.pending = b.pending[:0]
	b.started = true
	if b.reasoning {
		return b.out.Reasoning(s)
	}
	return b.out.Text(s)
}

func (b *batcher) add(reasoning bool, s string) error {
	if len(b.pending) > 0 && b.reasoning != reasoning {
		if err := b.flush(); err != nil {
			return err
		}
	}
	b.reasoning = reasoning
	b.pending = append(b.pending, s...)
	if !b.started && len(b.pending) > 0 {
		return b.flush()
	}
	return nil
}

func (b *batcher) Text(s string) error      { return b.add(false, s) }
func (b *batcher) Reasoning(s string) error { return b.add(true, s) }

func (b *batcher) ToolCall(d sdk.ToolCallDelta) error {
	if err := b.flush(); err != nil {
		return err
	}
	return b.out.ToolCall(d)
}

func (b *batcher) Usage(u sdk.Usage) error {
	if err := b.flush(); err != nil {
		return err
	}
	return b.out.Usage(u)
}

func (b *batcher) State(data []byte) error {
	if err := b.flush(); err != nil {
		return err
	}
	return b.out.State(data)
}
