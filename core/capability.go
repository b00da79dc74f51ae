package core

import (
	"context"
	"slices"
	"strings"
	"time"
)

// ImageInputAllowed reports whether image input may be sent to a model with
// capabilities c (PRV-4). Unknown (nil) means allowed: only an explicit
// "no image input" rejects an image before the request is sent.
func ImageInputAllowed(c Capabilities) bool {
	return c.ImageInput == nil || *c.ImageInput
}

// cloneCapabilities returns a deep copy of c so that callers cannot change
// the catalog's state through shared pointers.
func cloneCapabilities(c Capabilities) Capabilities {
	out := Capabilities{
		ContextWindow:   clonePtr(c.ContextWindow),
		MaxInputTokens:  clonePtr(c.MaxInputTokens),
		MaxOutputTokens: clonePtr(c.MaxOutputTokens),
		ImageInput:      clonePtr(c.ImageInput),
		ToolCalling:     clonePtr(c.ToolCalling),
		WebSearch:       clonePtr(c.WebSearch),
		Prices:          clonePrices(c.Prices),
	}
	if c.ReasoningEfforts != nil {
		out.ReasoningEfforts = append([]string{}, c.ReasoningEfforts...)
	}
	if c.Generation != nil {
		out.Generation = &Generation{
			Image: clonePtr(c.Generation.Image),
			Video: clonePtr(c.Generation.Video),
			Audio: clonePtr(c.Generation.Audio),
		}
	}
	return out
}

// mergeCapabilities fills the unknown fields of stored with the values of
// reported; a value already stored (declared by the user or kept from an
// earlier refresh) always wins.
func mergeCapabilities(stored, reported Capabilities) Capabilities {
	out := cloneCapabilities(stored)
	r := cloneCapabilities(reported)
	if out.ContextWindow == nil {
		out.ContextWindow = r.ContextWindow
	}
	if out.MaxInputTokens == nil {
		out.MaxInputTokens = r.MaxInputTokens
	}
	if out.MaxOutputTokens == nil {
		out.MaxOutputTokens = r.MaxOutputTokens
	}
	if out.ImageInput == nil {
		out.ImageInput = r.ImageInput
	}
	if out.ToolCalling == nil {
		out.ToolCalling = r.ToolCalling
	}
	if len(out.ReasoningEfforts) == 0 {
		out.ReasoningEfforts = r.ReasoningEfforts
	}
	if out.WebSearch == nil {
		out.WebSearch = r.WebSearch
	}
	if out.Prices == nil {
		out.Prices = r.Prices
	}
	switch {
	case out.Generation == nil:
		out.Generation = r.Generation
	case r.Generation != nil:
		if out.Generation.Image == nil {
			out.Generation.Image = r.Generation.Image
		}
		if out.Generation.Video == nil {
			out.Generation.Video = r.Generation.Video
		}
		if out.Generation.Audio == nil {
			out.Generation.Audio = r.Generation.Audio
		}
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// resolvedCapsTTL is how long capabilities a provider resolved are reused;
// a failed resolution is retried after resolveRetry.
const (
	resolvedCapsTTL = time.Hour
	resolveRetry    = 5 * time.Minute
	resolveTimeout  = 10 * time.Second
)

type resolvedCaps struct {
	caps Capabilities
	at   time.Time
	err  bool
}

// withResolvedCapabilities fills the unknown capabilities of b's model with
// what its provider's capability resolver reports, when the provider
// declares one (PRV-4, PRV-7). Values the user declared (or a model listing
// stored) win; a field still unknown stays unknown, never "no". Results are
// cached per route and connection options; a failure is logged and leaves
// the stored capabilities.
func (e *Engine) withResolvedCapabilities(ctx context.Context, b *boundModel) {
	r, ok := b.provider.(CapabilityResolver)
	if !ok || !HasCapability(b.provider, CapCapabilityResolver) {
		return
	}
	now := time.Now()
	// The options are part of the key: an option may decide what the
	// resolver asks (openai's resolve_capabilities).
	keys := make([]string, 0, len(b.endpoint.Options))
	for k, v := range b.endpoint.Options {
		keys = append(keys, k+"="+v)
	}
	slices.Sort(keys)
	key := b.route + "|" + strings.Join(keys, "&")
	e.mu.Lock()
	c, have := e.resolved[key]
	e.mu.Unlock()
	fresh := have && ((!c.err && now.Sub(c.at) < resolvedCapsTTL) || (c.err && now.Sub(c.at) < resolveRetry))
	if !fresh {
		rctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		caps, err := r.ResolveCapabilities(rctx, b.endpoint, b.model.ID)
		cancel()
		c = resolvedCaps{caps: caps, at: now, err: err != nil}
		if err != nil {
			e.log.Warn("resolve model capabilities", "connection_id", b.conn.ID, "model", b.model.ID, "err", scrubSecret(err.Error(), b.endpoint.APIKey))
		}
		e.mu.Lock()
		e.resolved[key] = c
		e.mu.Unlock()
	}
	if !c.err {
		b.model.Capabilities = mergeCapabilities(b.model.Capabilities, c.caps)
	}
}

// effortAllowed reports whether a model with capabilities c accepts effort:
// any effort when the model declares none (unknown), else one it declares.
func effortAllowed(c Capabilities, effort string) bool {
	return effort == "" || len(c.ReasoningEfforts) == 0 || slices.Contains(c.ReasoningEfforts, effort)
}
