package sdk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	foyav1 "github.com/foya-dev/foya/plugins/proto/foya/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
)

// providerServer serves a Provider over the foya.v1 contract.
type providerServer struct {
	foyav1.UnimplementedProviderServer
	p    Provider
	info ProviderInfo
	caps map[Capability]bool
	log  *slog.Logger
}

func newProviderServer(p Provider, log *slog.Logger) (*providerServer, error) {
	info := p.Describe()
	caps := map[Capability]bool{}
	for _, c := range info.Capabilities {
		var ok bool
		switch c {
		case CapCompleter:
			_, ok = p.(Completer)
		case CapDetailedCompleter:
			_, ok = p.(DetailedCompleter)
		case CapModelLister:
			_, ok = p.(ModelLister)
		case CapCapabilityResolver:
			_, ok = p.(CapabilityResolver)
		case CapWebSearch:
			_, ok = p.(WebSearcher)
		case CapImageGenerator:
			_, ok = p.(ImageGenerator)
		case CapNativeCompactor:
			_, ok = p.(NativeCompactor)
		case CapVideoGenerator:
			_, ok = p.(VideoGenerator)
		default:
			return nil, fmt.Errorf("provider %s declares capability %q that protocol v%d does not carry", info.Kind, c, ProtocolVersion)
		}
		if !ok {
			return nil, fmt.Errorf("provider %s declares %q but does not implement its interface", info.Kind, c)
		}
		caps[c] = true
	}
	return &providerServer{p: p, info: info, caps: caps, log: log}, nil
}

func (s *providerServer) Describe(context.Context, *foyav1.DescribeRequest) (*foyav1.ProviderInfo, error) {
	out := &foyav1.ProviderInfo{Kind: s.info.Kind, Version: s.info.Version}
	for _, c := range s.info.Capabilities {
		out.Capabilities = append(out.Capabilities, string(c))
	}
	return out, nil
}

// sender turns SDK calls into stream events; gRPC streams do not allow
// concurrent sends, hence the mutex.
type sender struct {
	mu      sync.Mutex
	srv     foyav1.Provider_StreamServer
	yielded bool
	refusal strings.Builder // sent with Done
}

func (s *sender) send(ev *foyav1.StreamEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.srv.Send(ev); err != nil {
		return fmt.Errorf("send stream event: %w", err)
	}
	if !s.yielded {
		// The first event of a reply is its first token: let it leave now.
		// A plugin that streams fast keeps its CPU busy reading and
		// decoding the next chunks, and on a busy machine the goroutine
		// that writes the gRPC frame, and then the kernel's thread that
		// receives it, would wait for the end of this thread's time slice
		// (~1.5 ms median measured under BenchmarkDeltaPath; 0.2 ms with
		// this). Once per stream.
		s.yielded = true
		yieldCPU()
	}
	return nil
}

func (s *sender) Text(text string) error {
	return s.send(&foyav1.StreamEvent{Event: &foyav1.StreamEvent_Text{Text: &foyav1.TextDelta{Text: text}}})
}

func (s *sender) Reasoning(text string) error {
	return s.send(&foyav1.StreamEvent{Event: &foyav1.StreamEvent_Reasoning{Reasoning: &foyav1.TextDelta{Text: text}}})
}

func (s *sender) ToolCall(d ToolCallDelta) error {
	return s.send(&foyav1.StreamEvent{Event: &foyav1.StreamEvent_ToolCall{ToolCall: &foyav1.ToolCallDelta{
		Index: int32(d.Index), Id: d.ID, Name: d.Name, Arguments: d.Arguments,
	}}})
}

func (s *sender) Usage(u Usage) error {
	return s.send(&foyav1.StreamEvent{Event: &foyav1.StreamEvent_Usage{Usage: usageToProto(&u)}})
}

func (s *sender) State(data []byte) error {
	return s.send(&foyav1.StreamEvent{Event: &foyav1.StreamEvent_State{State: &foyav1.ProviderState{Data: data}}})
}

// Refusal implements RefusalSender: the text goes out with Done.
func (s *sender) Refusal(text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refusal.Len()+len(text) <= maxRefusalBytes {
		s.refusal.WriteString(text)
	}
	return nil
}

