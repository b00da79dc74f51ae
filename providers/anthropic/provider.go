// Package anthropic is the built-in Anthropic Messages provider
// (providerKind "anthropic"): streaming text, extended thinking (thinking
// deltas as reasoning; signed and redacted thinking blocks kept as
// provider-native state and sent back verbatim across tool use), tool use,
// images, prompt caching with cache_control breakpoints, usage with cache
// reads and writes, classified errors, non-streaming completion, the model
// list, native web search and native (server-side) compaction. It speaks the documented wire format with net/http and
// encoding/json (exact control of what is sent back) and is written only
// against plugins/sdk, like a third-party plugin; the kernel binary serves it
// as the "anthropic" built-in.
//
// Base URL: the API root, https://api.anthropic.com by default; /v1/messages
// and /v1/models are appended (a base URL that already ends in /v1 is
// accepted too).
package anthropic

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/internal/httpwire"
)

// Kind is the provider kind connections name.
const Kind = "anthropic"

// Version of this provider.
const Version = "0.1.0"

// DefaultBaseURL is used when a connection leaves the base URL empty.
const DefaultBaseURL = "https://api.anthropic.com"

// APIVersion is the anthropic-version header sent with every request.
const APIVersion = "2023-06-01"

// Endpoint options (connection options) this provider reads.
const (
	// OptionBeta is sent as the anthropic-beta header, e.g.
	// "interleaved-thinking-2025-05-14".
	OptionBeta = "anthropic_beta"
	// OptionCache = "off" sends no cache_control breakpoints.
	OptionCache = "prompt_cache"
)

// DefaultMaxTokens is max_tokens when the model declares no output limit.
const DefaultMaxTokens = 8192

// Config configures a Provider.
type Config struct {
	// HTTPClient defaults to a client without an overall timeout (streams
	// are long; cancellation comes from ctx).
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// Provider implements sdk.Provider with the completer, detailed completer,
// model lister, capability resolver, web search and native compactor
// capabilities.
type Provider struct {
	http *http.Client
	log  *slog.Logger
}

var (
	_ sdk.Provider           = (*Provider)(nil)
	_ sdk.Completer          = (*Provider)(nil)
	_ sdk.DetailedCompleter  = (*Provider)(nil)
	_ sdk.ModelLister        = (*Provider)(nil)
	_ sdk.CapabilityResolver = (*Provider)(nil)
	_ sdk.WebSearcher        = (*Provider)(nil)
	_ sdk.NativeCompactor    = (*Provider)(nil)
)

// New returns a Provider.
func New(cfg Config) *Provider {
	return &Provider{http: httpwire.Client(cfg.HTTPClient), log: httpwire.Logger(cfg.Logger)}
}

// Describe declares the optional capabilities.
func (p *Provider) Describe() sdk.ProviderInfo {
	return sdk.ProviderInfo{Kind: Kind, Version: Version, Capabilities: []sdk.Capability{
		sdk.CapCompleter, sdk.CapDetailedCompleter, sdk.CapModelLister, sdk.CapCapabilityResolver, sdk.CapWebSearch,
		sdk.CapNativeCompactor,
	}}
}

// apiURL joins the base URL and a path that starts with /v1/.
func apiURL(ep sdk.Endpoint, path string) string {
	base := strings.TrimRight(ep.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	if strings.HasSuffix(base, "/v1") {
		path = strings.TrimPrefix(path, "/v1")
	}
	return base + path
}

// do sends one request and returns the response when the status is 2xx;
// otherwise a classified error.
func (p *Provider) do(ctx context.Context, ep sdk.Endpoint, method, path string, body any) (*http.Response, error) {
	return p.doBeta(ctx, ep, method, path, body)
}

// doBeta is do with beta features the request needs besides the
// connection's own (the anthropic_beta option), in one anthropic-beta
// header.
func (p *Provider) doBeta(ctx context.Context, ep sdk.Endpoint, method, path string, body any, betas ...string) (*http.Response, error) {
	h := http.Header{}
	h.Set("anthropic-version", APIVersion)
	if ep.APIKey != "" {
		h.Set("x-api-key", ep.APIKey)
	}
	if b := betaHeader(ep.Options[OptionBeta], betas); b != "" {
		h.Set("anthropic-beta", b)
	}
	return httpwire.Do(ctx, p.http, httpwire.Request{
		Method: method, URL: apiURL(ep, path), Path: path, Body: body, Header: h, Secret: ep.APIKey,
	}, classify)
}

// betaHeader joins the connection's betas and the request's, each once.
func betaHeader(option string, betas []string) string {
	var out []string
	seen := map[string]bool{}
	for _, b := range append(strings.Split(option, ","), betas...) {
		if b = strings.TrimSpace(b); b != "" && !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	return strings.Join(out, ",")
}

// requestBetas are the betas body needs: the compaction beta when a
// compaction block goes back.
func requestBetas(body *messagesRequest) []string {
	if body.compaction {
		return []string{CompactBeta}
	}
	return nil
}

// Stream runs one streamed Messages request.
func (p *Provider) Stream(ctx context.Context, ep sdk.Endpoint, req sdk.Request, out sdk.StreamSender) (string, error) {
	body, err := buildRequest(ep, req, true)
	if err != nil {
		return "", err
	}
	if body.Thinking == nil && req.ReasoningEffort != "" && thinkingBudget(req.ReasoningEffort) > 0 {
		p.log.Info("thinking left off for this request: the pending tool round has no thinking block to continue from", "model", req.Model)
	}
	resp, err := p.doBeta(ctx, ep, http.MethodPost, "/v1/messages", body, requestBetas(body)...)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	return readStream(ctx, resp.Body, out)
}

// Complete answers without streaming (titles, summaries).
func (p *Provider) Complete(ctx context.Context, ep sdk.Endpoint, req sdk.Request) (sdk.Completion, error) {
	return p.CompleteDetailed(ctx, ep, req)
}

// CompleteDetailed answers without streaming, with finish reason and usage.
func (p *Provider) CompleteDetailed(ctx context.Context, ep sdk.Endpoint, req sdk.Request) (sdk.Completion, error) {
	req.ReasoningEffort = "" // short completions never think
	body, err := buildRequest(ep, req, false)
	if err != nil {
		return sdk.Completion{}, err
	}
	if generationOf(req.Model).adaptive {
		// Some of these models think unless told not to.
		body.Thinking = &thinkingConfig{Type: "disabled"}
	}
	resp, err := p.doBeta(ctx, ep, http.MethodPost, "/v1/messages", body, requestBetas(body)...)
	if err != nil {
		return sdk.Completion{}, err
	}
	defer resp.Body.Close()
	var r struct {
		Model      string `json:"model"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Usage wireUsage `json:"usage"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 32<<20)).Decode(&r); err != nil {
		return sdk.Completion{}, &sdk.Error{Category: sdk.CategoryServer, Message: "decode response: " + err.Error()}
	}
	var text strings.Builder
	for _, c := range r.Content {
		if c.Type == "text" {
			text.WriteString(c.Text)
		}
	}
	u := r.Usage.sdk(r.Model)
	return sdk.Completion{Text: text.String(), FinishReason: finishReason(r.StopReason), Usage: &u}, nil
}

// finishReason maps Anthropic stop reasons onto the kernel's vocabulary.
func finishReason(s string) string {
	switch s {
	case "end_turn", "stop_sequence", "":
		return "stop"
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "refusal":
		return sdk.FinishRefusal
	}
	return s // e.g. pause_turn, compaction
}
