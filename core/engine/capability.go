package engine

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
)

// ImageInputAllowed reports whether image input may be sent to a model with
// capabilities c (PRV-4). Unknown (nil) means allowed: only an explicit
// "no image input" rejects an image before the request is sent.
func ImageInputAllowed(c core.Capabilities) bool {
	return c.ImageInput == nil || *c.ImageInput
}

// resolvedCapsTTL is how long capabilities a provider resolved are reused;
// a failed resolution is retried after resolveRetry.
const (
	resolvedCapsTTL = time.Hour
	resolveRetry    = 5 * time.Minute
	resolveTimeout  = 10 * time.Second
)

type resolvedCaps struct {
	caps core.Capabilities
	at   time.Time
	err  bool
}

// withResolvedCapabilities fills the unknown capabilities of b's model with
// what its provider's capability resolver reports, when the provider
// declares one (PRV-4, PRV-7). Values the user declared (or a model listing
// stored) win; a field still unknown stays unknown, never "no". Results are
// cached per route and connection options; a failure is logged and leaves
// the stored capabilities.
func (m *models) withResolvedCapabilities(ctx context.Context, b *boundModel) {
	r, ok := b.provider.(core.CapabilityResolver)
	if !ok || !core.HasCapability(b.provider, core.CapCapabilityResolver) {
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
	c, have := m.resolved.get(key)
	fresh := have && ((!c.err && now.Sub(c.at) < resolvedCapsTTL) || (c.err && now.Sub(c.at) < resolveRetry))
	if !fresh {
		rctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		caps, err := r.ResolveCapabilities(rctx, b.endpoint, b.model.ID)
		cancel()
		c = resolvedCaps{caps: caps, at: now, err: err != nil}
		if err != nil {
			m.log.Warn("resolve model capabilities", "connection_id", b.conn.ID, "model", b.model.ID, "err", core.ScrubSecret(err.Error(), b.endpoint.APIKey))
		}
		m.resolved.set(key, c)
	}
	if !c.err {
		b.model.Capabilities = catalog.MergeCapabilities(b.model.Capabilities, c.caps)
	}
}
