package acp

import "strings"

// noteRefusal records whether an assistant reply is a refusal, so that the
// prompt's turn ends with stopReason "refusal", and shows the service's
// explanation of it, when it gave one, as agent text.
func (s *session) noteRefusal(m gqlMessage) {
	if strings.ToLower(m.Role) != "assistant" {
		return
	}
	refused := m.FinishReason != nil && *m.FinishReason == "refusal"
	s.mu.Lock()
	s.refused = refused
	s.mu.Unlock()
	if refused && m.Refusal != nil && *m.Refusal != "" {
		s.chunk("agent_message_chunk", textBlock("\n\n**Refused:** "+*m.Refusal+"\n"))
	}
}
