package graph_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/foya-dev/foya/core"
)

// fakeProviders is a hand-written ProviderLookup.
type fakeProviders struct {
	kinds map[string]core.Provider
}

func (f *fakeProviders) Provider(kind string) (core.Provider, error) {
	p, ok := f.kinds[kind]
	if !ok {
		return nil, fmt.Errorf("no provider plugin serves kind %q", kind)
	}
	return p, nil
}

// fakeProvider lists the models in models; the rest is unused here.
type fakeProvider struct {
	kind string
	caps []core.ProviderCapability

	mu       sync.Mutex
	models   []core.Model
	lastKey  string
	lastBase string
}

func (p *fakeProvider) Kind() string                            { return p.kind }
func (p *fakeProvider) Capabilities() []core.ProviderCapability { return p.caps }
func (p *fakeProvider) Stream(context.Context, core.Endpoint, core.ProviderRequest) (core.ProviderStream, error) {
	return nil, core.Errorf(core.CodeUnavailable, "fake provider does not stream")
}
func (p *fakeProvider) Complete(context.Context, core.Endpoint, core.ProviderRequest) (core.Completion, error) {
	return core.Completion{}, core.Errorf(core.CodeUnavailable, "fake provider does not complete")
}
func (p *fakeProvider) ListModels(ctx context.Context, ep core.Endpoint) ([]core.Model, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lastKey, p.lastBase = ep.APIKey, ep.BaseURL
	return p.models, nil
}

func (p *fakeProvider) setModels(ids ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.models = nil
	for _, id := range ids {
		p.models = append(p.models, core.Model{ID: id})
	}
}

// nativeProvider wraps a real provider and declares native compaction.
type nativeProvider struct {
	core.Provider
	compactions int
}

func (p *nativeProvider) Capabilities() []core.ProviderCapability {
	return append(p.Provider.Capabilities(), core.CapNativeCompactor)
}

func (p *nativeProvider) CompactContext(ctx context.Context, ep core.Endpoint, req core.ProviderRequest) (core.Completion, error) {
	p.compactions++
	return core.Completion{Text: "## Goal\nnative summary", FinishReason: "stop"}, nil
}
