package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/foya-dev/foya/core"
	foyav1 "github.com/foya-dev/foya/plugins/proto/foya/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// clientSource hands out the gRPC clients of a plugin, starting or
// restarting it as needed, and hears about broken connections.
type clientSource interface {
	// acquire returns live clients for one call or stream; release ends
	// it (the plugin is not stopped for idleness while a call is in
	// progress). release may be called more than once.
	acquire(ctx context.Context) (c *clients, release func(), err error)
	broken(c *clients, err error)
	// stopped reports whether the plugin is stopped while idle or unused
	// (not crashed): what it described last still stands.
	stopped() bool
	// warm starts a stopped plugin in the background ahead of a call.
	warm()
}

// clients is one live connection to a plugin process.
type clients struct {
	provider foyav1.ProviderClient
	tools    foyav1.ToolsClient
	// protocol is the negotiated plugin protocol version.
	protocol int
}

// providerAdapter implements core.Provider and the optional capability
// interfaces over a provider plugin. Undeclared capabilities fail with
// UNAVAILABLE before anything is sent (PRV-7).
type providerAdapter struct {
	plugin string
	src    clientSource
	kind   string
	caps   []core.ProviderCapability
}

var (
	_ core.Provider           = (*providerAdapter)(nil)
	_ core.DetailedCompleter  = (*providerAdapter)(nil)
	_ core.CapabilityResolver = (*providerAdapter)(nil)
	_ core.WebSearcher        = (*providerAdapter)(nil)
	_ core.ImageGenerator     = (*providerAdapter)(nil)
	_ core.NativeCompactor    = (*providerAdapter)(nil)
	_ core.VideoGenerator     = (*providerAdapter)(nil)
)

// newProviderAdapter adapts a plugin that speaks protocol version protocol.
// Protocol 1 has no native compactor or image generator, so a declared one
// is ignored.
func newProviderAdapter(plugin string, src clientSource, info *foyav1.ProviderInfo, protocol int) *providerAdapter {
	a := &providerAdapter{plugin: plugin, src: src, kind: info.GetKind()}
	for _, c := range info.GetCapabilities() {
		if (core.ProviderCapability(c) == core.CapNativeCompactor || core.ProviderCapability(c) == core.CapImageGenerator || core.ProviderCapability(c) == core.CapVideoGenerator) && protocol < 2 {
			continue
		}
		a.caps = append(a.caps, core.ProviderCapability(c))
	}
	return a
}

func (a *providerAdapter) Kind() string { return a.kind }

func (a *providerAdapter) Capabilities() []core.ProviderCapability { return slices.Clone(a.caps) }

func (a *providerAdapter) require(c core.ProviderCapability) error {
	if slices.Contains(a.caps, c) {
		return nil
	}
	return core.Errorf(core.CodeUnavailable, "provider %s does not support %s", a.kind, c)
}

// call runs fn against a live client, reporting transport failures so the
// next call restarts the plugin.
func (a *providerAdapter) call(ctx context.Context, fn func(*clients) error) error {
	return callPlugin(ctx, a.src, a.kind, fn)
}

// callPlugin runs fn against live clients of src as one call in progress;
// a transport failure is reported so that the next call restarts the
// plugin, and errors are mapped to coded ones naming name.
func callPlugin(ctx context.Context, src clientSource, name string, fn func(*clients) error) error {
	c, release, err := src.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	if err := fn(c); err != nil {
		if isTransportFailure(err) {
			src.broken(c, err)
		}
		return mapError(name, err)
	}
	return nil
}

func (a *providerAdapter) Stream(ctx context.Context, ep core.Endpoint, req core.ProviderRequest) (core.ProviderStream, error) {
	c, release, err := a.src.acquire(ctx)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	st, err := c.provider.Stream(sctx, &foyav1.StreamRequest{Endpoint: endpointToProto(ep), Request: requestToProto(req)}, grpc.MaxCallRecvMsgSize(MaxStreamEventBytes))
	if err != nil {
		cancel()
		release()
		if isTransportFailure(err) {
			a.src.broken(c, err)
		}
		return nil, mapError(a.kind, err)
	}
	return &stream{a: a, c: c, st: st, cancel: cancel, release: release}, nil
}

// tooLarge reports gRPC's own refusal of an oversized message (a
// provider's rate limit, also ResourceExhausted, carries its ProviderError
// detail).
func tooLarge(err error) bool {
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.ResourceExhausted && len(st.Details()) == 0
}

// answerLimit bounds every answer of a plugin process as the kernel
// receives it (go-plugin's client would take up to 2 GiB): 32 MiB, what a
// completion, a model list or a tool result may be; a generation's answer
// has its own limit (generatedLimit), set on its call.
var answerLimit = grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxStreamEventBytes))

