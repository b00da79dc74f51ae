package core

import "context"

// Sampling is a model call an MCP server asks of the client
// (sampling/createMessage) during one of its tool calls: the server's
// messages answered by the session's model.
type Sampling struct {
	// Server is the name of the MCP server that asks.
	Server       string
	SystemPrompt string
	// Messages are the conversation to answer (user and assistant turns;
	// text and images).
	Messages []ProviderMessage
	// MaxTokens is the most the server wants back.
	MaxTokens int64
}

// SamplingResult is the model's answer to a Sampling.
type SamplingResult struct {
	Text  string
	Model string
	// FinishReason is the provider's: stop, length, …
	FinishReason string
}

// Sampler answers an MCP server's sampling request with the session of a
// tool call; the turn engine puts one in the context of every tool call
// (WithSampler). It asks the person first unless the session runs without
// approvals, and refuses with a *Error when it may not or cannot sample.
type Sampler interface {
	Sample(ctx context.Context, req Sampling) (SamplingResult, error)
}

type samplerKey struct{}

// WithSampler attaches the sampler of a tool call to its context.
func WithSampler(ctx context.Context, s Sampler) context.Context {
	return context.WithValue(ctx, samplerKey{}, s)
}

// SamplerOf returns the sampler of a tool call's context, or nil.
func SamplerOf(ctx context.Context) Sampler {
	s, _ := ctx.Value(samplerKey{}).(Sampler)
	return s
}
