package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/session"
)

func TestProviderViewHandsStateBackOnItsRouteOnly(t *testing.T) {
	msgs := []core.Message{
		{Seq: 1, Role: core.RoleUser, Text: "hi"},
		{Seq: 2, Role: core.RoleAssistant, Text: "hello", ProviderState: &core.ProviderState{Route: "rt_a", Data: []byte("signed")}},
		{Seq: 3, Role: core.RoleUser, Text: "again"},
	}
	for route, want := range map[string]string{"rt_a": "signed", "rt_b": "", "": ""} {
		view, err := session.ProviderView(msgs, session.ViewOptions{Route: route})
		if err != nil {
			t.Fatal(err)
		}
		if string(view[1].State) != want {
			t.Errorf("route %q: state %q, want %q", route, view[1].State, want)
		}
	}
	view, _ := session.ProviderView(msgs, session.ViewOptions{Route: "rt_a"})
	view[1].State[0] = 'X'
	if string(msgs[1].ProviderState.Data) != "signed" {
		t.Fatal("the view shares memory with history")
	}
}

func TestClientPayloadHidesProviderState(t *testing.T) {
	ev, err := core.NewEvent("ses_1", core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: core.RoleAssistant, Text: "hi", Reasoning: "thought",
		ProviderState: &core.ProviderState{Route: "rt_a", Data: []byte("SIGNATURE")}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ev.Payload), "providerState") {
		t.Fatal("state not persisted in the payload")
	}
	out := core.ClientPayload(&ev)
	var p core.MessagePayload
	if err := json.Unmarshal(out, &p); err != nil || p.Message.ProviderState != nil || p.Message.Text != "hi" || p.Message.Reasoning != "thought" {
		t.Fatalf("client payload %s (%v)", out, err)
	}
	cp, _ := core.NewEvent("ses_1", core.EventCompactionCheckpoint, core.CheckpointPayload{Summary: "s", Native: true, ProviderState: &core.ProviderState{Route: "rt_a", Data: []byte("ENC")}})
	if out := core.ClientPayload(&cp); strings.Contains(string(out), "providerState") || !strings.Contains(string(out), `"native":true`) {
		t.Fatalf("checkpoint payload %s", out)
	}
	plain, _ := core.NewEvent("ses_1", core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: core.RoleUser, Text: "hi"}})
	if string(core.ClientPayload(&plain)) != string(plain.Payload) {
		t.Fatal("payloads without state must pass unchanged")
	}
}