// generatedLimit bounds a generation's answer as the kernel receives it:
// n results (at least one) at the attachment limit each, which the kernel
// keeps them under, plus 1 MiB for the rest of the message.
func generatedLimit(n int) int { return max(n, 1)*core.MaxAttachmentBytes + 1<<20 }

// oversized names an answer gRPC refused for its size; other errors pass.
func oversized(kind, what string, limit int, err error) error {
	if tooLarge(err) {
		return &core.ProviderError{Category: core.ProviderServer,
			Message: fmt.Sprintf("provider %s answered with %s larger than %d MiB in all, the limit of that answer (%d MiB per generated file)", kind, what, limit>>20, core.MaxAttachmentBytes>>20)}
	}
	return err
}

// MaxStreamEventBytes bounds one event of a provider stream as the kernel
// receives it (a larger one fails the stream): a reply's deltas are capped
// far below (engine.OutputLimits) and its native state at 8 MiB, so what one
// running stream holds stays bounded whatever a plugin sends.
const MaxStreamEventBytes = 32 << 20

// warm starts the plugin process if it is stopped, ahead of a call (see
// Manager.Provider).
func (a *providerAdapter) warm() { a.src.warm() }

// stream adapts a gRPC event stream to core.ProviderStream. After a done or
// error event Recv returns io.EOF. The stream counts as a call in progress
// of its plugin until it ends or is closed.
type stream struct {
	a       *providerAdapter
	c       *clients
	st      foyav1.Provider_StreamClient
	cancel  context.CancelFunc
	release func()
	mu      sync.Mutex
	ended   bool
}

func (s *stream) Recv() (core.StreamEvent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return core.StreamEvent{}, io.EOF
	}
	for {
		ev, err := s.st.Recv()
		if errors.Is(err, io.EOF) {
			s.ended = true
			s.release()
			return core.StreamEvent{}, &core.Error{Code: core.CodeUnavailable, Message: "provider " + s.a.kind + " ended the stream without a done event"}
		}
		if err != nil {
			s.ended = true
			s.release()
			if tooLarge(err) {
				return core.StreamEvent{}, &core.ProviderError{Category: core.ProviderServer,
					Message: fmt.Sprintf("provider %s sent a stream event larger than %d MiB, the limit of one event", s.a.kind, MaxStreamEventBytes>>20)}
			}
			if isTransportFailure(err) {
				s.a.src.broken(s.c, err)
			}
			return core.StreamEvent{}, mapError(s.a.kind, err)
		}
		out, ok := eventFromProto(ev)
		if !ok {
			continue
		}
		if out.Kind == core.StreamDone || out.Kind == core.StreamError {
			s.ended = true
			s.release()
		}
		return out, nil
	}
}

func (s *stream) Close() error {
	s.cancel()
	s.release()
	return nil
}

func (a *providerAdapter) complete(ctx context.Context, ep core.Endpoint, req core.ProviderRequest, detailed bool) (core.Completion, error) {
	var out core.Completion
	err := a.call(ctx, func(c *clients) error {
		in := &foyav1.CompleteRequest{Endpoint: endpointToProto(ep), Request: requestToProto(req)}
		var r *foyav1.CompleteResponse
		var err error
		limit := grpc.MaxCallRecvMsgSize(MaxStreamEventBytes) // a completion is one message
		if detailed {
			r, err = c.provider.CompleteDetailed(ctx, in, limit)
		} else {
			r, err = c.provider.Complete(ctx, in, limit)
		}
		if err == nil {
			out = completionFromProto(r)
		}
		return err
	})
	return out, err
}

func (a *providerAdapter) Complete(ctx context.Context, ep core.Endpoint, req core.ProviderRequest) (core.Completion, error) {
	if err := a.require(core.CapCompleter); err != nil {
		return core.Completion{}, err
	}
	return a.complete(ctx, ep, req, false)
}

func (a *providerAdapter) CompleteDetailed(ctx context.Context, ep core.Endpoint, req core.ProviderRequest) (core.Completion, error) {
	if err := a.require(core.CapDetailedCompleter); err != nil {
		return core.Completion{}, err
	}
	return a.complete(ctx, ep, req, true)
}

// CompactContext calls the plugin's native compactor (protocol 2).
func (a *providerAdapter) CompactContext(ctx context.Context, ep core.Endpoint, req core.ProviderRequest) (core.Completion, error) {
	if err := a.require(core.CapNativeCompactor); err != nil {
		return core.Completion{}, err
	}
	var out core.Completion
	err := a.call(ctx, func(c *clients) error {
		r, err := c.provider.CompactContext(ctx, &foyav1.CompleteRequest{Endpoint: endpointToProto(ep), Request: requestToProto(req)})
		if err == nil {
			out = completionFromProto(r)
		}
		return err
	})
	return out, err
}

