package acp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/foya-dev/foya/client"
)

// Prompts and the turns that answer them.

// prompt sends the prompt (or answers the pending question with it) and
// answers when its turn ends.
func (s *session) prompt(ctx context.Context, blocks []json.RawMessage) (promptResponse, error) {
	text, attachments, err := s.input(ctx, blocks)
	if err != nil {
		return promptResponse{}, err
	}
	if isMCPCommand(text) && len(attachments) == 0 {
		return s.mcpCommand(ctx, text)
	}
	s.mu.Lock()
	question := s.question
	s.mu.Unlock()
	if question != "" && len(attachments) == 0 {
		// A pending question: this prompt is its answer. It answers when
		// the running turn ends.
		var err error
		switch strings.TrimSpace(text) {
		case "/decline": // refuse a server's question (the kernel refuses it for a model's)
			_, err = client.AnswerQuestionWithAction(ctx, s.a.k, s.id, question, "", client.QuestionActionDecline)
		case "/cancel":
			_, err = client.AnswerQuestionWithAction(ctx, s.a.k, s.id, question, "", client.QuestionActionCancel)
		default:
			_, err = client.AnswerQuestion(ctx, s.a.k, s.id, question, text)
		}
		var ce codedError
		if err == nil {
			s.mu.Lock()
			if s.question == question { // the next question may have come in already
				s.question = ""
			}
			s.mu.Unlock()
			return s.waitRunning(ctx)
		}
		if !(errors.As(err, &ce) && ce.GraphQLCode() == "CONFLICT") {
			return promptResponse{}, kernelError(err)
		}
	}
	in := client.UserInput{Text: &text}
	if len(attachments) > 0 {
		in.AttachmentIds = attachments
	}
	s.mu.Lock()
	after := s.turnsSeen
	s.mu.Unlock()
	r, err := client.ACPSendMessage(ctx, s.a.k, s.id, in)
	if err != nil {
		return promptResponse{}, kernelError(err)
	}
	p := &pendingPrompt{started: r.SendMessage.TurnStarted, after: after, result: make(chan turnResult, 1), answered: make(chan struct{})}
	if q := r.SendMessage.QueueItem; q != nil {
		p.queueItemID = q.Id
	}
	s.a.log.Debug("acp: prompt sent", "session_id", s.id, "started", p.started, "queue_item", p.queueItemID)
	s.register(p)
	return s.wait(ctx, p)
}

// waitRunning answers when the running turn ends (a prompt that answered a question).
func (s *session) waitRunning(ctx context.Context) (promptResponse, error) {
	p := &pendingPrompt{result: make(chan turnResult, 1), answered: make(chan struct{})}
	s.mu.Lock()
	var latest string
	best := -1
	for id, t := range s.turns {
		if !t.finished && t.index > best {
			latest, best = id, t.index
		}
	}
	if latest == "" {
		s.mu.Unlock()
		return promptResponse{StopReason: "end_turn"}, nil
	}
	p.turnID = latest
	s.prompts = append(s.prompts, p)
	s.mu.Unlock()
	return s.wait(ctx, p)
}

// wait answers when the prompt's turn ends (or ctx does).
func (s *session) wait(ctx context.Context, p *pendingPrompt) (promptResponse, error) {
	afterAnswer(ctx, func() { close(p.answered) })
	select {
	case r := <-p.result:
		return r.response()
	case <-ctx.Done():
		s.mu.Lock()
		s.removePrompt(p)
		s.mu.Unlock()
		return promptResponse{}, ctx.Err()
	}
}

// response is session/prompt's answer to how its turn ended.
func (r turnResult) response() (promptResponse, error) {
	if r.err != nil {
		return promptResponse{}, &rpcError{Code: codeInternalError, Message: r.err.Error()}
	}
	switch r.status {
	case "completed":
		return promptResponse{StopReason: "end_turn"}, nil
	case "refused":
		return promptResponse{StopReason: "refusal"}, nil
	case "cancelled":
		return promptResponse{StopReason: "cancelled"}, nil
	}
	if strings.Contains(r.reason, "max-steps guard") {
		return promptResponse{StopReason: "max_turn_requests"}, nil
	}
	return promptResponse{}, &rpcError{Code: codeInternalError, Message: "turn failed: " + cmp.Or(r.reason, "no reason given")}
}

