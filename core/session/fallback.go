package session

import (
	"context"

	"github.com/foya-dev/foya/core"
)

// MaxFallbackModels bounds a session's fallback chain.
const MaxFallbackModels = 8

// fallbackModels validates a session's fallback chain: each entry a
// language connection and one of its models, at most once, at most
// MaxFallbackModels entries. nil for an empty list.
func fallbackModels(ctx context.Context, models SessionModels, refs []core.ModelRef) ([]core.ModelRef, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	if len(refs) > MaxFallbackModels {
		return nil, core.Errorf(core.CodeBadInput, "fallbackModels: at most %d models (got %d)", MaxFallbackModels, len(refs))
	}
	out := make([]core.ModelRef, 0, len(refs))
	seen := map[core.ModelRef]bool{}
	for i, ref := range refs {
		if ref.ConnectionID == "" || ref.Model == "" {
			return nil, core.Errorf(core.CodeBadInput, "fallbackModels[%d]: give both connectionId and model", i)
		}
		if models != nil {
			r, err := models.ResolveSessionModel(ctx, ref.ConnectionID, ref.Model)
			if err != nil {
				return nil, core.Errorf(core.CodeBadInput, "fallbackModels[%d]: %s", i, core.ErrorMessage(err))
			}
			ref = r
		}
		if seen[ref] {
			return nil, core.Errorf(core.CodeBadInput, "fallbackModels[%d]: model %q of connection %s is already in the chain", i, ref.Model, ref.ConnectionID)
		}
		seen[ref] = true
		out = append(out, ref)
	}
	return out, nil
}
