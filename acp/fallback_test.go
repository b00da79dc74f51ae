package acp

import (
	"encoding/json"
	"testing"
)

func TestFallbackNotice(t *testing.T) {
	got := fallbackNotice(json.RawMessage(`{"from":{"connectionId":"conn_a","model":"gpt-t"},"to":{"connectionId":"conn_b","model":"gpt-backup"},"reason":"model_not_found","attempt":1}`))
	if got != "\n\n_Model gpt-t failed (model not found); answering with fallback gpt-backup._\n\n" {
		t.Fatalf("notice %q", got)
	}
	if fallbackNotice(json.RawMessage(`not json`)) != "" {
		t.Fatal("notice for garbage")
	}
}
