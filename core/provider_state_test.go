package core

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestProviderViewHandsStateBackOnItsRouteOnly(t *testing.T) {
	msgs := []Message{
		{Seq: 1, Role: RoleUser, Text: "hi"},
		{Seq: 2, Role: RoleAssistant, Text: "hello", ProviderState: &ProviderState{Route: "rt_a", Data: []byte("signed")}},
		{Seq: 3, Role: RoleUser, Text: "again"},
	}
	for route, want := range map[string]string{"rt_a": "signed", "rt_b": "", "": ""} {
		view, err := ProviderView(msgs, ViewOptions{Route: route})
		if err != nil {
			t.Fatal(err)
		}
		if string(view[1].State) != want {
			t.Errorf("route %q: state %q, want %q", route, view[1].State, want)
		}
	}
	view, _ := ProviderView(msgs, ViewOptions{Route: "rt_a"})
	view[1].State[0] = 'X'
	if string(msgs[1].ProviderState.Data) != "signed" {
		t.Fatal("the view shares memory with history")
	}
}

func TestClientPayloadHidesProviderState(t *testing.T) {
	ev, err := NewEvent("ses_1", EventMessageEnd, MessagePayload{Message: Message{Role: RoleAssistant, Text: "hi", Reasoning: "thought",
		ProviderState: &ProviderState{Route: "rt_a", Data: []byte("SIGNATURE")}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ev.Payload), "providerState") {
		t.Fatal("state not persisted in the payload")
	}
	out := ClientPayload(&ev)
	var p MessagePayload
	if err := json.Unmarshal(out, &p); err != nil || p.Message.ProviderState != nil || p.Message.Text != "hi" || p.Message.Reasoning != "thought" {
		t.Fatalf("client payload %s (%v)", out, err)
	}
	cp, _ := NewEvent("ses_1", EventCompactionCheckpoint, CheckpointPayload{Summary: "s", Native: true, ProviderState: &ProviderState{Route: "rt_a", Data: []byte("ENC")}})
	if out := ClientPayload(&cp); strings.Contains(string(out), "providerState") || !strings.Contains(string(out), `"native":true`) {
		t.Fatalf("checkpoint payload %s", out)
	}
	plain, _ := NewEvent("ses_1", EventMessageEnd, MessagePayload{Message: Message{Role: RoleUser, Text: "hi"}})
	if string(ClientPayload(&plain)) != string(plain.Payload) {
		t.Fatal("payloads without state must pass unchanged")
	}
}
