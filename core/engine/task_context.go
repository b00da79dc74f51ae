package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/foya-dev/foya/core"
)

// taskContext is the context argument of the task tool (MSG-10): messages
// of the parent, by seq, handed to the child before its prompt.
type taskContext struct {
	Seqs    []int64 `json:"seqs"`
	FromSeq *int64  `json:"fromSeq"`
	ToSeq   *int64  `json:"toSeq"`
}

// maxTaskContextTokens bounds the messages a task call hands its child,
// whatever the child's model; a smaller model gets half its input budget.
const maxTaskContextTokens = 64000

// parentContext returns the parent's messages that c names, in seq order,
// from what the parent's model sees now: its active history after its
// compaction checkpoint (rewound and compacted-away messages cannot be
// passed). why explains a refusal: a seq that names no such message, an
// empty range, a tool result without its call, or more tokens than the
// child's budget allows.
func parentContext(ctx context.Context, e *Engine, s core.Session, childConn, childModel string, c taskContext) (msgs []core.Message, why string) {
	if len(c.Seqs) == 0 && c.FromSeq == nil && c.ToSeq == nil {
		return nil, "task: context: give seqs, fromSeq or toSeq (or leave context out)"
	}
	if c.FromSeq != nil && c.ToSeq != nil && *c.FromSeq > *c.ToSeq {
		return nil, fmt.Sprintf("task: context: fromSeq %d is after toSeq %d", *c.FromSeq, *c.ToSeq)
	}
	b, err := e.models.resolve(ctx, s)
	if err != nil {
		return nil, "task: " + core.ErrorMessage(err)
	}
	all, err := e.svc.History(ctx, s, false)
	if err != nil {
		return nil, "task: " + core.ErrorMessage(err)
	}
	visible := afterCheckpoint(all, e.compactor.checkpoint(ctx, s, b.route, all))
	idx, why := pickContext(visible, c)
	if why != "" {
		return nil, why
	}
	msgs, chars, why := contextMessages(visible, idx)
	if why != "" {
		return nil, why
	}
	limit := int64(maxTaskContextTokens)
	cs := s
	cs.ConnectionID, cs.Model = childConn, childModel
	if cb, err := e.models.resolve(ctx, cs); err == nil {
		limit = min(limit, InputBudget(cb.model.Capabilities)/2)
	} else {
		limit = min(limit, InputBudget(b.model.Capabilities)/2)
	}
	if tokens := estimateTokens(chars); tokens > limit {
		return nil, fmt.Sprintf("task: context: the %d messages chosen are about %d tokens, over the limit of %d (half the sub-agent model's input budget, at most %d); pass fewer messages, or restate what matters in the prompt", len(msgs), tokens, limit, maxTaskContextTokens)
	}
	return msgs, ""
}

// pickContext returns the sorted indexes in visible of the messages c
// names by seq or by range, or why it names none or an unknown one.
func pickContext(visible []core.Message, c taskContext) (idx []int, why string) {
	// The assistant message whose task call runs now may be passed too: its
	// unanswered calls are marked so in the child's view.
	bySeq := make(map[int64]int, len(visible))
	for i, m := range visible {
		bySeq[m.Seq] = i
	}
	span := func() string {
		if len(visible) == 0 {
			return "the conversation has no messages the model sees"
		}
		return fmt.Sprintf("the messages the model sees have seqs %d to %d", visible[0].Seq, visible[len(visible)-1].Seq)
	}
	pick := map[int]bool{}
	for _, seq := range c.Seqs {
		i, ok := bySeq[seq]
		if !ok {
			return nil, fmt.Sprintf("task: context.seqs: no message with seq %d in this conversation's active history (rewound or compacted messages cannot be passed; %s)", seq, span())
		}
		pick[i] = true
	}
	if c.FromSeq != nil || c.ToSeq != nil {
		from, to := int64(0), int64(1<<62)
		if c.FromSeq != nil {
			from = *c.FromSeq
		}
		if c.ToSeq != nil {
			to = *c.ToSeq
		}
		n := 0
		for i, m := range visible {
			if m.Seq >= from && m.Seq <= to {
				pick[i] = true
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Sprintf("task: context: no message between fromSeq and toSeq (%s)", span())
		}
	}
	idx = make([]int, 0, len(pick))
	for i := range pick {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	return idx, ""
}

// contextMessages are the picked messages with their size in characters,
// or why they cannot be passed: a tool result without the call's message.
func contextMessages(visible []core.Message, idx []int) (msgs []core.Message, chars int, why string) {
	calls := map[string]bool{}
	for _, i := range idx {
		m := visible[i]
		switch m.Role {
		case core.RoleAssistant:
			for _, tc := range m.ToolCalls {
				calls[tc.ID] = true
				chars += len(tc.Input) + len(tc.Name)
			}
		case core.RoleTool:
			if !calls[m.ToolCallID] {
				return nil, 0, fmt.Sprintf("task: context: seq %d is the result of a tool call whose message is not passed; pass the seq of the assistant message that made the call too", m.Seq)
			}
		}
		chars += len(m.Text)
		msgs = append(msgs, m)
	}
	return msgs, chars, ""
}
