// Package streamtest helps the providers' tests: a Recorder is an
// sdk.StreamSender that keeps everything a stream sent.
package streamtest

import (
	"strings"

	"github.com/foya-dev/foya/plugins/sdk"
)

// Recorder records the events of one stream.
type Recorder struct {
	TextOut, ReasoningOut strings.Builder
	StateOut              []byte
	Usages                []sdk.Usage
	Calls                 []sdk.ToolCallDelta
	RefusalOut            string
}

var _ sdk.StreamSender = (*Recorder)(nil)

func (r *Recorder) Text(s string) error                { r.TextOut.WriteString(s); return nil }
func (r *Recorder) Reasoning(s string) error           { r.ReasoningOut.WriteString(s); return nil }
func (r *Recorder) ToolCall(d sdk.ToolCallDelta) error { r.Calls = append(r.Calls, d); return nil }
func (r *Recorder) Usage(u sdk.Usage) error            { r.Usages = append(r.Usages, u); return nil }
func (r *Recorder) State(b []byte) error               { r.StateOut = b; return nil }

// Refusal implements sdk.RefusalSender.
func (r *Recorder) Refusal(s string) error { r.RefusalOut += s; return nil }
