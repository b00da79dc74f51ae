package catalog

import (
	"github.com/foya-dev/foya/core"
	"slices"
)

// cloneCapabilities returns a deep copy of c so that callers cannot change
// the catalog's state through shared pointers.
func cloneCapabilities(c core.Capabilities) core.Capabilities {
	out := core.Capabilities{
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
		out.Generation = &core.Generation{
			Image: clonePtr(c.Generation.Image),
			Video: clonePtr(c.Generation.Video),
			Audio: clonePtr(c.Generation.Audio),
		}
	}
	return out
}

// MergeCapabilities fills the unknown fields of stored with the values of
// reported; a value already stored (declared by the user or kept from an
// earlier refresh) always wins.
func MergeCapabilities(stored, reported core.Capabilities) core.Capabilities {
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

// EffortAllowed reports whether a model with capabilities c accepts effort:
// any effort when the model declares none (unknown), else one it declares.
func EffortAllowed(c core.Capabilities, effort string) bool {
	return effort == "" || len(c.ReasoningEfforts) == 0 || slices.Contains(c.ReasoningEfforts, effort)
}
