package catalog

import (
	"github.com/foya-dev/foya/core"
	"maps"
)

func cloneConnection(c core.Connection) core.Connection {
	out := c
	out.Options = maps.Clone(c.Options)
	if c.Models != nil {
		out.Models = make([]core.Model, len(c.Models))
		for i, m := range c.Models {
			out.Models[i] = core.Model{ID: m.ID, Capabilities: cloneCapabilities(m.Capabilities)}
		}
	}
	return out
}

func cloneDefaults(d core.DefaultModels) core.DefaultModels {
	return core.DefaultModels{
		Language:  clonePtr(d.Language),
		Fast:      clonePtr(d.Fast),
		Image:     clonePtr(d.Image),
		Video:     clonePtr(d.Video),
		Fallbacks: cloneFallbacks(d.Fallbacks),
		Guardian:  clonePtr(d.Guardian),
	}
}

func cloneFallbacks(f map[core.ModelPurpose][]core.ModelRef) map[core.ModelPurpose][]core.ModelRef {
	if len(f) == 0 {
		return nil
	}
	out := make(map[core.ModelPurpose][]core.ModelRef, len(f))
	for p, refs := range f {
		out[p] = append([]core.ModelRef(nil), refs...)
	}
	return out
}

func cloneCatalogData(d core.CatalogData) core.CatalogData {
	out := core.CatalogData{Defaults: cloneDefaults(d.Defaults)}
	out.Connections = make([]core.Connection, len(d.Connections))
	for i, c := range d.Connections {
		out.Connections[i] = cloneConnection(c)
	}
	return out
}
