package mcphost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foya-dev/foya/core"
)

// DefaultElicitationTimeout bounds how long a server's question waits for
// an answer before it is declined.
const DefaultElicitationTimeout = 10 * time.Minute

// inflight is one tool call running on a server: a question the server
// asks meanwhile (elicitation/create) goes to the person behind it.
type inflight struct {
	ctx       context.Context // the call's context (ends when the turn stops)
	asker     core.Asker
	sampler   core.Sampler
	samples   atomic.Int32 // sampling requests made during the call
	sessionID string
	timer     *callTimer
}

type inflightKey struct{}

// track records a running call until the returned func is called.
func (s *server) track(c *inflight) func() {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.calls = slices.DeleteFunc(s.calls, func(x *inflight) bool { return x == c })
		s.mu.Unlock()
	}
}

// caller is the call a server's request belongs to. MCP does not tie a
// request to the call that caused it, so it is the latest running call,
// when every running call is from the same session; otherwise nobody can
// be asked safely and why says so.
func (s *server) caller() (c *inflight, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.calls) == 0 {
		return nil, "no tool call of this server is running, so there is nobody to ask"
	}
	last := s.calls[len(s.calls)-1]
	for _, x := range s.calls {
		if x.sessionID != last.sessionID {
			return nil, "tool calls of several sessions are running on this server, so the request cannot be tied to one"
		}
	}
	if last.asker == nil {
		return nil, "the running tool call has nobody to ask"
	}
	return last, ""
}

// callerFor is the call a server's request belongs to, when it has what
// the request needs (has): a multi round-trip request (protocol
// 2026-07-28) is fulfilled within its call, whose context names it; a
// server-initiated one goes to the server's running call (caller). why
// says why there is none.
func (s *server) callerFor(ctx context.Context, has func(*inflight) bool) (c *inflight, why string) {
	c, _ = ctx.Value(inflightKey{}).(*inflight)
	if c == nil || !has(c) {
		c, why = s.caller()
	}
	if c != nil && !has(c) {
		return nil, "the running tool call cannot serve this request"
	}
	return c, why
}

// waitOn is the context of a request that waits for c's person or model:
// c's timeout paused until done, bounded by the elicitation timeout and
// ended with c's call.
func (s *server) waitOn(ctx context.Context, c *inflight) (context.Context, func()) {
	c.timer.pause()
	wctx, cancel := context.WithTimeout(ctx, s.m.cfg.ElicitationTimeout)
	stop := context.AfterFunc(c.ctx, cancel)
	return wctx, func() {
		stop()
		cancel()
		c.timer.resume()
	}
}

// elicit handles elicitation/create: it asks the person driving the
// session of the running call, with the call's timeout paused. A question
// nobody can be asked, or that is not answered within the elicitation
// timeout, is declined; one whose turn stops is cancelled.
func (s *server) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	q, err := elicitationOf(s.cfg.Name, req.Params)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	c, why := s.callerFor(ctx, func(c *inflight) bool { return c.asker != nil })
	if c == nil {
		s.log.Warn("mcp elicitation declined", "reason", why)
		return &mcp.ElicitResult{Action: core.ElicitDecline}, nil
	}
	ectx, done := s.waitOn(ctx, c)
	defer done()
	res, err := c.asker.Elicit(ectx, q)
	if err != nil {
		return nil, fmt.Errorf("ask the user: %w", err)
	}
	s.log.Info("mcp elicitation answered", "session_id", c.sessionID, "action", res.Action)
	out := &mcp.ElicitResult{Action: res.Action}
	if res.Action == core.ElicitAccept && q.Mode == core.ElicitForm {
		out.Content = res.Content
		if out.Content == nil {
			out.Content = map[string]any{}
		}
	}
	return out, nil
}

// Bounds of what an MCP server may ask a person (elicitationOf).
const (
	MaxElicitationMessage = 16 << 10
	MaxElicitationURL     = 4 << 10
	MaxElicitationSchema  = 64 << 10
	MaxElicitationFields  = 64
)

