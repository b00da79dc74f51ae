package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"

	"github.com/foya-dev/foya/plugins/sdk"
)

// modelObject is a model entry of GET /models or GET /models/{id}. OpenAI
// itself reports only the id; compatible services add what a model can do
// under their own names: OpenRouter context_length, top_provider,
// architecture and supported_parameters; vLLM max_model_len; others
// context_window. Only what a service reports is returned: a field it does
// not report stays unknown, never "no" (PRV-4).
type modelObject struct {
	ID            string `json:"id"`
	ContextLength *int64 `json:"context_length"`
	MaxModelLen   *int64 `json:"max_model_len"`
	ContextWindow *int64 `json:"context_window"`
	TopProvider   *struct {
		ContextLength       *int64 `json:"context_length"`
		MaxCompletionTokens *int64 `json:"max_completion_tokens"`
	} `json:"top_provider"`
	Architecture *struct {
		InputModalities  []string `json:"input_modalities"`
		OutputModalities []string `json:"output_modalities"`
	} `json:"architecture"`
	SupportedParameters []string `json:"supported_parameters"`
}

func (m modelObject) capabilities() sdk.Capabilities {
	var c sdk.Capabilities
	for _, v := range []*int64{m.ContextLength, m.MaxModelLen, m.ContextWindow} {
		if v != nil && *v > 0 && c.ContextWindow == nil {
			n := *v
			c.ContextWindow = &n
		}
	}
	if tp := m.TopProvider; tp != nil {
		if c.ContextWindow == nil && tp.ContextLength != nil && *tp.ContextLength > 0 {
			n := *tp.ContextLength
			c.ContextWindow = &n
		}
		if tp.MaxCompletionTokens != nil && *tp.MaxCompletionTokens > 0 {
			n := *tp.MaxCompletionTokens
			c.MaxOutputTokens = &n
		}
	}
	if a := m.Architecture; a != nil && len(a.InputModalities) > 0 {
		img := slices.Contains(a.InputModalities, "image")
		c.ImageInput = &img
	}
	if a := m.Architecture; a != nil && slices.Contains(a.OutputModalities, "image") {
		yes := true
		c.Generation = &sdk.Generation{Image: &yes}
	}
	if len(m.SupportedParameters) > 0 {
		// The list says whether tools work, not which reasoning efforts
		// exist, so efforts stay unknown.
		tools := slices.Contains(m.SupportedParameters, "tools")
		c.ToolCalling = &tools
	}
	return c
}

// ResolveCapabilities asks GET {base}/models/{id} what one model can do,
// on connections whose option resolve_capabilities is "model_endpoint"
// (services such as OpenRouter or vLLM that report capabilities there). On
// other connections it reports nothing (all unknown) without a request:
// OpenAI's own model object says nothing about capabilities, so asking it
// before every route's first request would only cost a round trip.
func (p *Provider) ResolveCapabilities(ctx context.Context, ep sdk.Endpoint, model string) (sdk.Capabilities, error) {
	if ep.Options[OptionResolveCapabilities] != "model_endpoint" {
		return sdk.Capabilities{}, nil
	}
	resp, err := p.do(ctx, ep, http.MethodGet, "/models/"+url.PathEscape(model), nil)
	if err != nil {
		return sdk.Capabilities{}, err
	}
	defer resp.Body.Close()
	var m modelObject
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxListBytes)).Decode(&m); err != nil {
		if ctx.Err() != nil {
			return sdk.Capabilities{}, ctx.Err()
		}
		return sdk.Capabilities{}, &sdk.Error{Category: sdk.CategoryServer, Message: "decode model " + model + ": " + err.Error()}
	}
	return m.capabilities(), nil
}
