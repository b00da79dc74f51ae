package graph

import (
	"slices"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/graph/model"
)

// fallbackChains lists the fallback chains of d, sorted by purpose.
func fallbackChains(d *core.DefaultModels) []model.FallbackChain {
	out := make([]model.FallbackChain, 0, len(d.Fallbacks))
	for p, refs := range d.Fallbacks {
		if len(refs) > 0 {
			out = append(out, model.FallbackChain{Purpose: p, Models: refs})
		}
	}
	slices.SortFunc(out, func(a, b model.FallbackChain) int { return purposeRank(a.Purpose) - purposeRank(b.Purpose) })
	return out
}

func purposeRank(p core.ModelPurpose) int {
	for i, q := range []core.ModelPurpose{core.PurposeLanguage, core.PurposeFast, core.PurposeImage, core.PurposeVideo, core.PurposeGuardian} {
		if p == q {
			return i
		}
	}
	return 99
}

// fallbackModelsInput is UpdateSessionInput.fallbackModels: nil keeps the
// chain, an empty list clears it.
func fallbackModelsInput(refs []core.ModelRef) *[]core.ModelRef {
	if refs == nil {
		return nil
	}
	return &refs
}

// messageModel is the model that produced an assistant message.
func messageModel(m *core.Message) *string {
	if m.Role != core.RoleAssistant || m.Model == "" {
		return nil
	}
	return &m.Model
}