func (s *providerServer) Stream(req *foyav1.StreamRequest, srv foyav1.Provider_StreamServer) error {
	ctx := srv.Context()
	out := &sender{srv: srv}
	// req is not used after the call: the history it carries (and the
	// provider's copy of it) can go once the provider sent its request,
	// rather than stay for as long as the reply streams.
	model := req.GetRequest().GetModel()
	reason, err := s.p.Stream(ctx, endpointFromProto(req.GetEndpoint()), requestFromProto(req.GetRequest()), out)
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	if err != nil {
		pe := asError(err)
		s.log.Warn("stream failed", "model", model, "category", string(pe.Category), "status", pe.StatusCode)
		return out.send(&foyav1.StreamEvent{Event: &foyav1.StreamEvent_Error{Error: errorToProto(pe)}})
	}
	out.mu.Lock()
	refusal := out.refusal.String()
	out.mu.Unlock()
	return out.send(&foyav1.StreamEvent{Event: &foyav1.StreamEvent_Done{Done: &foyav1.Done{FinishReason: reason, Refusal: refusal}}})
}

func (s *providerServer) require(c Capability) error {
	if s.caps[c] {
		return nil
	}
	return status.Errorf(codes.Unimplemented, "provider %s does not support %s", s.info.Kind, c)
}

func (s *providerServer) Complete(ctx context.Context, req *foyav1.CompleteRequest) (*foyav1.CompleteResponse, error) {
	if err := s.require(CapCompleter); err != nil {
		return nil, err
	}
	c, err := s.p.(Completer).Complete(ctx, endpointFromProto(req.GetEndpoint()), requestFromProto(req.GetRequest()))
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return completionToProto(c), nil
}

func (s *providerServer) CompleteDetailed(ctx context.Context, req *foyav1.CompleteRequest) (*foyav1.CompleteResponse, error) {
	if err := s.require(CapDetailedCompleter); err != nil {
		return nil, err
	}
	c, err := s.p.(DetailedCompleter).CompleteDetailed(ctx, endpointFromProto(req.GetEndpoint()), requestFromProto(req.GetRequest()))
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return completionToProto(c), nil
}

func (s *providerServer) CompactContext(ctx context.Context, req *foyav1.CompleteRequest) (*foyav1.CompleteResponse, error) {
	if err := s.require(CapNativeCompactor); err != nil {
		return nil, err
	}
	c, err := s.p.(NativeCompactor).CompactContext(ctx, endpointFromProto(req.GetEndpoint()), requestFromProto(req.GetRequest()))
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return completionToProto(c), nil
}

func (s *providerServer) ListModels(ctx context.Context, req *foyav1.ListModelsRequest) (*foyav1.ListModelsResponse, error) {
	if err := s.require(CapModelLister); err != nil {
		return nil, err
	}
	models, err := s.p.(ModelLister).ListModels(ctx, endpointFromProto(req.GetEndpoint()))
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	out := &foyav1.ListModelsResponse{}
	for _, m := range models {
		out.Models = append(out.Models, &foyav1.Model{Id: m.ID, Capabilities: capabilitiesToProto(m.Capabilities)})
	}
	return out, nil
}

func (s *providerServer) ResolveCapabilities(ctx context.Context, req *foyav1.ResolveCapabilitiesRequest) (*foyav1.Capabilities, error) {
	if err := s.require(CapCapabilityResolver); err != nil {
		return nil, err
	}
	c, err := s.p.(CapabilityResolver).ResolveCapabilities(ctx, endpointFromProto(req.GetEndpoint()), req.GetModel())
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return capabilitiesToProto(c), nil
}

func (s *providerServer) WebSearch(ctx context.Context, req *foyav1.WebSearchRequest) (*foyav1.WebSearchResponse, error) {
	if err := s.require(CapWebSearch); err != nil {
		return nil, err
	}
	r, err := s.p.(WebSearcher).WebSearch(ctx, endpointFromProto(req.GetEndpoint()), WebSearchRequest{Model: req.GetModel(), Query: req.GetQuery()})
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return webSearchToProto(r), nil
}

