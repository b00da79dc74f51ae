package anthropic

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/foya-dev/foya/plugins/sdk"
)

// ListModels pages through GET /v1/models. Each model gets the capabilities
// the API reports (max_input_tokens, max_tokens when present) completed by
// what this provider knows of the model family (see ResolveCapabilities).
func (p *Provider) ListModels(ctx context.Context, ep sdk.Endpoint) ([]sdk.Model, error) {
	var out []sdk.Model
	after := ""
	for page := 0; page < 20; page++ {
		q := url.Values{"limit": {"1000"}}
		if after != "" {
			q.Set("after_id", after)
		}
		resp, err := p.do(ctx, ep, http.MethodGet, "/v1/models?"+q.Encode(), nil)
		if err != nil {
			return nil, err
		}
		var r struct {
			Data []struct {
				ID             string `json:"id"`
				MaxInputTokens *int64 `json:"max_input_tokens"`
				MaxTokens      *int64 `json:"max_tokens"`
			} `json:"data"`
			HasMore bool   `json:"has_more"`
			LastID  string `json:"last_id"`
		}
		err = json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&r)
		resp.Body.Close()
		if err != nil {
			return nil, &sdk.Error{Category: sdk.CategoryServer, Message: "decode model list: " + err.Error()}
		}
		for _, m := range r.Data {
			c := known(m.ID)
			if m.MaxInputTokens != nil {
				c.ContextWindow = m.MaxInputTokens
			}
			if m.MaxTokens != nil {
				c.MaxOutputTokens = m.MaxTokens
			}
			out = append(out, sdk.Model{ID: m.ID, Capabilities: c})
		}
		if !r.HasMore || r.LastID == "" {
			break
		}
		after = r.LastID
	}
	return out, nil
}

// ResolveCapabilities answers from what this provider knows of Claude model
// families; unknown models get only what every Messages model has.
func (p *Provider) ResolveCapabilities(_ context.Context, _ sdk.Endpoint, model string) (sdk.Capabilities, error) {
	return known(model), nil
}

func ptr[T any](v T) *T { return &v }

// known describes a model by family. Every Claude model takes images and
// tools; context window 200k; thinking (reasoning efforts mapped onto
// budget_tokens) and the web search server tool from Claude 3.7 Sonnet on
// (web search also on Claude 3.5 Haiku).
func known(model string) sdk.Capabilities {
	c := sdk.Capabilities{ImageInput: ptr(true), ToolCalling: ptr(true), WebSearch: ptr(false)}
	m := strings.ToLower(model)
	if !strings.HasPrefix(m, "claude") {
		return sdk.Capabilities{ToolCalling: ptr(true)}
	}
	c.ContextWindow = ptr(int64(200000))
	var out int64
	thinking := true
	switch {
	case strings.Contains(m, "claude-3-5") || strings.Contains(m, "claude-3-haiku") || strings.Contains(m, "claude-3-opus") || strings.Contains(m, "claude-3-sonnet"):
		out, thinking = 8192, false
	case strings.Contains(m, "claude-3-7"):
		out = 64000
	case strings.Contains(m, "opus-4-0") || strings.Contains(m, "opus-4-1") || strings.HasPrefix(m, "claude-opus-4-2"):
		out = 32000
	case generationOf(m).adaptive && !strings.Contains(m, "haiku"):
		out = 128000 // Opus and Sonnet 4.6 and later
	default: // opus 4.5, sonnet 4.x, haiku 4.x
		out = 64000
	}
	c.MaxOutputTokens = ptr(out)
	if thinking {
		c.ReasoningEfforts = append([]string(nil), ReasoningEfforts...)
		if generationOf(m).xhigh {
			c.ReasoningEfforts = append(c.ReasoningEfforts, "xhigh")
		}
	}
	c.WebSearch = ptr(thinking || strings.Contains(m, "claude-3-5-haiku"))
	return c
}

// generation is what a model's generation changes in requests.
type generation struct {
	// adaptive: thinking is {"type":"adaptive"} with output_config.effort
	// (Claude Opus and Sonnet 4.6 and later, and the families after them);
	// budget_tokens, which Opus 4.7 refuses, only for earlier models.
	adaptive bool
	// xhigh: the effort "xhigh" exists (Opus 4.7 and later); elsewhere it
	// is sent as "max".
	xhigh bool
}

// generationOf places a model: Claude 3 and 2, and Opus, Sonnet and Haiku
// before 4.6, think with a budget; later versions of those families, and
// any other Claude family (Mythos, Fable, names yet unknown), adaptively.
// A model not named claude (a gateway's own name) keeps the budget.
func generationOf(model string) generation {
	m := strings.ToLower(model)
	if !strings.Contains(m, "claude") {
		return generation{}
	}
	if strings.Contains(m, "claude-3") || strings.Contains(m, "claude-2") || strings.Contains(m, "claude-instant") || strings.Contains(m, "claude-v") {
		return generation{}
	}
	family, v, ok := familyVersionOf(m)
	if !ok {
		return generation{adaptive: true, xhigh: true}
	}
	return generation{adaptive: v >= 406, xhigh: v >= 500 || (family == "opus" && v >= 407)}
}

// familyVersion matches "opus-4-6", "sonnet-5", "opus-4-7-20260101",
// "opus-4.7" (gateways spell versions with a dot): the family and its
// version (a minor of one or two digits, not a date).
var familyVersion = regexp.MustCompile(`(opus|sonnet|haiku)-(\d{1,2})(?:[-.](\d{1,2}))?(?:$|[^0-9])`)

// familyVersionOf is the Claude family named in m (lower case) and its
// version as major×100+minor (4.6 → 406); ok is false when m names none.
func familyVersionOf(m string) (family string, v int, ok bool) {
	g := familyVersion.FindStringSubmatch(m)
	if g == nil {
		return "", 0, false
	}
	major, _ := strconv.Atoi(g[2])
	minor, _ := strconv.Atoi(g[3]) // "" (no minor) is 0
	return g[1], major*100 + minor, true
}

// effort is the output_config effort of a session's reasoning effort.
func (g generation) effort(e string) string {
	switch e = strings.ToLower(e); e {
	case "minimal":
		return "low"
	case "xhigh":
		if !g.xhigh {
			return "max"
		}
	}
	return e
}
