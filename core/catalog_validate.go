package core

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Video generation protocols a video connection may name (PRV-2, PRV-13).
// Only one is known today: "openai_video", the OpenAI videos API
// (POST /videos, poll, download). The set grows with the providers that
// implement video generation.
const VideoProtocolOpenAI = "openai_video"

// VideoProtocols lists the known video generation protocols.
func VideoProtocols() []string { return []string{VideoProtocolOpenAI} }

func knownVideoProtocol(p string) bool {
	for _, k := range VideoProtocols() {
		if p == k {
			return true
		}
	}
	return false
}

func knownConnectionType(t ConnectionType) bool {
	switch t {
	case ConnLanguage, ConnImage, ConnVideo:
		return true
	}
	return false
}

// envKeyPrefix marks an API key that is read from the kernel's environment
// at call time: "env:OPENAI_API_KEY".
const envKeyPrefix = "env:"

// keyEnvNameRE is the rule every env: reference follows unless the operator
// allows the name explicitly (`foya serve --allow-key-env NAME`): only
// variables named like API keys, so that a connection cannot send PATH, HOME
// or AWS_SECRET_ACCESS_KEY to a base URL of the caller's choice.
// envNameRE matches an environment variable name.
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

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

// problems collects validation messages; each names the field it is about.
type problems []string

func (p *problems) add(field, format string, args ...any) {
	*p = append(*p, field+": "+fmt.Sprintf(format, args...))
}

// maxProblems is how many problems one error lists.
const maxProblems = 8

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	if len(p) > maxProblems {
		return Errorf(CodeBadInput, "%s; and %d more problems", strings.Join(p[:maxProblems], "; "), len(p)-maxProblems)
	}
	return Errorf(CodeBadInput, "%s", strings.Join(p, "; "))
}

// validateConnection checks a connection as it would be stored (PRV-13) and
// returns a BAD_INPUT error naming every offending field ("input.<field>"),
// or nil. Messages never contain the API key or the base URL (which could
// embed credentials).
func validateConnection(c Connection, providers ProviderLookup, envs keyEnvPolicy) error {
	var p problems
	if strings.TrimSpace(c.Name) == "" {
		p.add("input.name", "must not be empty")
	}
	validateConnectionText(&p, c)
	if !knownConnectionType(c.Type) {
		p.add("input.type", "unknown connection type %q (known: language, image, video)", c.Type)
	}
	if c.AuthKind != AuthAPIKey {
		p.add("input.authKind", "unknown auth kind %q (known: api_key)", c.AuthKind)
	}
	if c.ProviderKind == "" {
		p.add("input.providerKind", "must not be empty")
	} else if providers != nil {
		if _, err := providers.Provider(c.ProviderKind); err != nil {
			p.add("input.providerKind", "unknown provider kind %q: %s", c.ProviderKind, err.Error())
		}
	}
	switch {
	case c.Type == ConnVideo && c.VideoProtocol == "":
		p.add("input.videoProtocol", "required for video connections (known: %s)", strings.Join(VideoProtocols(), ", "))
	case c.Type == ConnVideo && !knownVideoProtocol(c.VideoProtocol):
		p.add("input.videoProtocol", "unknown video protocol %q (known: %s)", c.VideoProtocol, strings.Join(VideoProtocols(), ", "))
	case c.Type != ConnVideo && c.VideoProtocol != "":
		p.add("input.videoProtocol", "only video connections name a video protocol")
	}
	validateBaseURL(&p, c.BaseURL)
	if name, ok := strings.CutPrefix(c.APIKey, envKeyPrefix); ok {
		switch {
		case name == "":
			p.add("input.apiKey", "an env: reference needs a variable name")
		case !envs.allows(name):
			p.add("input.apiKey", "env:%s is not allowed: %s", name, KeyEnvRule)
		}
	}
	if c.Order < 0 {
		p.add("input.order", "must not be negative")
	}
	if len(c.Options) > maxOptions {
		p.add("input.options", "at most %d options", maxOptions)
	}
	for k, val := range c.Options {
		if !optionKeyRE.MatchString(k) {
			p.add("input.options", "key %q: lowercase letters, digits and _ (at most 64)", k)
		}
		if len(val) > 1024 {
			p.add("input.options", "value of %q: at most 1024 bytes", k)
		}
	}
	seen := map[string]int{}
	for i, m := range c.Models {
		field := fmt.Sprintf("input.models[%d]", i)
		if strings.TrimSpace(m.ID) == "" {
			p.add(field+".id", "must not be empty")
		} else if j, dup := seen[m.ID]; dup {
			p.add(field+".id", "duplicate model id %q (also models[%d])", m.ID, j)
		} else {
			seen[m.ID] = i
		}
		validateCapabilities(&p, field+".capabilities", m.Capabilities)
	}
	return p.err()
}

func validateBaseURL(p *problems, raw string) {
	const field = "input.baseUrl"
	if strings.TrimSpace(raw) == "" {
		p.add(field, "must not be empty; give the endpoint's http or https URL, e.g. https://api.openai.com/v1")
		return
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		p.add(field, "must be an http or https URL with a host")
		return
	}
	if u.User != nil {
		p.add(field, "must not contain credentials; put the key in apiKey")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		p.add(field, "must not contain a query or fragment")
	}
}

func validateCapabilities(p *problems, field string, c Capabilities) {
	for _, lim := range []struct {
		name string
		v    *int64
	}{
		{"contextWindow", c.ContextWindow},
		{"maxInputTokens", c.MaxInputTokens},
		{"maxOutputTokens", c.MaxOutputTokens},
	} {
		if lim.v != nil && *lim.v < 0 {
			p.add(field+"."+lim.name, "must not be negative (got %d)", *lim.v)
		}
	}
	for i, e := range c.ReasoningEfforts {
		if strings.TrimSpace(e) == "" {
			p.add(fmt.Sprintf("%s.reasoningEfforts[%d]", field, i), "must not be empty")
		}
	}
	validatePrices(p, field, c.Prices)
	if c.ContextWindow == nil || *c.ContextWindow < 0 {
		return
	}
	window := *c.ContextWindow
	if c.MaxInputTokens != nil && *c.MaxInputTokens > window {
		p.add(field+".maxInputTokens", "%d is above the context window of %d", *c.MaxInputTokens, window)
	}
	if c.MaxOutputTokens != nil && *c.MaxOutputTokens > window {
		p.add(field+".maxOutputTokens", "%d is above the context window of %d", *c.MaxOutputTokens, window)
	}
}
