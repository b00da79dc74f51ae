package engine

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/foya-dev/foya/core"
)

// titlePrompt asks for a short title; the answer is used as is after trimming.
const titlePrompt = "Write a title of at most six words for a conversation that starts with the user message below. " +
	"Reply with the title only: no quotes, no trailing punctuation."

// maybeTitle names an untitled session after its first completed turn, with
// the fast default model, else the session's own model; it skips quietly
// when no completer is available.
func (e *Engine) maybeTitle(ctx context.Context, sessionID string) {
	s, err := e.svc.Session(ctx, sessionID)
	if err != nil || s.Title != "" {
		return
	}
	msgs, err := e.svc.Messages(ctx, sessionID, false)
	if err != nil {
		return
	}
	first := slices.IndexFunc(msgs, func(m core.Message) bool { return m.Role == core.RoleUser && strings.TrimSpace(m.Text) != "" })
	if first < 0 {
		return
	}
	text := []rune(msgs[first].Text)
	if len(text) > 2000 {
		text = text[:2000]
	}
	bs, err := e.models.titleModels(ctx, s)
	if err != nil {
		e.log.Debug("no model for a title", "session_id", sessionID, "err", err)
		return
	}
	tried, _ := e.titled.swap(sessionID, true)
	if tried {
		return
	}
	var (
		b   boundModel
		req core.ProviderRequest
		c   core.Completion
	)
	for i := range bs {
		b = bs[i]
		req = core.ProviderRequest{Model: b.model.ID, MaxOutputTokens: 32, Messages: []core.ProviderMessage{
			{Role: core.RoleSystem, Content: []core.ContentPart{{Type: "text", Text: titlePrompt}}},
			{Role: core.RoleUser, Content: []core.ContentPart{{Type: "text", Text: string(text)}}},
		}}
		c, err = b.provider.Complete(ctx, b.endpoint, req)
		if err == nil {
			break
		}
		reason, ok := fallbackReason(err)
		if !ok || i == len(bs)-1 {
			e.log.Warn("generate title", "session_id", sessionID, "err", err)
			return
		}
		// The FAST fallback chain (docs/fallback.md): the next model.
		e.log.Info("title model failed; trying the next", "session_id", sessionID, "model", b.model.ID, "next", bs[i+1].model.ID, "reason", reason)
	}
	e.rec.recordUsage(ctx, sessionID, b, req, streamResult{text: c.Text, usage: c.Usage}, "title")
	title := strings.Trim(strings.TrimSpace(core.StripUnsafe(strings.SplitN(c.Text, "\n", 2)[0])), "\"'`*#. ")
	if r := []rune(title); len(r) > 80 {
		title = string(r[:80])
	}
	if title == "" {
		return
	}
	defer e.svc.Lock(sessionID)()
	cur, err := e.svc.Store().Session(ctx, sessionID)
	if err != nil || cur.Title != "" {
		return // deleted, or named meanwhile: the person's title wins
	}
	meta := cur.SessionMeta
	meta.Title = title
	if err := e.svc.CommitMeta(ctx, meta, []string{"title"}); err != nil && !errors.Is(err, core.ErrNotFound) {
		e.log.Error("record title", "session_id", sessionID, "err", err)
	}
}

// titleModels lists the models a title may use, in order: the fast
// default, the FAST fallback chain, then the session's own model; only
// those whose provider can complete.
func (m *models) titleModels(ctx context.Context, s core.Session) ([]boundModel, error) {
	var refs []core.ModelRef
	if d, err := m.catalog.Defaults(ctx); err == nil {
		if d.Fast != nil {
			refs = append(refs, *d.Fast)
		}
		refs = append(refs, d.Fallbacks[core.PurposeFast]...)
	}
	return m.completers(ctx, s, refs)
}

// completers binds s to each of refs in order, then to its own model, and
// keeps those whose provider can complete, each route once; the error says
// why the last one could not when none can.
func (m *models) completers(ctx context.Context, s core.Session, refs []core.ModelRef) ([]boundModel, error) {
	candidates := make([]core.Session, 0, len(refs)+1)
	for _, ref := range refs {
		c := s
		c.ConnectionID, c.Model = ref.ConnectionID, ref.Model
		candidates = append(candidates, c)
	}
	candidates = append(candidates, s)
	var out []boundModel
	seen := map[string]bool{}
	var lastErr error = core.Errorf(core.CodeUnavailable, "no model can complete")
	for _, c := range candidates {
		b, err := m.resolve(ctx, c)
		if err != nil {
			lastErr = err
			continue
		}
		if !core.HasCapability(b.provider, core.CapCompleter) {
			lastErr = core.Errorf(core.CodeUnavailable, "provider %s cannot complete", b.conn.ProviderKind)
			continue
		}
		if !seen[b.route] {
			seen[b.route] = true
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		return nil, lastErr
	}
	return out, nil
}
