package acp

import (
	"testing"

	"github.com/foya-dev/foya/client"
)

func TestGuardianLineAndMode(t *testing.T) {
	got := guardianLine(client.GuardianVerdictFields{ToolCallId: "c1", Tool: "bash", Verdict: "deny", Reason: "deletes /", Cause: "verdict", Model: "gpt-mini"})
	if got != "guardian: deny by gpt-mini: deletes /" {
		t.Fatalf("line %q", got)
	}
	if got := guardianLine(client.GuardianVerdictFields{Verdict: "escalate", Cause: "cap", Reason: "limit"}); got != "guardian: escalate (cap): limit" {
		t.Fatalf("line %q", got)
	}
	if modeOf("GUARDED", "EXECUTE") != "guarded" {
		t.Fatal("mode of a GUARDED session")
	}
	found := false
	for _, m := range modes {
		found = found || m.ID == "guarded"
	}
	if !found {
		t.Fatal("guarded is not an ACP mode")
	}
}
