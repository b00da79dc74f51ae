package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/session"
)

// generationModel is the model entry of conn named model, with its declared
// capabilities (a zero Model with the id when the connection lists none).
func generationModel(conn core.Connection, model string) core.Model {
	for _, m := range conn.Models {
		if m.ID == model {
			return m
		}
	}
	return core.Model{ID: model}
}

// generationFlagError enforces the generation flags (PRV-2, PRV-4): a model
// whose capabilities declare generation.<flag> false cannot back the
// generation; true or unknown (null) is allowed. what names the operation
// for the message (generateImage, generateVideo).
func generationFlagError(conn core.Connection, m core.Model, flag, what string) error {
	g := m.Capabilities.Generation
	if g == nil {
		return nil
	}
	var v *bool
	switch flag {
	case "image":
		v = g.Image
	case "video":
		v = g.Video
	case "audio":
		v = g.Audio
	}
	if v == nil || *v {
		return nil
	}
	return core.Errorf(core.CodeBadInput, "model: %q of connection %q declares capabilities.generation.%s false, so it cannot back %s; choose another model, or set generation.%s to true (or null: unknown, which is allowed) with updateConnection", m.ID, conn.Name, flag, what, flag)
}

// Generator generates images and videos, standalone (generateImage,
// generateVideo) or as the image_generation tool of a turn, and records
// what they cost.
type Generator struct {
	svc *session.Service
	cfg *Config
	log *slog.Logger
	rec usageRecorder
}

// recordGenerationUsage records the usage of a generation: on the session
// when there is one (a usage event and its ledger row), else kernel-wide in
// the ledger, so that standalone generation is never spent unseen.
func (g *Generator) recordGenerationUsage(ctx context.Context, sessionID string, b boundModel, u *core.Usage, purpose string) {
	if u == nil {
		return
	}
	if sessionID != "" {
		g.rec.recordUsage(ctx, sessionID, b, core.ProviderRequest{Model: b.model.ID}, streamResult{usage: u}, purpose)
		return
	}
	usage := *u
	if usage.Model == "" {
		usage.Model = b.model.ID
	}
	if usage.TotalTokens == 0 {
		usage.TotalTokens = usage.InputTokens + usage.OutputTokens
	}
	if p := b.model.Capabilities.Prices; p != nil {
		c := p.Cost(usage)
		usage.Cost = &c
	}
	rec, ok := g.svc.Store().(core.KernelUsageRecorder)
	if !ok {
		g.log.Warn("usage of a generation without a session not recorded: the store has no kernel ledger", "purpose", purpose, "model", usage.Model)
		return
	}
	if err := rec.RecordKernelUsage(ctx, core.UsagePayload{Usage: usage, Route: b.route, ConnectionID: b.conn.ID, Purpose: purpose}, time.Now().UTC()); err != nil {
		g.log.Error("record kernel usage", "purpose", purpose, "err", err)
	}
}
