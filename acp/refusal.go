package acp

// noteRefusal records whether an assistant reply is a refusal, so that the
// prompt's turn ends with stopReason "refusal", and shows the service's
// explanation of it, when it gave one, as agent text.
func (s *session) noteRefusal(m gqlMessage) {
	if lower(m.Role) != "assistant" {
		return
	}
	refused := m.FinishReason != nil && *m.FinishReason == "refusal"
	s.mu.Lock()
	s.refused = refused
	s.mu.Unlock()
	if refused && m.Refusal != nil && *m.Refusal != "" {
		s.update(map[string]any{"sessionUpdate": "agent_message_chunk", "content": textBlock("\n\n**Refused:** " + *m.Refusal + "\n")})
	}
}