// register binds a prompt to its turn when that already started (events can
// overtake the sendMessage response).
func (s *session) register(p *pendingPrompt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var id string
	var t *turnInfo
	for tid, ti := range s.turns {
		if ti.claimed || ti.index <= p.after {
			continue
		}
		// The kernel starts even an immediate turn through its queue, so a
		// started prompt's turn is the first one after it was sent.
		if (p.queueItemID != "" && ti.queueItemID == p.queueItemID) || p.started {
			if t == nil || ti.index < t.index {
				id, t = tid, ti
			}
		}
	}
	if t != nil {
		t.claimed = true
		p.turnID = id
		if t.finished {
			p.result <- turnResult{status: t.status, reason: t.reason}
			return
		}
	}
	s.prompts = append(s.prompts, p)
}

func (s *session) turnStarted(id, queueItemID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turnsSeen++
	ti := &turnInfo{index: s.turnsSeen, queueItemID: queueItemID}
	s.turns[id] = ti
	var match *pendingPrompt
	for _, p := range s.prompts {
		if p.turnID == "" && queueItemID != "" && p.queueItemID == queueItemID {
			match = p
			break
		}
	}
	if match == nil {
		for _, p := range s.prompts {
			if p.turnID == "" && p.started {
				match = p
				break
			}
		}
	}
	if match != nil {
		match.turnID, ti.claimed = id, true
	}
	// Forget old finished turns.
	for tid, t := range s.turns {
		if t.finished && t.index < s.turnsSeen-64 {
			delete(s.turns, tid)
		}
	}
}

// turnFinished answers the prompts of the turn; the caller waits on the
// returned channels until those answers are written (answeredWait), so
// that no update of the next turn goes out before them: a client takes
// the updates before a prompt's answer as that prompt's.
func (s *session) turnFinished(id, status, reason string) (answered []chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ti := s.turns[id]; ti != nil {
		if status == "completed" && s.refused {
			status = "refused"
		}
		ti.finished, ti.status, ti.reason = true, status, reason
	}
	if status == "completed" && s.refused {
		status = "refused"
	}
	s.refused = false
	keep := s.prompts[:0]
	for _, p := range s.prompts {
		if p.turnID == id {
			p.result <- turnResult{status: status, reason: reason}
			if p.answered != nil {
				answered = append(answered, p.answered)
			}
			continue
		}
		keep = append(keep, p)
	}
	s.prompts = keep
	s.question = ""
	return answered
}

// answeredWait waits until each answer is written, at most answerWait in all.
func answeredWait(answered []chan struct{}) {
	if len(answered) == 0 {
		return
	}
	deadline := time.After(answerWait)
	for _, ch := range answered {
		select {
		case <-ch:
		case <-deadline:
			return
		}
	}
}

// answerWait bounds how long the session's updates wait for a prompt's
// answer to be written.
const answerWait = 5 * time.Second

func (s *session) removePrompt(p *pendingPrompt) {
	keep := s.prompts[:0]
	for _, q := range s.prompts {
		if q != p {
			keep = append(keep, q)
		}
	}
	s.prompts = keep
}

func (s *session) failAll(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.prompts {
		p.result <- turnResult{err: err}
	}
	s.prompts = nil
}

// cancelTurn stops the running turn and drops this connection's queued
// prompts (they answer cancelled); other clients' queued input stays.
func (s *session) cancelTurn(ctx context.Context) error {
	s.mu.Lock()
	var queued []*pendingPrompt
	running := false
	for _, p := range s.prompts {
		if p.turnID == "" && p.queueItemID != "" {
			queued = append(queued, p)
		} else {
			running = true
		}
	}
	for _, t := range s.turns {
		if !t.finished {
			running = true
		}
	}
	s.mu.Unlock()
	for _, p := range queued {
		_, err := client.DeleteQueuedMessage(ctx, s.a.k, s.id, p.queueItemID)
		s.mu.Lock()
		if err == nil && p.turnID == "" {
			s.removePrompt(p)
			p.result <- turnResult{status: "cancelled"}
		}
		s.mu.Unlock()
	}
	if !running {
		return nil
	}
	if _, err := client.StopTurn(ctx, s.a.k, s.id); err != nil {
		var ce codedError
		if errors.As(err, &ce) && ce.GraphQLCode() == "CONFLICT" {
			return nil // nothing was running
		}
		return kernelError(err)
	}
	return nil
}

// input turns prompt content blocks into the message text and attachments.
func (s *session) input(ctx context.Context, blocks []json.RawMessage) (string, []string, error) {
	return promptReader{s.a.k}.input(ctx, blocks)
}
