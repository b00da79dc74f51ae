package sdk

import (
	"context"
)

// Capability is an optional provider feature. A plugin declares the ones it
// implements in ProviderInfo; the host never calls an undeclared one.
type Capability string

// Optional capabilities and the interface each one requires.
const (
	CapModelLister        Capability = "model_lister"        // ModelLister
	CapCapabilityResolver Capability = "capability_resolver" // CapabilityResolver
	CapCompleter          Capability = "completer"           // Completer
	CapDetailedCompleter  Capability = "detailed_completer"  // DetailedCompleter
	CapWebSearch          Capability = "web_search"          // WebSearcher
	CapImageGenerator     Capability = "image_generator"     // ImageGenerator
	CapVideoGenerator     Capability = "video_generator"     // VideoGenerator (protocol 2)
	CapNativeCompactor    Capability = "native_compactor"    // NativeCompactor (protocol 2)
)

// ProviderInfo describes a provider plugin.
type ProviderInfo struct {
	// Kind is the provider kind connections name, e.g. "openai".
	Kind         string
	Version      string
	Capabilities []Capability
}

// StreamSender delivers stream events to the host. Each method returns an
// error once the host has gone away or cancelled; stop then. It is safe for
// concurrent use.
type StreamSender interface {
	Text(text string) error
	Reasoning(text string) error
	ToolCall(delta ToolCallDelta) error
	Usage(u Usage) error
	// State sends the provider-native state of this reply (protocol 2):
	// opaque bytes, e.g. signed thinking blocks or encrypted reasoning
	// items, that the kernel persists with the message and hands back in
	// Message.State on the next requests of the same route only. Send it
	// at most once, when the reply is complete; the last one wins.
	State(data []byte) error
}

// RefusalSender is implemented by the host's StreamSender (protocol 2): a
// provider reports the service's explanation of a refusal, when the
// service sends one apart from the reply text, and returns the finish
// reason FinishRefusal. Use SendRefusal, which checks for it.
type RefusalSender interface {
	Refusal(text string) error
}

// SendRefusal passes text to out when out is a RefusalSender (wrappers
// should forward it); otherwise the text is dropped.
func SendRefusal(out StreamSender, text string) error {
	if r, ok := out.(RefusalSender); ok && text != "" {
		return r.Refusal(text)
	}
	return nil
}

// maxRefusalBytes bounds the refusal text kept for one reply.
const maxRefusalBytes = 64 << 10

// Normalized finish reasons a provider returns from Stream. A reason the
// service gives that has no equivalent here is passed on as the service
// spells it.
const (
	FinishStop          = "stop"
	FinishLength        = "length"
	FinishToolCalls     = "tool_calls"
	FinishContentFilter = "content_filter"
	FinishRefusal       = "refusal"
)

// Provider is what a provider plugin implements. Stream sends deltas through
// out and returns the finish reason; a returned error becomes the stream's
// final error event (use *Error to classify it). Stream must return promptly
// when ctx is cancelled.
type Provider interface {
	Describe() ProviderInfo
	Stream(ctx context.Context, ep Endpoint, req Request, out StreamSender) (finishReason string, err error)
}

// Completer is the "completer" capability: short non-streaming answers.
type Completer interface {
	Complete(ctx context.Context, ep Endpoint, req Request) (Completion, error)
}

// DetailedCompleter is the "detailed_completer" capability: finish reason
// and usage included.
type DetailedCompleter interface {
	CompleteDetailed(ctx context.Context, ep Endpoint, req Request) (Completion, error)
}

// ModelLister is the "model_lister" capability.
type ModelLister interface {
	ListModels(ctx context.Context, ep Endpoint) ([]Model, error)
}

// CapabilityResolver is the "capability_resolver" capability.
type CapabilityResolver interface {
	ResolveCapabilities(ctx context.Context, ep Endpoint, model string) (Capabilities, error)
}

// NativeCompactor is the "native_compactor" capability (PRV-7): compact
// req's history with the service's own compaction. Return the state that
// stands for it in Completion.State (it comes back as Request.State on the
// same route) and, optionally, a readable summary in Completion.Text.
type NativeCompactor interface {
	CompactContext(ctx context.Context, ep Endpoint, req Request) (Completion, error)
}

// ImageGenerator is the "image_generator" capability: image generation for
// image connections (PRV-2).
type ImageGenerator interface {
	GenerateImage(ctx context.Context, ep Endpoint, req ImageRequest) (ImageResult, error)
}

// VideoGenerator is the "video_generator" capability: video generation for
// video connections (PRV-2). VideoRequest.Protocol carries the connection's
// declared video protocol; a generator that does not speak it should return
// an error saying so.
type VideoGenerator interface {
	GenerateVideo(ctx context.Context, ep Endpoint, req VideoRequest) (VideoResult, error)
}

// VideoRequest asks a video connection's model for a video.
type VideoRequest struct {
	Model           string
	Prompt          string
	Protocol        string
	DurationSeconds int
	Size            string
}

// GeneratedVideo is one generated video.
type GeneratedVideo struct {
	MediaType string
	Data      []byte
}

// VideoResult is the answer of a video generation.
type VideoResult struct {
	Videos []GeneratedVideo
	Usage  *Usage
}

// WebSearcher is the "web_search" capability.
type WebSearcher interface {
	WebSearch(ctx context.Context, ep Endpoint, req WebSearchRequest) (WebSearchResult, error)
}
