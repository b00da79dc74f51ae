package graph

import (
	"context"
	"maps"
	"slices"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
	"github.com/foya-dev/foya/graph/model"
)

// The connection catalog's resolvers: connections, their models and the
// default models.

func connectionInput(in model.ConnectionInput) core.ConnectionInput {
	out := core.ConnectionInput{
		Name: deref(in.Name), Type: deref(in.Type), ProviderKind: deref(in.ProviderKind),
		BaseURL: deref(in.BaseURL), AuthKind: deref(in.AuthKind), APIKey: in.APIKey,
		VideoProtocol: deref(in.VideoProtocol),
	}
	if in.Order != nil {
		o := int(*in.Order)
		out.Order = &o
	}
	if in.Options != nil {
		out.Options = make(map[string]string, len(in.Options))
		for _, o := range in.Options {
			out.Options[o.Key] = o.Value
		}
	}
	if in.Models != nil {
		out.Models = make([]core.Model, len(in.Models))
		for i, m := range in.Models {
			out.Models[i] = core.Model{ID: m.ID}
			if m.Capabilities != nil {
				out.Models[i].Capabilities = *m.Capabilities
			}
		}
	}
	return out
}

func providerOptions(opts map[string]string) []model.ProviderOption {
	keys := slices.Sorted(maps.Keys(opts))
	out := make([]model.ProviderOption, len(keys))
	for i, k := range keys {
		out[i] = model.ProviderOption{Key: k, Value: opts[k]}
	}
	return out
}

// setDefaultModel serves setDefaultModel: both connectionId and model set
// a purpose's default, neither clears it.
func setDefaultModel(ctx context.Context, cat *catalog.Catalog, purpose core.ModelPurpose, connectionID, model *string) (*core.DefaultModels, error) {
	var ref *core.ModelRef
	if connectionID != nil || model != nil {
		if connectionID == nil || model == nil {
			return nil, core.Errorf(core.CodeBadInput, "give both connectionId and model to set a default, or neither to clear it")
		}
		ref = &core.ModelRef{ConnectionID: *connectionID, Model: *model}
	}
	return ptr(cat.SetDefaultModel(ctx, purpose, ref))
}
