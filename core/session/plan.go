package session

import (
	"context"
	"github.com/foya-dev/foya/core"
	"slices"
)

// swapAgentMode sets a session's agent mode to to when it is one of from,
// atomically; ok is false (and nothing is written) otherwise.
func (s *Service) SwapAgentMode(ctx context.Context, id string, from []core.AgentMode, to core.AgentMode) (cur core.AgentMode, ok bool, err error) {
	defer s.Lock(id)()
	sess, err := s.store.Session(ctx, id)
	if err != nil {
		return "", false, err
	}
	if !slices.Contains(from, sess.AgentMode) {
		return sess.AgentMode, false, nil
	}
	meta := sess.SessionMeta
	meta.AgentMode = to
	if err := s.CommitMeta(ctx, meta, []string{"agentMode"}); err != nil {
		return sess.AgentMode, false, err
	}
	return to, true, nil
}
