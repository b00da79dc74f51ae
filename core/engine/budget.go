package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"

	"github.com/foya-dev/foya/core"
)

// Budget defaults (documented in the schema and docs/design.md).
const (
	// DefaultInputBudget is the high-water mark when a model declares neither
	// max input tokens nor a context window: deliberately conservative.
	DefaultInputBudget = 32000
	// defaultOutputReserve is kept free for the answer when a model declares
	// a context window but no max output tokens.
	defaultOutputReserve = 4096
	// imageTokens is the local estimate of one image part.
	imageTokens = 1000
)

// InputBudget is the high-water mark of a model's request input (tokens):
// its max input tokens, else its context window minus its max output tokens
// (or a 4096 reserve) minus 5% for estimation error, else DefaultInputBudget.
func InputBudget(c core.Capabilities) int64 {
	if c.MaxInputTokens != nil && *c.MaxInputTokens > 0 {
		return *c.MaxInputTokens
	}
	if c.ContextWindow != nil && *c.ContextWindow > 0 {
		out := int64(defaultOutputReserve)
		if c.MaxOutputTokens != nil && *c.MaxOutputTokens > 0 {
			out = *c.MaxOutputTokens
		}
		b := *c.ContextWindow - out - *c.ContextWindow/20
		if b > 0 {
			return b
		}
		return *c.ContextWindow / 2
	}
	return DefaultInputBudget
}

// toolResultLimit is the share of the budget one tool result may take in
// the provider view, in characters: a quarter of the budget (about four
// characters a token), at least 2000.
func toolResultLimit(budget int64) int {
	return int(max(2000, budget))
}

// localTokens is the local estimate of a request's input: about four bytes
// of text per token, a fixed cost per image.
func localTokens(req core.ProviderRequest) int64 {
	n, images := 0, 0
	for _, m := range req.Messages {
		n += len(m.Reasoning) + 4
		for _, p := range m.Content {
			n += len(p.Text)
			if p.Type == "image" {
				images++
			}
		}
		for _, c := range m.ToolCalls {
			n += len(c.Input) + len(c.Name) + len(c.ID)
		}
		n += len(m.ToolCallID)
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return estimateTokens(n) + int64(images*imageTokens)
}

// digestMessages fingerprints a history prefix: seqs, roles and content.
func digestMessages(msgs []core.Message) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, m := range msgs {
		_ = enc.Encode(struct {
			Seq int64
			M   core.Message
		}{m.Seq, m})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func routeStateKey(route, sessionID string) string { return route + "/" + sessionID }

// estimate anchors on the last real input tokens this session's route
// reported (in memory, else the persisted accepted boundary when its route
// and digest still match) plus the local estimate of what changed since;
// without an anchor it is the local estimate alone (PRV-10, PRV-11).
func (e *Engine) estimate(ctx context.Context, s core.Session, route string, msgs []core.Message, req core.ProviderRequest) core.ContextUsage {
	sessionID := s.ID
	local := localTokens(req)
	if st, ok := e.cfg.Catalog.Routes().Get(routeStateKey(route, sessionID)); ok && st.LastInputTokens > 0 {
		return core.ContextUsage{Tokens: max(0, st.LastInputTokens+local-st.PayloadBaselineTokens)}
	}
	if e.cfg.History != nil && !e.svc.Histories().NoAnchor(sessionID, s.HeadSeq) {
		a, err := e.cfg.History.RouteAnchor(ctx, sessionID, route)
		if err == nil && a.Route == route && digestThrough(msgs, a.ThroughSeq) == a.Digest {
			return core.ContextUsage{Tokens: max(0, a.InputTokens+local-a.EstimatedTokens)}
		} else if err != nil && !errors.Is(err, core.ErrNotFound) {
			e.log.Warn("read route anchor", "session_id", sessionID, "err", err)
		}
	}
	return core.ContextUsage{Tokens: local, Estimated: true}
}

func digestThrough(msgs []core.Message, through int64) string {
	n := 0
	for n < len(msgs) && msgs[n].Seq <= through {
		n++
	}
	return digestMessages(msgs[:n])
}

// accept records that route took this request: the in-memory anchor and the
// persisted accepted boundary.
func (e *Engine) accept(ctx context.Context, sessionID, route string, msgs []core.Message, req core.ProviderRequest, u core.Usage) {
	local := localTokens(req)
	e.cfg.Catalog.Routes().Set(routeStateKey(route, sessionID), core.RouteState{LastInputTokens: u.InputTokens, LastOutputTokens: u.OutputTokens, PayloadBaselineTokens: local})
	if e.cfg.History == nil || len(msgs) == 0 {
		return
	}
	through := msgs[len(msgs)-1].Seq
	a := core.RouteAnchor{SessionID: sessionID, Route: route, ThroughSeq: through, Digest: digestMessages(msgs), InputTokens: u.InputTokens, EstimatedTokens: local}
	e.svc.Histories().AnchorSaved(sessionID)
	if err := e.cfg.History.SaveRouteAnchor(ctx, a); err != nil {
		e.log.Warn("save accepted boundary", "session_id", sessionID, "err", err)
	}
}