func (a *providerAdapter) ListModels(ctx context.Context, ep core.Endpoint) ([]core.Model, error) {
	if err := a.require(core.CapModelLister); err != nil {
		return nil, err
	}
	var out []core.Model
	err := a.call(ctx, func(c *clients) error {
		r, err := c.provider.ListModels(ctx, &foyav1.ListModelsRequest{Endpoint: endpointToProto(ep)})
		for _, m := range r.GetModels() {
			out = append(out, core.Model{ID: m.GetId(), Capabilities: capabilitiesFromProto(m.GetCapabilities())})
		}
		return err
	})
	return out, err
}

func (a *providerAdapter) ResolveCapabilities(ctx context.Context, ep core.Endpoint, model string) (core.Capabilities, error) {
	if err := a.require(core.CapCapabilityResolver); err != nil {
		return core.Capabilities{}, err
	}
	var out core.Capabilities
	err := a.call(ctx, func(c *clients) error {
		r, err := c.provider.ResolveCapabilities(ctx, &foyav1.ResolveCapabilitiesRequest{Endpoint: endpointToProto(ep), Model: model})
		if err == nil {
			out = capabilitiesFromProto(r)
		}
		return err
	})
	return out, err
}

func (a *providerAdapter) WebSearch(ctx context.Context, ep core.Endpoint, req core.WebSearchRequest) (core.WebSearchResult, error) {
	if err := a.require(core.CapWebSearch); err != nil {
		return core.WebSearchResult{}, err
	}
	var out core.WebSearchResult
	err := a.call(ctx, func(c *clients) error {
		r, err := c.provider.WebSearch(ctx, &foyav1.WebSearchRequest{Endpoint: endpointToProto(ep), Model: req.Model, Query: req.Query})
		if err != nil {
			return err
		}
		out = core.WebSearchResult{Text: r.GetText(), Usage: usageFromProto(r.GetUsage())}
		for _, s := range r.GetSources() {
			out.Sources = append(out.Sources, core.WebSource{Title: s.GetTitle(), URL: s.GetUrl()})
		}
		return nil
	})
	return out, err
}

func (a *providerAdapter) GenerateImage(ctx context.Context, ep core.Endpoint, req core.ImageRequest) (core.ImageResult, error) {
	if err := a.require(core.CapImageGenerator); err != nil {
		return core.ImageResult{}, err
	}
	var out core.ImageResult
	err := a.call(ctx, func(c *clients) error {
		limit := generatedLimit(req.Count)
		r, err := c.provider.GenerateImage(ctx, &foyav1.GenerateImageRequest{Endpoint: endpointToProto(ep), Model: req.Model, Prompt: req.Prompt, Size: req.Size, Count: int32(req.Count)}, grpc.MaxCallRecvMsgSize(limit))
		if err != nil {
			return oversized(a.kind, "images", limit, err)
		}
		out = core.ImageResult{Usage: usageFromProto(r.GetUsage())}
		for _, im := range r.GetImages() {
			out.Images = append(out.Images, core.GeneratedImage{MediaType: im.GetMediaType(), Data: im.GetData(), RevisedPrompt: im.GetRevisedPrompt()})
		}
		return nil
	})
	return out, err
}

func (a *providerAdapter) GenerateVideo(ctx context.Context, ep core.Endpoint, req core.VideoRequest) (core.VideoResult, error) {
	if err := a.require(core.CapVideoGenerator); err != nil {
		return core.VideoResult{}, err
	}
	var out core.VideoResult
	err := a.call(ctx, func(c *clients) error {
		limit := generatedLimit(1)
		r, err := c.provider.GenerateVideo(ctx, &foyav1.GenerateVideoRequest{Endpoint: endpointToProto(ep), Model: req.Model, Prompt: req.Prompt, Protocol: req.Protocol, DurationSeconds: int32(req.DurationSeconds), Size: req.Size}, grpc.MaxCallRecvMsgSize(limit))
		if err != nil {
			return oversized(a.kind, "a video", limit, err)
		}
		out = core.VideoResult{Usage: usageFromProto(r.GetUsage())}
		for _, v := range r.GetVideos() {
			out.Videos = append(out.Videos, core.GeneratedVideo{MediaType: v.GetMediaType(), Data: v.GetData()})
		}
		return nil
	})
	return out, err
}
