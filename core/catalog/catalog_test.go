package catalog_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
)

func TestUpdateAPIKey(t *testing.T) {
	tests := []struct {
		name   string
		key    *string
		want   string
		wantOK bool
	}{
		{"nil keeps the stored key", nil, "sk-old", true},
		{"empty clears it", catPtr(""), "", false},
		{"value replaces it", catPtr("sk-new"), "sk-new", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, core.CatalogData{})
			in := validConnInput()
			in.APIKey = catPtr("sk-old")
			c := h.create(in)
			got, err := h.cat.UpdateConnection(h.ctx, c.ID, core.ConnectionInput{Name: "Renamed", APIKey: tt.key})
			if err != nil {
				t.Fatal(err)
			}
			if got.APIKey != tt.want || catalog.APIKeyConfigured(got) != tt.wantOK {
				t.Fatalf("key configured = %v, want %v (key matches: %v)", catalog.APIKeyConfigured(got), tt.wantOK, got.APIKey == tt.want)
			}
			if got.Name != "Renamed" {
				t.Fatalf("name = %q", got.Name)
			}
			stored := h.store.data.Connections[0]
			if stored.APIKey != tt.want {
				t.Fatal("store does not hold the expected key")
			}
		})
	}
}

func TestUpdateIsAPatch(t *testing.T) {
	h := newHarness(t, core.CatalogData{})
	in := validConnInput()
	in.APIKey = catPtr("sk")
	c := h.create(in)

	got, err := h.cat.UpdateConnection(h.ctx, c.ID, core.ConnectionInput{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Fatalf("empty update changed the connection:\n got %v\nwant %v", got, c)
	}
	got, err = h.cat.UpdateConnection(h.ctx, c.ID, core.ConnectionInput{Models: []core.Model{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Models) != 0 {
		t.Fatalf("empty model list did not clear models: %v", got.Models)
	}
	// Changing the type away from video drops the stored protocol.
	v := h.create(core.ConnectionInput{Name: "V", Type: core.ConnVideo, VideoProtocol: catalog.VideoProtocolOpenAI, BaseURL: "https://v.example"})
	got, err = h.cat.UpdateConnection(h.ctx, v.ID, core.ConnectionInput{Type: core.ConnImage})
	if err != nil {
		t.Fatal(err)
	}
	if got.VideoProtocol != "" || got.Type != core.ConnImage {
		t.Fatalf("type change: %v protocol %q", got, got.VideoProtocol)
	}
}

func TestUpdateRemovingModelsClearsDefaultsAndReports(t *testing.T) {
	h := newHarness(t, core.CatalogData{})
	c := h.create(validConnInput())
	if _, err := h.cat.SetDefaultModel(h.ctx, core.PurposeFast, &core.ModelRef{ConnectionID: c.ID, Model: "m2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.cat.UpdateConnection(h.ctx, c.ID, core.ConnectionInput{Models: catModels("m1")}); err != nil {
		t.Fatal(err)
	}
	d, _ := h.cat.Defaults(h.ctx)
	if d.Fast != nil {
		t.Fatal("fast default still points at a removed model")
	}
	ch := h.lastChange()
	if ch.Kind != catalog.CatalogUpdated || ch.ConnectionID != c.ID ||
		!reflect.DeepEqual(ch.RemovedModels, []core.ModelRef{{ConnectionID: c.ID, Model: "m2"}}) ||
		!reflect.DeepEqual(ch.ClearedDefaults, []core.ModelPurpose{core.PurposeFast}) {
		t.Fatalf("change = %+v", ch)
	}
	// A language connection turned into an image one: every model becomes
	// unusable for sessions.
	if _, err := h.cat.UpdateConnection(h.ctx, c.ID, core.ConnectionInput{Type: core.ConnImage}); err != nil {
		t.Fatal(err)
	}
	if ch := h.lastChange(); len(ch.RemovedModels) != 1 || ch.RemovedModels[0].Model != "m1" {
		t.Fatalf("type change removed models = %+v", ch.RemovedModels)
	}
}

func TestDeleteConnection(t *testing.T) {
	h := newHarness(t, core.CatalogData{})
	a := h.create(validConnInput())
	b := h.create(validConnInput())
	for _, p := range []core.ModelPurpose{core.PurposeLanguage, core.PurposeFast} {
		if _, err := h.cat.SetDefaultModel(h.ctx, p, &core.ModelRef{ConnectionID: a.ID, Model: "m1"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.cat.DeleteConnection(h.ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	d, _ := h.cat.Defaults(h.ctx)
	if d.Language != nil || d.Fast != nil {
		t.Fatalf("defaults not cleared: %+v", d)
	}
	ch := h.lastChange()
	if ch.Kind != catalog.CatalogDeleted || !slices.Equal(ch.DeletedConnectionIDs, []string{a.ID}) || len(ch.ClearedDefaults) != 2 {
		t.Fatalf("change = %+v", ch)
	}
	conns, _ := h.cat.Connections(h.ctx)
	if len(conns) != 1 || conns[0].ID != b.ID || conns[0].Order != 0 {
		t.Fatalf("connections after delete = %v", conns)
	}
	if _, err := h.cat.Connection(h.ctx, a.ID); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("deleted connection: %v", err)
	}
	wantCatCode(t, h.cat.DeleteConnection(h.ctx, a.ID), core.CodeNotFound)
}

func connIDs(conns []core.Connection) []string {
	out := make([]string, len(conns))
	for i, c := range conns {
		out[i] = c.ID
	}
	return out
}

func TestReorderConnections(t *testing.T) {
	h := newHarness(t, core.CatalogData{})
	a, b, c := h.create(validConnInput()), h.create(validConnInput()), h.create(validConnInput())

	tests := []struct {
		name string
		ids  []string
		ok   bool
	}{
		{"permutation", []string{c.ID, a.ID, b.ID}, true},
		{"missing id", []string{c.ID, a.ID}, false},
		{"unknown id", []string{c.ID, a.ID, "conn_x"}, false},
		{"repeated id", []string{c.ID, a.ID, a.ID}, false},
		{"extra id", []string{c.ID, a.ID, b.ID, "conn_x"}, false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := h.cat.Connections(h.ctx)
			got, err := h.cat.ReorderConnections(h.ctx, tt.ids)
			if !tt.ok {
				wantCatCode(t, err, core.CodeBadInput)
				after, _ := h.cat.Connections(h.ctx)
				if !slices.Equal(connIDs(before), connIDs(after)) {
					t.Fatal("rejected reorder changed the order")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(connIDs(got), tt.ids) {
				t.Fatalf("order = %v", connIDs(got))
			}
			for i, c := range got {
				if c.Order != i {
					t.Fatalf("order field of %d = %d", i, c.Order)
				}
			}
		})
	}
}

func TestCreateAndUpdateWithOrder(t *testing.T) {
	h := newHarness(t, core.CatalogData{})
	a, b := h.create(validConnInput()), h.create(validConnInput())
	in := validConnInput()
	in.Order = catPtr(0)
	first := h.create(in)
	in = validConnInput()
	in.Order = catPtr(99)
	last := h.create(in)
	conns, _ := h.cat.Connections(h.ctx)
	if want := []string{first.ID, a.ID, b.ID, last.ID}; !slices.Equal(connIDs(conns), want) {
		t.Fatalf("order = %v, want %v", connIDs(conns), want)
	}
	if _, err := h.cat.UpdateConnection(h.ctx, last.ID, core.ConnectionInput{Order: catPtr(1)}); err != nil {
		t.Fatal(err)
	}
	conns, _ = h.cat.Connections(h.ctx)
	if want := []string{first.ID, last.ID, a.ID, b.ID}; !slices.Equal(connIDs(conns), want) {
		t.Fatalf("order = %v, want %v", connIDs(conns), want)
	}
}

// Connection names are unique (case-insensitively): clients refer to
// connections by name.
func TestConnectionNamesAreUnique(t *testing.T) {
	h := newHarness(t, core.CatalogData{})
	a := h.create(core.ConnectionInput{Name: "OpenAI", BaseURL: "https://a.example/v1"})
	b := h.create(core.ConnectionInput{Name: "local", BaseURL: "https://b.example/v1"})
	_, err := h.cat.CreateConnection(h.ctx, core.ConnectionInput{Name: " openai ", BaseURL: "https://c.example/v1"})
	wantCatCode(t, err, core.CodeConflict)
	_, err = h.cat.UpdateConnection(h.ctx, b.ID, core.ConnectionInput{Name: "OPENAI"})
	wantCatCode(t, err, core.CodeConflict)
	// Renaming to its own name, or another patch, is fine.
	if _, err := h.cat.UpdateConnection(h.ctx, a.ID, core.ConnectionInput{Name: "openai"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.cat.UpdateConnection(h.ctx, b.ID, core.ConnectionInput{BaseURL: "https://d.example/v1"}); err != nil {
		t.Fatal(err)
	}
	conns, _ := h.cat.Connections(h.ctx)
	if len(conns) != 2 {
		t.Fatalf("connections %v", connIDs(conns))
	}
}

func TestSetDefaultModel(t *testing.T) {
	h := newHarness(t, core.CatalogData{})
	lang := h.create(validConnInput())
	img := h.create(core.ConnectionInput{Name: "I", Type: core.ConnImage, BaseURL: "https://i.example", Models: catModels("img1")})
	vid := h.create(core.ConnectionInput{Name: "V", Type: core.ConnVideo, VideoProtocol: catalog.VideoProtocolOpenAI, BaseURL: "https://v.example", Models: catModels("vid1")})
	open := h.create(core.ConnectionInput{Name: "Open", BaseURL: "https://o.example"}) // lists no models

	tests := []struct {
		name    string
		purpose core.ModelPurpose
		ref     *core.ModelRef
		code    core.Code // "" = ok
	}{
		{"language", core.PurposeLanguage, &core.ModelRef{ConnectionID: lang.ID, Model: "m1"}, ""},
		{"fast on language", core.PurposeFast, &core.ModelRef{ConnectionID: lang.ID, Model: "m2"}, ""},
		{"image", core.PurposeImage, &core.ModelRef{ConnectionID: img.ID, Model: "img1"}, ""},
		{"video", core.PurposeVideo, &core.ModelRef{ConnectionID: vid.ID, Model: "vid1"}, ""},
		{"any model on a connection without a list", core.PurposeLanguage, &core.ModelRef{ConnectionID: open.ID, Model: "whatever"}, ""},
		{"clear", core.PurposeVideo, nil, ""},
		{"language on image connection", core.PurposeLanguage, &core.ModelRef{ConnectionID: img.ID, Model: "img1"}, core.CodeBadInput},
		{"fast on video connection", core.PurposeFast, &core.ModelRef{ConnectionID: vid.ID, Model: "vid1"}, core.CodeBadInput},
		{"image on language connection", core.PurposeImage, &core.ModelRef{ConnectionID: lang.ID, Model: "m1"}, core.CodeBadInput},
		{"video on image connection", core.PurposeVideo, &core.ModelRef{ConnectionID: img.ID, Model: "img1"}, core.CodeBadInput},
		{"unknown connection", core.PurposeLanguage, &core.ModelRef{ConnectionID: "conn_x", Model: "m1"}, core.CodeBadInput},
		{"unlisted model", core.PurposeLanguage, &core.ModelRef{ConnectionID: lang.ID, Model: "nope"}, core.CodeBadInput},
		{"empty model", core.PurposeLanguage, &core.ModelRef{ConnectionID: open.ID, Model: ""}, core.CodeBadInput},
		{"unknown purpose", "chat", nil, core.CodeBadInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := h.cat.Defaults(h.ctx)
			got, err := h.cat.SetDefaultModel(h.ctx, tt.purpose, tt.ref)
			if tt.code != "" {
				wantCatCode(t, err, tt.code)
				after, _ := h.cat.Defaults(h.ctx)
				if !reflect.DeepEqual(before, after) {
					t.Fatal("rejected default changed the defaults")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var slot *core.ModelRef
			switch tt.purpose {
			case core.PurposeLanguage:
				slot = got.Language
			case core.PurposeFast:
				slot = got.Fast
			case core.PurposeImage:
				slot = got.Image
			case core.PurposeVideo:
				slot = got.Video
			}
			if !reflect.DeepEqual(slot, tt.ref) {
				t.Fatalf("slot = %+v, want %+v", slot, tt.ref)
			}
			if h.lastChange().Kind != catalog.CatalogDefaults {
				t.Fatal("defaults change not reported")
			}
		})
	}
}

func TestRefreshModels(t *testing.T) {
	h := newHarness(t, core.CatalogData{})
	in := validConnInput()
	in.ProviderKind = "lister"
	in.APIKey = catPtr("sk-refresh")
	in.Models = []core.Model{
		{ID: "keep", Capabilities: core.Capabilities{ContextWindow: catPtr(int64(1000)), ImageInput: catPtr(false)}},
		{ID: "gone"},
	}
	c := h.create(in)
	if _, err := h.cat.SetDefaultModel(h.ctx, core.PurposeLanguage, &core.ModelRef{ConnectionID: c.ID, Model: "gone"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.cat.SetDefaultModel(h.ctx, core.PurposeFast, &core.ModelRef{ConnectionID: c.ID, Model: "keep"}); err != nil {
		t.Fatal(err)
	}
	h.listed = []core.Model{
		{ID: "keep", Capabilities: core.Capabilities{ContextWindow: catPtr(int64(9999)), ToolCalling: catPtr(true)}},
		{ID: "new"},
		{ID: "new"}, // duplicates and empty ids from the endpoint are skipped
		{ID: ""},
	}
	got, err := h.cat.RefreshModels(h.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if h.lastSeen.APIKey != "sk-refresh" || h.lastSeen.BaseURL != c.BaseURL {
		t.Fatalf("provider got endpoint %v", h.lastSeen)
	}
	if want := []string{"keep", "new"}; !slices.Equal(modelIDs(got.Models), want) {
		t.Fatalf("models = %v, want %v", modelIDs(got.Models), want)
	}
	keep := got.Models[0].Capabilities
	if *keep.ContextWindow != 1000 || *keep.ImageInput != false || keep.ToolCalling == nil || !*keep.ToolCalling {
		t.Fatalf("capabilities not merged (stored wins, reported fills): %+v", keep)
	}
	d, _ := h.cat.Defaults(h.ctx)
	if d.Language != nil || d.Fast == nil {
		t.Fatalf("defaults after refresh = %+v", d)
	}
	ch := h.lastChange()
	if ch.Kind != catalog.CatalogModelsRefreshed ||
		!reflect.DeepEqual(ch.RemovedModels, []core.ModelRef{{ConnectionID: c.ID, Model: "gone"}}) ||
		!reflect.DeepEqual(ch.ClearedDefaults, []core.ModelPurpose{core.PurposeLanguage}) {
		t.Fatalf("change = %+v", ch)
	}
}

func modelIDs(ms []core.Model) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

func TestRefreshModelsFailures(t *testing.T) {
	tests := []struct {
		name    string
		kind    string
		listed  []core.Model
		listErr error
		code    core.Code
		msg     string
	}{
		{"provider without lister", "openai", nil, nil, core.CodeUnavailable, "cannot list models"},
		{"provider error with the key scrubbed", "lister", nil, &core.ProviderError{Category: core.ProviderAuth, Message: "bad key sk-refresh"}, core.CodeProviderError, "auth: bad key [redacted]"},
		{"plain error", "lister", nil, errCatBoom, core.CodeProviderError, "see the kernel log"},
		{"empty list keeps models", "lister", []core.Model{}, nil, core.CodeProviderError, "listed no models"},
		{"invalid listed capabilities", "lister", []core.Model{{ID: "x", Capabilities: core.Capabilities{ContextWindow: catPtr(int64(-1))}}}, nil, core.CodeProviderError, "fail validation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, core.CatalogData{})
			in := validConnInput()
			in.ProviderKind = tt.kind
			in.APIKey = catPtr("sk-refresh")
			c := h.create(in)
			h.listed, h.listErr = tt.listed, tt.listErr
			_, err := h.cat.RefreshModels(h.ctx, c.ID)
			wantCatCode(t, err, tt.code)
			if msg := core.ErrorMessage(err); !strings.Contains(msg, tt.msg) || strings.Contains(msg, "sk-refresh") {
				t.Fatalf("message = %q", msg)
			}
			got, _ := h.cat.Connection(h.ctx, c.ID)
			if !slices.Equal(modelIDs(got.Models), []string{"m1", "m2"}) {
				t.Fatal("failed refresh changed the models")
			}
		})
	}
	h := newHarness(t, core.CatalogData{})
	_, err := h.cat.RefreshModels(h.ctx, "conn_x")
	wantCatCode(t, err, core.CodeNotFound)
}

func TestRoutesClearedOnEveryChange(t *testing.T) {
	h := newHarness(t, core.CatalogData{})
	c := h.create(validConnInput())
	mutations := []struct {
		name string
		do   func() error
	}{
		{"update", func() error {
			_, err := h.cat.UpdateConnection(h.ctx, c.ID, core.ConnectionInput{Name: "x"})
			return err
		}},
		{"defaults", func() error {
			_, err := h.cat.SetDefaultModel(h.ctx, core.PurposeLanguage, &core.ModelRef{ConnectionID: c.ID, Model: "m1"})
			return err
		}},
		{"reorder", func() error { _, err := h.cat.ReorderConnections(h.ctx, []string{c.ID}); return err }},
		{"create", func() error { _, err := h.cat.CreateConnection(h.ctx, validConnInput()); return err }},
		{"delete", func() error { return h.cat.DeleteConnection(h.ctx, c.ID) }},
	}
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			h.cat.Routes().Set("rt_x", core.RouteState{LastInputTokens: 10})
			if err := m.do(); err != nil {
				t.Fatal(err)
			}
			if h.cat.Routes().Len() != 0 {
				t.Fatal("route states survived a catalog change")
			}
		})
	}
	// A rejected mutation keeps them.
	h.cat.Routes().Set("rt_x", core.RouteState{LastInputTokens: 10})
	_, _ = h.cat.CreateConnection(h.ctx, core.ConnectionInput{})
	if _, ok := h.cat.Routes().Get("rt_x"); !ok {
		t.Fatal("rejected mutation cleared route states")
	}
}

func TestSaveFailureChangesNothing(t *testing.T) {
	h := newHarness(t, core.CatalogData{})
	c := h.create(validConnInput())
	n := h.changeCount()
	h.store.SaveFn = func(core.CatalogData) error { return errCatBoom }
	_, err := h.cat.UpdateConnection(h.ctx, c.ID, core.ConnectionInput{Name: "other"})
	if !errors.Is(err, errCatBoom) {
		t.Fatalf("err = %v", err)
	}
	got, _ := h.cat.Connection(h.ctx, c.ID)
	if got.Name != c.Name || h.changeCount() != n {
		t.Fatal("failed save changed memory or reported a change")
	}
}

func TestNewCatalogLoadsAndPrunes(t *testing.T) {
	initial := core.CatalogData{
		Connections: []core.Connection{
			{ID: "conn_b", Name: "B", Type: core.ConnLanguage, ProviderKind: "openai", AuthKind: core.AuthAPIKey, BaseURL: "https://b.example", Models: catModels("b1"), Order: 5},
			{ID: "conn_a", Name: "A", Type: core.ConnLanguage, ProviderKind: "openai", AuthKind: core.AuthAPIKey, BaseURL: "https://a.example", Models: catModels("a1"), Order: 1},
		},
		Defaults: core.DefaultModels{
			Language: &core.ModelRef{ConnectionID: "conn_a", Model: "a1"},
			Fast:     &core.ModelRef{ConnectionID: "conn_gone", Model: "x"},
		},
	}
	h := newHarness(t, initial)
	conns, _ := h.cat.Connections(h.ctx)
	if !slices.Equal(connIDs(conns), []string{"conn_a", "conn_b"}) || conns[1].Order != 1 {
		t.Fatalf("loaded order = %v", conns)
	}
	d, _ := h.cat.Defaults(h.ctx)
	if d.Language == nil || d.Fast != nil {
		t.Fatalf("defaults = %+v", d)
	}

	dup := core.CatalogData{Connections: []core.Connection{{ID: "x"}, {ID: "x"}}}
	if _, err := catalog.New(context.Background(), catalog.Config{Store: &memStore{data: dup}, Providers: fakeLookup{}}); err == nil {
		t.Fatal("duplicate ids accepted")
	}
	if _, err := catalog.New(context.Background(), catalog.Config{Providers: fakeLookup{}}); err == nil {
		t.Fatal("missing store accepted")
	}
}

func TestReturnedValuesAreCopies(t *testing.T) {
	in := validConnInput()
	in.Models = []core.Model{{ID: "m", Capabilities: core.Capabilities{ContextWindow: catPtr(int64(5))}}}
	h := newHarness(t, core.CatalogData{})
	c := h.create(in)
	*c.Models[0].Capabilities.ContextWindow = 99
	c.Models[0].ID = "changed"
	got, _ := h.cat.Connection(h.ctx, c.ID)
	if got.Models[0].ID != "m" || *got.Models[0].Capabilities.ContextWindow != 5 {
		t.Fatal("caller mutated the catalog through a returned value")
	}
}

func TestConcurrentUse(t *testing.T) {
	h := newHarness(t, core.CatalogData{})
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := h.cat.CreateConnection(h.ctx, validConnInput())
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = h.cat.Connections(h.ctx)
			_, _ = h.cat.ResolveSessionModel(h.ctx, "", "")
			if i%2 == 0 {
				_ = h.cat.DeleteConnection(h.ctx, c.ID)
			}
		}()
	}
	wg.Wait()
	conns, _ := h.cat.Connections(h.ctx)
	if len(conns) != 10 {
		t.Fatalf("connections = %d, want 10", len(conns))
	}
	for i, c := range conns {
		if c.Order != i {
			t.Fatalf("order not normalised: %v", conns)
		}
	}
}
