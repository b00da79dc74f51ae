// Package responses is the built-in OpenAI Responses API provider
// (providerKind "openai-responses"): streamed text, reasoning summaries as
// reasoning, function calls, stateless operation (store: false) with
// encrypted reasoning items kept as provider-native state and replayed on
// the next requests of the same route, the native context compactor
// (POST /responses/compact), native web search, usage with cached tokens and
// classified errors. It speaks the documented wire format with net/http and
// encoding/json and is written only against plugins/sdk; the kernel binary
// serves it as the "openai-responses" built-in.
//
// Base URL: the API root including the version, https://api.openai.com/v1
// by default; /responses, /responses/compact and /models are appended.
package responses

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
const Kind = "openai-responses"

// Version of this provider.
const Version = "0.1.0"

// DefaultBaseURL is used when a connection leaves the base URL empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// Connection options this provider reads.
const (
	// OptionEncryptedReasoning = "on" or "off" forces asking for encrypted
	// reasoning items; by default they are asked for when a reasoning
	// effort is set or the model name is a reasoning family (o-series,
	// gpt-5, codex), because other models reject the include.
	OptionEncryptedReasoning = "encrypted_reasoning"
	// OptionNativeCompaction = "off" makes compaction use the kernel's
	// portable summary instead of /responses/compact.
	OptionNativeCompaction = "native_compaction"
	// OptionReasoningSummary is the reasoning.summary value ("auto" by
	// default, "concise", "detailed", or "off" to ask for none).
	OptionReasoningSummary = "reasoning_summary"
)

// Config configures a Provider.
type Config struct {
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// Provider implements sdk.Provider with the completer, detailed completer,
// model lister, web search and native compactor capabilities.
type Provider struct {
	http *http.Client
	log  *slog.Logger
}

var (
	_ sdk.Provider          = (*Provider)(nil)
	_ sdk.DetailedCompleter = (*Provider)(nil)
	_ sdk.ModelLister       = (*Provider)(nil)
	_ sdk.WebSearcher       = (*Provider)(nil)
	_ sdk.NativeCompactor   = (*Provider)(nil)
)

// New returns a Provider.
func New(cfg Config) *Provider {
	return &Provider{http: httpwire.Client(cfg.HTTPClient), log: httpwire.Logger(cfg.Logger)}
}

// Describe declares the optional capabilities.
func (p *Provider) Describe() sdk.ProviderInfo {
	return sdk.ProviderInfo{Kind: Kind, Version: Version, Capabilities: []sdk.Capability{
		sdk.CapCompleter, sdk.CapDetailedCompleter, sdk.CapModelLister, sdk.CapWebSearch, sdk.CapNativeCompactor,
	}}
}

func baseURL(ep sdk.Endpoint) string {
	if ep.BaseURL == "" {
		return DefaultBaseURL
	}
	return strings.TrimRight(ep.BaseURL, "/")
}

func (p *Provider) do(ctx context.Context, ep sdk.Endpoint, method, path string, body any) (*http.Response, error) {
	h := http.Header{}
	if ep.APIKey != "" {
		h.Set("Authorization", "Bearer "+ep.APIKey)
	}
	return httpwire.Do(ctx, p.http, httpwire.Request{
		Method: method, URL: baseURL(ep) + path, Path: path, Body: body, Header: h, Secret: ep.APIKey,
	}, classify)
}

// Stream runs one streamed Responses request.
func (p *Provider) Stream(ctx context.Context, ep sdk.Endpoint, req sdk.Request, out sdk.StreamSender) (string, error) {
	body, err := buildRequest(ep, req, true)
	if err != nil {
		return "", err
	}
	resp, err := p.do(ctx, ep, http.MethodPost, "/responses", body)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	return readStream(ctx, p.log, resp.Body, out)
}

// Complete answers without streaming.
func (p *Provider) Complete(ctx context.Context, ep sdk.Endpoint, req sdk.Request) (sdk.Completion, error) {
	return p.CompleteDetailed(ctx, ep, req)
}

// CompleteDetailed answers without streaming, with finish reason and usage.
func (p *Provider) CompleteDetailed(ctx context.Context, ep sdk.Endpoint, req sdk.Request) (sdk.Completion, error) {
	body, err := buildRequest(ep, req, false)
	if err != nil {
		return sdk.Completion{}, err
	}
	resp, err := p.do(ctx, ep, http.MethodPost, "/responses", body)
	if err != nil {
		return sdk.Completion{}, err
	}
	defer resp.Body.Close()
	var r response
	if err := json.NewDecoder(io.LimitReader(resp.Body, 32<<20)).Decode(&r); err != nil {
		return sdk.Completion{}, &sdk.Error{Category: sdk.CategoryServer, Message: "decode response: " + err.Error()}
	}
	if r.Status == "failed" && r.Error != nil {
		return sdk.Completion{}, classifyObject(0, nil, r.Error)
	}
	text, _ := r.text()
	u := r.Usage.sdk(r.Model)
	return sdk.Completion{Text: text, FinishReason: r.finishReason(), Usage: &u}, nil
}

// CompactContext compacts the request's history with POST
// /responses/compact. The returned items (the user messages kept verbatim
// and an encrypted compaction item) are the state that stands for the
// history in later requests. An endpoint without the route (404, 405, 501)
// or the connection option native_compaction=off answers "unavailable", and
// the kernel falls back to its portable summary.
func (p *Provider) CompactContext(ctx context.Context, ep sdk.Endpoint, req sdk.Request) (sdk.Completion, error) {
	if strings.EqualFold(ep.Options[OptionNativeCompaction], "off") {
		return sdk.Completion{}, sdk.Errorf(sdk.CategoryUnavailable, "native compaction is off for this connection")
	}
	full, err := buildRequest(ep, req, false)
	if err != nil {
		return sdk.Completion{}, err
	}
	body := map[string]any{"model": full.Model, "input": full.Input}
	if full.Instructions != "" {
		body["instructions"] = full.Instructions
	}
	resp, err := p.do(ctx, ep, http.MethodPost, "/responses/compact", body)
	if err != nil {
		if e, ok := err.(*sdk.Error); ok && (e.StatusCode == http.StatusNotFound || e.StatusCode == http.StatusMethodNotAllowed || e.StatusCode == http.StatusNotImplemented) {
			e.Category = sdk.CategoryUnavailable
			e.Message = "the endpoint has no /responses/compact: " + e.Message
		}
		return sdk.Completion{}, err
	}
	defer resp.Body.Close()
	var r struct {
		Model  string            `json:"model"`
		Output []json.RawMessage `json:"output"`
		Usage  wireUsage         `json:"usage"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 32<<20)).Decode(&r); err != nil {
		return sdk.Completion{}, &sdk.Error{Category: sdk.CategoryServer, Message: "decode compaction: " + err.Error()}
	}
	if len(r.Output) == 0 {
		return sdk.Completion{}, sdk.Errorf(sdk.CategoryServer, "the compaction returned no items")
	}
	u := r.Usage.sdk(r.Model)
	return sdk.Completion{State: httpwire.Marshal(nativeState{Items: r.Output}), Usage: &u, FinishReason: "stop"}, nil
}