func (s *providerServer) GenerateImage(ctx context.Context, req *foyav1.GenerateImageRequest) (*foyav1.GenerateImageResponse, error) {
	if err := s.require(CapImageGenerator); err != nil {
		return nil, err
	}
	r, err := s.p.(ImageGenerator).GenerateImage(ctx, endpointFromProto(req.GetEndpoint()), ImageRequest{
		Model: req.GetModel(), Prompt: req.GetPrompt(), Size: req.GetSize(), Count: int(req.GetCount()),
	})
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	out := &foyav1.GenerateImageResponse{Usage: usageToProto(r.Usage)}
	for _, im := range r.Images {
		out.Images = append(out.Images, &foyav1.GeneratedImage{MediaType: im.MediaType, Data: im.Data, RevisedPrompt: im.RevisedPrompt})
	}
	return out, nil
}

func (s *providerServer) GenerateVideo(ctx context.Context, req *foyav1.GenerateVideoRequest) (*foyav1.GenerateVideoResponse, error) {
	if err := s.require(CapVideoGenerator); err != nil {
		return nil, err
	}
	r, err := s.p.(VideoGenerator).GenerateVideo(ctx, endpointFromProto(req.GetEndpoint()), VideoRequest{
		Model: req.GetModel(), Prompt: req.GetPrompt(), Protocol: req.GetProtocol(),
		DurationSeconds: int(req.GetDurationSeconds()), Size: req.GetSize(),
	})
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	out := &foyav1.GenerateVideoResponse{Usage: usageToProto(r.Usage)}
	for _, v := range r.Videos {
		out.Videos = append(out.Videos, &foyav1.GeneratedVideo{MediaType: v.MediaType, Data: v.Data})
	}
	return out, nil
}

// toolsServer serves a ToolSet.
type toolsServer struct {
	foyav1.UnimplementedToolsServer
	t ToolSet
}

func (s *toolsServer) Describe(ctx context.Context, _ *foyav1.DescribeRequest) (*foyav1.ToolSetInfo, error) {
	info, err := s.t.Describe(ctx)
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return toolSetInfoToProto(info), nil
}

func (s *toolsServer) Call(ctx context.Context, req *foyav1.ToolCallRequest) (*foyav1.ToolCallResponse, error) {
	res, err := s.t.Call(ctx, ToolCallRequest{
		SessionID:  req.GetSessionId(),
		WorkDir:    req.GetWorkDir(),
		ToolCallID: req.GetToolCallId(),
		Name:       req.GetName(),
		Input:      rawJSON(req.GetInputJson()),
		ScopeDir:   req.GetScopeDir(),
		Timeout:    time.Duration(req.GetTimeoutMs()) * time.Millisecond,
	})
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return toolResultToProto(res), nil
}

// asError classifies err; unclassified errors count as server errors.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Category: CategoryServer, Message: err.Error()}
}

// categoryCodes picks a gRPC code per category. The host reads the
// ProviderError detail first; the code is for generic gRPC tooling. Network
// failures of the remote service are not codes.Unavailable, which the host
// reserves for a broken plugin connection.
var categoryCodes = map[ErrorCategory]codes.Code{
	CategoryContextOverflow: codes.InvalidArgument,
	CategoryRateLimit:       codes.ResourceExhausted,
	CategoryQuota:           codes.ResourceExhausted,
	CategoryThrottling:      codes.ResourceExhausted,
	CategoryOutputLimit:     codes.OutOfRange,
	CategoryAuth:            codes.Unauthenticated,
	CategoryNetwork:         codes.Aborted,
	CategoryBadRequest:      codes.InvalidArgument,
	CategoryServer:          codes.Internal,
	CategoryUnavailable:     codes.Unimplemented,
	CategoryBadResponse:     codes.Internal,
}

// toStatus turns a plugin error into a gRPC status carrying a ProviderError
// detail.
func toStatus(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	pe := asError(err)
	st := status.New(categoryCodes[pe.Category], pe.Message)
	if withDetail, derr := st.WithDetails(protoadapt.MessageV1Of(errorToProto(pe))); derr == nil {
		st = withDetail
	}
	return st.Err()
}
