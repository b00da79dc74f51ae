package core

import (
	"bytes"
	"encoding/json"
	"slices"
)

// ProviderState is provider-native context state (PRV-6, PRV-10): opaque
// bytes a provider returned with a reply or a native compaction, keyed by
// the route that produced them. The kernel stores it and hands it back only
// to requests on the same route; a route change, a rewind past the message
// or a fork before it simply leaves it unused.
type ProviderState struct {
	Route string `json:"route"`
	Data  []byte `json:"data"`
}

// StateFor returns a copy of the state's bytes when it belongs to route.
func (s *ProviderState) StateFor(route string) []byte {
	if s == nil || route == "" || s.Route != route || len(s.Data) == 0 {
		return nil
	}
	return slices.Clone(s.Data)
}

// ClientPayload is an event payload as clients may see it: provider-native
// state (signed thinking, encrypted reasoning, native checkpoints) is
// removed from message and checkpoint payloads. Other payloads are returned
// unchanged.
func ClientPayload(ev *Event) json.RawMessage {
	switch ev.Type {
	case EventMessageEnd, EventMessageImported:
		if !bytes.Contains(ev.Payload, []byte(`"providerState"`)) {
			return ev.Payload
		}
		var p MessagePayload
		if json.Unmarshal(ev.Payload, &p) != nil {
			return ev.Payload
		}
		p.Message.ProviderState = nil
		out, err := json.Marshal(p)
		if err != nil {
			return ev.Payload
		}
		return out
	case EventCompactionCheckpoint:
		if !bytes.Contains(ev.Payload, []byte(`"providerState"`)) {
			return ev.Payload
		}
		var p map[string]json.RawMessage
		if json.Unmarshal(ev.Payload, &p) != nil {
			return ev.Payload
		}
		delete(p, "providerState")
		out, err := json.Marshal(p)
		if err != nil {
			return ev.Payload
		}
		return out
	}
	return ev.PayloadJSON()
}
