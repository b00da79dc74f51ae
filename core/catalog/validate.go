package catalog

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/foya-dev/foya/core"
)

// Video generation protocols a video connection may name (PRV-2, PRV-13).
// Only one is known today: "openai_video", the OpenAI videos API
// (POST /videos, poll, download). The set grows with the providers that
// implement video generation.
const VideoProtocolOpenAI = "openai_video"

// VideoProtocols lists the known video generation protocols.
func VideoProtocols() []string { return []string{VideoProtocolOpenAI} }

func knownVideoProtocol(p string) bool {
	return slices.Contains(VideoProtocols(), p)
}

func knownConnectionType(t core.ConnectionType) bool {
	switch t {
	case core.ConnLanguage, core.ConnImage, core.ConnVideo:
		return true
	}
	return false
}

// keyEnvNameRE is the rule every env: reference follows unless the operator
// allows the name explicitly (`foya serve --allow-key-env NAME`): only
// variables named like API keys, so that a connection cannot send PATH, HOME
// or AWS_SECRET_ACCESS_KEY to a base URL of the caller's choice.
var keyEnvNameRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*_API_KEY$`)

// KeyEnvRule describes keyEnvNameRE for error messages and docs.
const KeyEnvRule = "env: references may name only variables matching ^[A-Z][A-Z0-9_]*_API_KEY$ or allowed with `foya serve --allow-key-env NAME`"

// keyEnvPolicy says which variables env: references may read.
type keyEnvPolicy map[string]bool

func newKeyEnvPolicy(allowed []string) keyEnvPolicy {
	p := keyEnvPolicy{}
	for _, n := range allowed {
		p[n] = true
	}
	return p
}

// allows reports whether env:name may be used.
func (p keyEnvPolicy) allows(name string) bool {
	return keyEnvNameRE.MatchString(name) || p[name]
}

// Provider option limits.
var optionKeyRE = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

const maxOptions = 32

// validateConnection checks a connection as it would be stored (PRV-13) and
// returns a BAD_INPUT error naming every offending field ("input.<field>"),
// or nil. Messages never contain the API key or the base URL (which could
// embed credentials).
func validateConnection(c core.Connection, providers core.ProviderLookup, envs keyEnvPolicy) error {
	var p core.Problems
	if strings.TrimSpace(c.Name) == "" {
		p.Add("input.name", "must not be empty")
	}
	validateConnectionText(&p, c)
	if !knownConnectionType(c.Type) {
		p.Add("input.type", "unknown connection type %q (known: language, image, video)", c.Type)
	}
	if c.AuthKind != core.AuthAPIKey {
		p.Add("input.authKind", "unknown auth kind %q (known: api_key)", c.AuthKind)
	}
	if c.ProviderKind == "" {
		p.Add("input.providerKind", "must not be empty")
	} else if providers != nil {
		if _, err := providers.Provider(c.ProviderKind); err != nil {
			p.Add("input.providerKind", "unknown provider kind %q: %s", c.ProviderKind, err.Error())
		}
	}
	switch {
	case c.Type == core.ConnVideo && c.VideoProtocol == "":
		p.Add("input.videoProtocol", "required for video connections (known: %s)", strings.Join(VideoProtocols(), ", "))
	case c.Type == core.ConnVideo && !knownVideoProtocol(c.VideoProtocol):
		p.Add("input.videoProtocol", "unknown video protocol %q (known: %s)", c.VideoProtocol, strings.Join(VideoProtocols(), ", "))
	case c.Type != core.ConnVideo && c.VideoProtocol != "":
		p.Add("input.videoProtocol", "only video connections name a video protocol")
	}
	validateBaseURL(&p, c.BaseURL)
	if name, ok := strings.CutPrefix(c.APIKey, core.EnvKeyPrefix); ok {
		switch {
		case name == "":
			p.Add("input.apiKey", "an env: reference needs a variable name")
		case !envs.allows(name):
			p.Add("input.apiKey", "env:%s is not allowed: %s", name, KeyEnvRule)
		}
	}
	if c.Order < 0 {
		p.Add("input.order", "must not be negative")
	}
	if len(c.Options) > maxOptions {
		p.Add("input.options", "at most %d options", maxOptions)
	}
	for k, val := range c.Options {
		if !optionKeyRE.MatchString(k) {
			p.Add("input.options", "key %q: lowercase letters, digits and _ (at most 64)", k)
		}
		if len(val) > 1024 {
			p.Add("input.options", "value of %q: at most 1024 bytes", k)
		}
	}
	seen := map[string]int{}
	for i, m := range c.Models {
		field := fmt.Sprintf("input.models[%d]", i)
		if strings.TrimSpace(m.ID) == "" {
			p.Add(field+".id", "must not be empty")
		} else if j, dup := seen[m.ID]; dup {
			p.Add(field+".id", "duplicate model id %q (also models[%d])", m.ID, j)
		} else {
			seen[m.ID] = i
		}
		validateCapabilities(&p, field+".capabilities", m.Capabilities)
	}
	return p.Err()
}

func validateBaseURL(p *core.Problems, raw string) {
	const field = "input.baseUrl"
	if strings.TrimSpace(raw) == "" {
		p.Add(field, "must not be empty; give the endpoint's http or https URL, e.g. https://api.openai.com/v1")
		return
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		p.Add(field, "must be an http or https URL with a host")
		return
	}
	if u.User != nil {
		p.Add(field, "must not contain credentials; put the key in apiKey")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		p.Add(field, "must not contain a query or fragment")
	}
}

func validateCapabilities(p *core.Problems, field string, c core.Capabilities) {
	for _, lim := range []struct {
		name string
		v    *int64
	}{
		{"contextWindow", c.ContextWindow},
		{"maxInputTokens", c.MaxInputTokens},
		{"maxOutputTokens", c.MaxOutputTokens},
	} {
		if lim.v != nil && *lim.v < 0 {
			p.Add(field+"."+lim.name, "must not be negative (got %d)", *lim.v)
		}
	}
	for i, e := range c.ReasoningEfforts {
		if strings.TrimSpace(e) == "" {
			p.Add(fmt.Sprintf("%s.reasoningEfforts[%d]", field, i), "must not be empty")
		}
	}
	validatePrices(p, field, c.Prices)
	if c.ContextWindow == nil || *c.ContextWindow < 0 {
		return
	}
	window := *c.ContextWindow
	if c.MaxInputTokens != nil && *c.MaxInputTokens > window {
		p.Add(field+".maxInputTokens", "%d is above the context window of %d", *c.MaxInputTokens, window)
	}
	if c.MaxOutputTokens != nil && *c.MaxOutputTokens > window {
		p.Add(field+".maxOutputTokens", "%d is above the context window of %d", *c.MaxOutputTokens, window)
	}
}

// validateConnectionText checks the bounded text of a connection: its name,
// key and model ids, and the number of models.
func validateConnectionText(p *core.Problems, c core.Connection) {
	if n := utf8.RuneCountInString(c.Name); n > core.MaxConnectionNameChars {
		p.Add("input.name", "%d characters is over the limit of %d", n, core.MaxConnectionNameChars)
	} else if msg := core.DisplayTextProblem(c.Name); msg != "" {
		p.Add("input.name", "%s", msg)
	}
	if len(c.APIKey) > core.MaxAPIKeyBytes {
		p.Add("input.apiKey", "%d bytes is over the limit of %d bytes", len(c.APIKey), core.MaxAPIKeyBytes)
	}
	if len(c.Models) > core.MaxModelsPerConnection {
		p.Add("input.models", "%d models is over the limit of %d per connection", len(c.Models), core.MaxModelsPerConnection)
	}
	for i, m := range c.Models {
		field := fmt.Sprintf("input.models[%d].id", i)
		if n := utf8.RuneCountInString(m.ID); n > core.MaxModelIDChars {
			p.Add(field, "%d characters is over the limit of %d", n, core.MaxModelIDChars)
		} else if msg := core.DisplayTextProblem(m.ID); msg != "" {
			p.Add(field, "%s", msg)
		}
	}
}
