package catalogfile

import "github.com/foya-dev/foya/core"

// fileV1 is the on-disk format of connections.json. The store owns these
// rows so the format does not change with core's types; models reuse
// core.Model, whose JSON shape is the public one and holds no secrets.
type fileV1 struct {
	Version     int             `json:"version"`
	Connections []connectionRow `json:"connections"`
	Defaults    defaultsRow     `json:"defaults"`
}

type connectionRow struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	Type          string            `json:"type"`
	ProviderKind  string            `json:"providerKind"`
	BaseURL       string            `json:"baseUrl"`
	AuthKind      string            `json:"authKind"`
	APIKey        string            `json:"apiKey,omitempty"`
	VideoProtocol string            `json:"videoProtocol,omitempty"`
	Models        []core.Model      `json:"models"`
	Order         int               `json:"order"`
	Options       map[string]string `json:"options,omitempty"`
}

type refRow struct {
	ConnectionID string `json:"connectionId"`
	Model        string `json:"model"`
}

type defaultsRow struct {
	Language *refRow `json:"language,omitempty"`
	Fast     *refRow `json:"fast,omitempty"`
	Image    *refRow `json:"image,omitempty"`
	Video    *refRow `json:"video,omitempty"`
	// Fallbacks is the fallback chain per purpose (language, fast, …).
	Fallbacks map[string][]refRow `json:"fallbacks,omitempty"`
	Guardian  *refRow             `json:"guardian,omitempty"`
}

func fromCore(d core.CatalogData) fileV1 {
	f := fileV1{Version: formatVersion, Connections: make([]connectionRow, 0, len(d.Connections))}
	for _, c := range d.Connections {
		models := c.Models
		if models == nil {
			models = []core.Model{}
		}
		f.Connections = append(f.Connections, connectionRow{
			ID: c.ID, Name: c.Name, Type: string(c.Type), ProviderKind: c.ProviderKind,
			BaseURL: c.BaseURL, AuthKind: string(c.AuthKind), APIKey: c.APIKey,
			VideoProtocol: c.VideoProtocol, Models: models, Order: c.Order, Options: c.Options,
		})
	}
	f.Defaults = defaultsRow{
		Language: refFromCore(d.Defaults.Language),
		Fast:     refFromCore(d.Defaults.Fast),
		Image:    refFromCore(d.Defaults.Image),
		Video:    refFromCore(d.Defaults.Video),
		Guardian: refFromCore(d.Defaults.Guardian),
	}
	f.Defaults.Fallbacks = fallbacksFromCore(d.Defaults.Fallbacks)
	return f
}

func (f fileV1) toCore() core.CatalogData {
	d := core.CatalogData{Connections: make([]core.Connection, 0, len(f.Connections))}
	for _, r := range f.Connections {
		models := r.Models
		if models == nil {
			models = []core.Model{}
		}
		d.Connections = append(d.Connections, core.Connection{
			ID: r.ID, Name: r.Name, Type: core.ConnectionType(r.Type), ProviderKind: r.ProviderKind,
			BaseURL: r.BaseURL, AuthKind: core.AuthKind(r.AuthKind), APIKey: r.APIKey,
			VideoProtocol: r.VideoProtocol, Models: models, Order: r.Order, Options: r.Options,
		})
	}
	d.Defaults = core.DefaultModels{
		Language: refToCore(f.Defaults.Language),
		Fast:     refToCore(f.Defaults.Fast),
		Image:    refToCore(f.Defaults.Image),
		Video:    refToCore(f.Defaults.Video),
		Guardian: refToCore(f.Defaults.Guardian),
	}
	d.Defaults.Fallbacks = fallbacksToCore(f.Defaults.Fallbacks)
	return d
}

func refFromCore(r *core.ModelRef) *refRow {
	if r == nil {
		return nil
	}
	return &refRow{ConnectionID: r.ConnectionID, Model: r.Model}
}

func refToCore(r *refRow) *core.ModelRef {
	if r == nil {
		return nil
	}
	return &core.ModelRef{ConnectionID: r.ConnectionID, Model: r.Model}
}

func fallbacksFromCore(m map[core.ModelPurpose][]core.ModelRef) map[string][]refRow {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string][]refRow, len(m))
	for p, refs := range m {
		for _, r := range refs {
			out[string(p)] = append(out[string(p)], refRow{ConnectionID: r.ConnectionID, Model: r.Model})
		}
	}
	return out
}

func fallbacksToCore(m map[string][]refRow) map[core.ModelPurpose][]core.ModelRef {
	if len(m) == 0 {
		return nil
	}
	out := make(map[core.ModelPurpose][]core.ModelRef, len(m))
	for p, refs := range m {
		for _, r := range refs {
			out[core.ModelPurpose(p)] = append(out[core.ModelPurpose(p)], core.ModelRef{ConnectionID: r.ConnectionID, Model: r.Model})
		}
	}
	return out
}
