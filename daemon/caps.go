package daemon

import (
	"flag"
	"time"

	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/internal/cmdutil"
)

// outputCapFlags are the serve flags of the model output caps
// (docs/limits.md, "Model output").
type outputCapFlags struct {
	text, reasoning, toolArgs *int
	tokens                    *int64
	callTimeout, idleTimeout  *time.Duration
}

func addOutputCapFlags(fs *flag.FlagSet) outputCapFlags {
	return outputCapFlags{
		text:        fs.Int("max-reply-text", engine.DefaultMaxReplyTextBytes, "bytes of text one model reply may stream; at the cap the stream is closed and the turn ends with OUTPUT_LIMIT"),
		reasoning:   fs.Int("max-reply-reasoning", engine.DefaultMaxReplyReasoningBytes, "bytes of reasoning one model reply may stream; at the cap the stream is closed and the turn ends with OUTPUT_LIMIT"),
		toolArgs:    fs.Int("max-tool-call-args", engine.DefaultMaxToolArgsBytes, "bytes of one tool call's arguments; a larger call is not run and the model gets a tool error"),
		tokens:      fs.Int64("max-turn-output-tokens", engine.DefaultMaxTurnOutputTokens, "output tokens of one turn, all its model requests together (sent to the provider as its max output where the model declares a limit)"),
		callTimeout: fs.Duration("model-call-timeout", engine.DefaultModelCallTimeout, "total time of one model request; at the cap the stream is closed and the turn ends with OUTPUT_LIMIT"),
		idleTimeout: fs.Duration("model-idle-timeout", engine.DefaultModelIdleTimeout, "time without data from a model request before it is a network error (retried when nothing arrived)"),
	}
}

// limits checks the flags' values.
func (f outputCapFlags) limits() (engine.OutputLimits, error) {
	l := engine.OutputLimits{TextBytes: *f.text, ReasoningBytes: *f.reasoning, ToolArgsBytes: *f.toolArgs,
		TurnOutputTokens: *f.tokens, CallTimeout: *f.callTimeout, IdleTimeout: *f.idleTimeout}
	switch {
	case l.TextBytes <= 0 || l.ReasoningBytes <= 0 || l.ToolArgsBytes <= 0:
		return l, cmdutil.Usagef("--max-reply-text, --max-reply-reasoning and --max-tool-call-args must be positive byte counts")
	case l.TurnOutputTokens <= 0:
		return l, cmdutil.Usagef("--max-turn-output-tokens %d: must be positive", l.TurnOutputTokens)
	case l.CallTimeout <= 0 || l.IdleTimeout <= 0:
		return l, cmdutil.Usagef("--model-call-timeout and --model-idle-timeout must be positive durations")
	}
	return l, nil
}
