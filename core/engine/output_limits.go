package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/foya-dev/foya/core"
)

// OutputLimits bounds what one model reply can make the kernel hold and
// how long it may take (docs/limits.md, "Model output"). Zero fields take
// the defaults below; a negative field is refused by the serve flags.
//
// At a byte or token cap the stream is closed, what arrived is kept up to
// the cap, the message is marked Truncated and the turn ends with the code
// OUTPUT_LIMIT. A tool call whose arguments pass ToolArgsBytes is not run:
// the model gets a tool error saying so and the turn goes on. A stall of
// IdleTimeout is a network error (retried as such when nothing arrived).
type OutputLimits struct {
	// TextBytes bounds the text of one assistant message.
	TextBytes int
	// ReasoningBytes bounds the reasoning of one assistant message.
	ReasoningBytes int
	// ToolArgsBytes bounds the arguments of one tool call.
	ToolArgsBytes int
	// TurnOutputTokens bounds the output tokens of one turn, all its model
	// requests together; each request asks the provider for at most what is
	// left (see maxOutputFor).
	TurnOutputTokens int64
	// CallTimeout bounds one model request from its start to its last byte.
	CallTimeout time.Duration
	// IdleTimeout bounds the time between two stream events of one request
	// (and before the first).
	IdleTimeout time.Duration
}

// Defaults of OutputLimits.
const (
	DefaultMaxReplyTextBytes      = 4 << 20
	DefaultMaxReplyReasoningBytes = 4 << 20
	DefaultMaxToolArgsBytes       = 1 << 20
	DefaultMaxTurnOutputTokens    = 1_000_000
	DefaultModelCallTimeout       = 30 * time.Minute
	DefaultModelIdleTimeout       = 5 * time.Minute
)

// unknownMaxOutputSend is the largest remaining turn budget sent as a
// request's max output when the model declares no output limit of its own:
// small enough for any current model to accept. Above it nothing is sent and
// the kernel counts the budget alone.
const unknownMaxOutputSend = 16_384

// CodeOutputLimit is the code of a turn that ended at an output cap: the
// code field of its turn_finished payload. It is not an API error code
// (nothing is refused), so it is not among the Code constants.
const CodeOutputLimit = "OUTPUT_LIMIT"

func (l OutputLimits) withDefaults() OutputLimits {
	if l.TextBytes <= 0 {
		l.TextBytes = DefaultMaxReplyTextBytes
	}
	if l.ReasoningBytes <= 0 {
		l.ReasoningBytes = DefaultMaxReplyReasoningBytes
	}
	if l.ToolArgsBytes <= 0 {
		l.ToolArgsBytes = DefaultMaxToolArgsBytes
	}
	if l.TurnOutputTokens <= 0 {
		l.TurnOutputTokens = DefaultMaxTurnOutputTokens
	}
	if l.CallTimeout <= 0 {
		l.CallTimeout = DefaultModelCallTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultModelIdleTimeout
	}
	return l
}

// maxOutputFor is the max output of a request that the model declares
// declared tokens for (0: none), with left tokens of the turn's budget:
// the smaller of the two; with no declaration the budget only when it is
// small (unknownMaxOutputSend), since an unknown model may refuse more.
func maxOutputFor(declared, left int64) int64 {
	switch {
	case declared > 0:
		return min(declared, left)
	case left <= unknownMaxOutputSend:
		return left
	}
	return 0
}

// errModelIdle and errModelCallTime are the causes of a model request cut
// by its idle or total time.
var (
	errModelIdle     = errors.New("model request idle")
	errModelCallTime = errors.New("model request total time")
)

// outputCap is a cap a reply reached: what it was and the reason told.
type outputCap struct {
	what   string // "text", "reasoning", "tokens", "time"
	reason string
}

func sizeMiB(n int) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func (l OutputLimits) textCap() outputCap {
	return outputCap{"text", fmt.Sprintf("output_limit: the reply's text reached %s, the limit of one message (foya serve --max-reply-text); the stream was closed and the text kept up to the limit", sizeMiB(l.TextBytes))}
}

func (l OutputLimits) reasoningCap() outputCap {
	return outputCap{"reasoning", fmt.Sprintf("output_limit: the reply's reasoning reached %s, the limit of one message (foya serve --max-reply-reasoning); the stream was closed and the reasoning kept up to the limit", sizeMiB(l.ReasoningBytes))}
}

func (l OutputLimits) tokensCap() outputCap {
	return outputCap{"tokens", fmt.Sprintf("output_limit: the turn's output reached %d tokens, the limit of one turn (foya serve --max-turn-output-tokens)", l.TurnOutputTokens)}
}

func (l OutputLimits) timeCap() outputCap {
	return outputCap{"time", fmt.Sprintf("output_limit: the model request ran for %s, the limit of one request (foya serve --model-call-timeout); the stream was closed and what arrived kept", l.CallTimeout)}
}

// toolArgsRefusal is the tool error a call whose arguments passed the cap
// gets instead of running.
func (l OutputLimits) toolArgsRefusal() string {
	return fmt.Sprintf("This call was not run: its arguments were larger than %s, the limit of one tool call's arguments (foya serve --max-tool-call-args), and were cut off. Send smaller arguments, e.g. write a large file in several smaller edits or appends.", sizeMiB(l.ToolArgsBytes))
}

func (l OutputLimits) idleError() *core.ProviderError {
	return &core.ProviderError{Category: core.ProviderNetwork, Message: fmt.Sprintf("no data from the model for %s, the idle limit of a model request (foya serve --model-idle-timeout)", l.IdleTimeout)}
}
