package engine

import (
	"context"
	"errors"
	"strings"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/telemetry"
)

// Fallback reason classes of route_fallback (docs/fallback.md).
const (
	FallbackOverloaded    = "overloaded"
	FallbackRateLimited   = "rate_limited"
	FallbackQuota         = "quota"
	FallbackServerError   = "server_error"
	FallbackNetwork       = "network"
	FallbackModelNotFound = "model_not_found"
	FallbackAuth          = "auth"
	FallbackUnavailable   = "unavailable"
)

// fallbackReason classifies a failed model call for the fallback chain: the
// class when another model may answer it (overload, rate limit, quota,
// server, network, model not found, auth, unavailable provider), false when
// no other model would do better (a bad request, a context overflow, which
// compacts instead, an output limit, an answer the provider could not
// read) or when the failure is not a provider's.
func fallbackReason(err error) (string, bool) {
	var perr *core.ProviderError
	if !errors.As(err, &perr) {
		return "", false
	}
	switch perr.Category {
	case core.ProviderThrottling:
		return FallbackOverloaded, true
	case core.ProviderRateLimit:
		return FallbackRateLimited, true
	case core.ProviderQuota:
		return FallbackQuota, true
	case core.ProviderServer:
		return FallbackServerError, true
	case core.ProviderNetwork:
		return FallbackNetwork, true
	case core.ProviderAuth:
		return FallbackAuth, true
	case core.ProviderUnavailable:
		return FallbackUnavailable, true
	case core.ProviderBadRequest:
		if modelNotFound(perr) {
			return FallbackModelNotFound, true
		}
	}
	return "", false
}

// modelNotFound reports whether a bad request says the model does not
// exist (the service removed or never had it): a 404, or OpenAI's
// model_not_found, or a message naming the model as not found.
func modelNotFound(perr *core.ProviderError) bool {
	if perr.StatusCode == 404 {
		return true
	}
	m := strings.ToLower(perr.Message)
	return strings.Contains(m, "model_not_found") || strings.Contains(m, "model") && (strings.Contains(m, "not found") || strings.Contains(m, "does not exist"))
}

// fallbackChain is the session's own fallback chain, else the LANGUAGE
// purpose's.
func (m *models) fallbackChain(ctx context.Context, s core.Session) []core.ModelRef {
	if len(s.FallbackModels) > 0 {
		return s.FallbackModels
	}
	return m.catalog.FallbackModels(ctx, core.PurposeLanguage)
}

// noOutput reports whether a failed call produced nothing a fallback would
// repeat or contradict (no text, reasoning or tool call).
func noOutput(res streamResult) bool {
	return res.err != nil && !res.cancelled && res.limit == nil && res.text == "" && res.reasoning == "" && len(res.calls) == 0
}

// fallbackCall is one model call of a step: its model, compiled request and
// result.
type fallbackCall struct {
	b   boundModel
	c   compiled
	req core.ProviderRequest
	res streamResult
}

// fallBack continues a failed call on the entries of the fallback chain,
// in order, while the failure is of a class another model may fix (after
// the failed model's own retries). Each switch is a persisted
// route_fallback event; the request is compiled again for the new route,
// so provider-native state of another route is dropped exactly as after a
// manual model switch. As with retries, only the usage of the last call
// (the one that answered) is recorded, by the caller, under its model. The
// session keeps its model: the next call tries it again.
func (t *turnLoop) fallBack(s core.Session, call fallbackCall, left int64) fallbackCall {
	e, pctx := t.e, t.pctx
	if !noOutput(call.res) {
		return call
	}
	if _, ok := fallbackReason(call.res.err); !ok {
		return call
	}
	tried := map[core.ModelRef]bool{{ConnectionID: s.ConnectionID, Model: s.Model}: true}
	attempt := 0
	for _, ref := range e.models.fallbackChain(pctx, s) {
		reason, ok := fallbackReason(call.res.err)
		if !ok || !noOutput(call.res) || t.ctx.Err() != nil {
			break
		}
		if tried[ref] {
			continue
		}
		tried[ref] = true
		alt := s
		alt.ConnectionID, alt.Model = ref.ConnectionID, ref.Model
		nb, err := e.models.resolve(pctx, alt)
		if err != nil {
			e.log.Warn("fallback model unusable; skipped", "session_id", s.ID, "connection_id", ref.ConnectionID, "model", ref.Model, "err", err)
			continue
		}
		nc, err := e.compile(pctx, s, nb, true)
		if err != nil {
			e.log.Warn("fallback request not compiled; skipped", "session_id", s.ID, "model", ref.Model, "err", err)
			continue
		}
		attempt++
		var perr *core.ProviderError
		errors.As(call.res.err, &perr)
		from := core.ModelRef{ConnectionID: call.b.conn.ID, Model: call.b.model.ID}
		telemetry.FromContext(t.ctx).Event("gen_ai.fallback", telemetry.String("foya.fallback.from", from.Model),
			telemetry.String("foya.fallback.to", ref.Model), telemetry.String("foya.fallback.reason", reason))
		e.log.InfoContext(t.ctx, "model call falls back", "session_id", s.ID, "turn_id", t.run.id, "from", from.Model, "to", ref.Model, "reason", reason, "attempt", attempt)
		if err := e.persist(pctx, s.ID, core.EventRouteFallback, core.RouteFallbackPayload{
			TurnID: t.run.id, From: from, To: ref, Reason: reason, Category: perr.Category,
			Message: core.ScrubSecret(failureReason(call.res.err), call.b.endpoint.APIKey), Attempt: attempt,
		}); err != nil {
			e.log.Error("record route_fallback", "session_id", s.ID, "err", err)
		}
		req := nc.req
		req.MaxOutputTokens = maxOutputFor(req.MaxOutputTokens, left)
		call = fallbackCall{b: nb, c: nc, req: req, res: e.streamWithRetry(t.ctx, s.ID, t.run.id, &nb, &req, left)}
	}
	return call
}