// elicitationOf turns the request into the question shown to the person:
// the message and the schema's fields in the schema's order.
//
// What a server asks is stored in the session's question_requested event,
// so it is bounded: a message over MaxElicitationMessage bytes, a URL that
// is not http(s) or over MaxElicitationURL bytes, a schema over
// MaxElicitationSchema bytes or with more than MaxElicitationFields fields
// is refused (invalid params), and nothing reaches the session.
func elicitationOf(server string, p *mcp.ElicitParams) (core.Elicitation, error) {
	q := core.Elicitation{Server: server, Mode: p.Mode, Message: p.Message, URL: p.URL, ElicitationID: p.ElicitationID}
	if q.Mode == "" {
		q.Mode = core.ElicitForm
	}
	if len(q.Message) > MaxElicitationMessage {
		return q, fmt.Errorf("message: %d bytes, over the limit of %d", len(q.Message), MaxElicitationMessage)
	}
	if q.URL != "" {
		u, err := url.Parse(q.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(q.URL) > MaxElicitationURL {
			return q, fmt.Errorf("url: an http(s) URL of at most %d bytes is required", MaxElicitationURL)
		}
	}
	if q.Mode != core.ElicitForm || p.RequestedSchema == nil {
		return q, nil
	}
	raw, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		return q, fmt.Errorf("requestedSchema: %w", err)
	}
	if len(raw) > MaxElicitationSchema {
		return q, fmt.Errorf("requestedSchema: %d bytes, over the limit of %d", len(raw), MaxElicitationSchema)
	}
	var schema struct {
		Properties map[string]wireProperty `json:"properties"`
		Required   []string                `json:"required"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		return q, fmt.Errorf("requestedSchema: %w", err)
	}
	if len(schema.Properties) > MaxElicitationFields {
		return q, fmt.Errorf("requestedSchema: %d fields, over the limit of %d", len(schema.Properties), MaxElicitationFields)
	}
	for _, name := range propertyOrder(raw) {
		w, ok := schema.Properties[name]
		if !ok {
			continue
		}
		q.Fields = append(q.Fields, w.field(name, slices.Contains(schema.Required, name)))
	}
	return q, nil
}

type wireChoice struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

type wireProperty struct {
	Type        string       `json:"type"`
	Title       string       `json:"title"`
	Description string       `json:"description"`
	Format      string       `json:"format"`
	Enum        []any        `json:"enum"`
	EnumNames   []string     `json:"enumNames"`
	OneOf       []wireChoice `json:"oneOf"`
	AnyOf       []wireChoice `json:"anyOf"`
	Items       *struct {
		Enum  []any        `json:"enum"`
		OneOf []wireChoice `json:"oneOf"`
		AnyOf []wireChoice `json:"anyOf"`
	} `json:"items"`
	Default   any      `json:"default"`
	Minimum   *float64 `json:"minimum"`
	Maximum   *float64 `json:"maximum"`
	MinLength *int     `json:"minLength"`
	MaxLength *int     `json:"maxLength"`
	MinItems  *int     `json:"minItems"`
	MaxItems  *int     `json:"maxItems"`
}

func (w wireProperty) field(name string, required bool) core.ElicitationField {
	f := core.ElicitationField{
		Name: name, Title: w.Title, Description: w.Description, Type: w.Type, Required: required, Format: w.Format,
		Default: w.Default, Minimum: w.Minimum, Maximum: w.Maximum, MinLength: w.MinLength, MaxLength: w.MaxLength,
		MinItems: w.MinItems, MaxItems: w.MaxItems,
	}
	if f.Type == "" {
		f.Type = "string"
	}
	enum, names, choices := w.Enum, w.EnumNames, append(w.OneOf, w.AnyOf...)
	if w.Items != nil {
		enum, names, choices = w.Items.Enum, nil, append(w.Items.OneOf, w.Items.AnyOf...)
	}
	for i, v := range enum {
		o := core.ElicitationOption{Value: fmt.Sprint(v)}
		if i < len(names) {
			o.Title = names[i]
		}
		f.Options = append(f.Options, o)
	}
	for _, c := range choices {
		f.Options = append(f.Options, core.ElicitationOption{Value: fmt.Sprint(c.Const), Title: c.Title})
	}
	return f
}

// propertyOrder lists the keys of the schema's properties in their order.
func propertyOrder(raw []byte) []string {
	var top struct {
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(raw, &top) != nil || len(top.Properties) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(top.Properties))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

// callTimer bounds a tool call, paused while the server waits for a
// person (an elicitation): the time a person takes is not the server's.
type callTimer struct {
	mu      sync.Mutex
	left    time.Duration
	started time.Time
	paused  int
	t       *time.Timer
	cancel  context.CancelCauseFunc
}

// startCallTimer returns ctx ended with errCallTimeout after d of unpaused
// time; stop releases it.
func startCallTimer(ctx context.Context, d time.Duration) (context.Context, *callTimer) {
	cctx, cancel := context.WithCancelCause(ctx)
	ct := &callTimer{left: d, started: time.Now(), cancel: cancel}
	ct.t = time.AfterFunc(d, func() { cancel(errCallTimeout) })
	return cctx, ct
}

func (ct *callTimer) pause() {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if ct.paused++; ct.paused == 1 && ct.t.Stop() {
		ct.left -= time.Since(ct.started)
	}
}

func (ct *callTimer) resume() {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if ct.paused--; ct.paused == 0 {
		ct.started = time.Now()
		ct.t.Reset(max(ct.left, 0))
	}
}

func (ct *callTimer) stop() {
	ct.t.Stop()
	ct.cancel(nil)
}
